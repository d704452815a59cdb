import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { DEV_WEBHOOK_SECRET_KEYS } from '../../src/lib/secret-box';

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('configuration', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-config-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('starts on embedded defaults with no environment, generating secrets once under DATA_DIR', () => {
    const a = loadConfig({ DATA_DIR: dataDir });
    assert.equal(a.PORT, 3000);
    assert.equal(a.DATABASE_URL, undefined);
    assert.equal(a.TEMPORAL_NAMESPACE, 'default');
    assert.equal(a.DEFAULT_FEE_BPS, 99);
    assert.deepEqual(a.generatedSecrets.sort(), ['ACQUIRER_CALLBACK_SECRET', 'API_KEY_PEPPER', 'JWT_SECRET']);
    const b = loadConfig({ DATA_DIR: dataDir });
    assert.equal(b.JWT_SECRET, a.JWT_SECRET, 'generated secrets survive a restart');
    const mode = fs.statSync(path.join(dataDir, 'secrets.json')).mode & 0o777;
    assert.equal(mode, 0o600);
  });

  it('keeps the service to fewer threads by default: QR on the main thread, charge workflow client on the main thread', () => {
    // docs/performance.md "Memory": each thread's isolate costs resident memory.
    const c = loadConfig({ DATA_DIR: dataDir });
    assert.equal(c.QR_THREADS, 1);
    assert.equal(c.TEMPORAL_CLIENT_THREAD, false);
    const d = loadConfig({ DATA_DIR: dataDir, QR_THREADS: '2', TEMPORAL_CLIENT_THREAD: 'true' });
    assert.equal(d.QR_THREADS, 2);
    assert.equal(d.TEMPORAL_CLIENT_THREAD, true);
    assert.ok(problems({ DATA_DIR: dataDir, QR_THREADS: '-1' }).some((l) => l.startsWith('QR_THREADS:')));
  });

  it('names every bad value, one line each', () => {
    const p = problems({
      DATA_DIR: dataDir,
      PORT: 'abc',
      JWT_TTL: '5',
      DATABASE_URL: 'mysql://x',
      TEMPORAL_ADDRESS: 'nohost',
      LOG_LEVEL: 'loud',
    });
    assert.equal(p.length, 5);
    assert.ok(p.some((l) => l.startsWith('PORT:')));
    assert.ok(p.some((l) => l.startsWith('JWT_TTL:')));
    assert.ok(p.some((l) => l.startsWith('DATABASE_URL:')));
    assert.ok(p.some((l) => l.startsWith('TEMPORAL_ADDRESS:')));
    assert.ok(p.some((l) => l.startsWith('LOG_LEVEL:')));
  });

  it("takes fixed ports for npm start's Temporal dev server and its UI, 0 (a free one) by default", () => {
    const c = loadConfig({ DATA_DIR: dataDir });
    assert.deepEqual([c.TEMPORAL_LOCAL_PORT, c.TEMPORAL_UI_PORT, c.TEMPORAL_UI], [0, 0, 'on']);
    const d = loadConfig({
      DATA_DIR: dataDir,
      TEMPORAL_LOCAL_PORT: '7233',
      TEMPORAL_UI_PORT: '8233',
      TEMPORAL_UI: 'off',
    });
    assert.deepEqual([d.TEMPORAL_LOCAL_PORT, d.TEMPORAL_UI_PORT, d.TEMPORAL_UI], [7233, 8233, 'off']);
    const p = problems({ DATA_DIR: dataDir, TEMPORAL_LOCAL_PORT: '70000', TEMPORAL_UI_PORT: 'ui' });
    assert.ok(p.some((l) => l.startsWith('TEMPORAL_LOCAL_PORT:')));
    assert.ok(p.some((l) => l.startsWith('TEMPORAL_UI_PORT:')));
  });

  it('requires secrets and real services in production', () => {
    const p = problems({ DATA_DIR: dataDir, NODE_ENV: 'production' });
    for (const name of [
      'JWT_SECRET',
      'API_KEY_PEPPER',
      'ACQUIRER_CALLBACK_SECRET',
      'DATABASE_URL',
      'TEMPORAL_ADDRESS',
      'ACQUIRER_URL',
      'WEBHOOK_SECRET_KEYS',
      'METRICS_TOKEN',
    ]) {
      assert.ok(
        p.some((l) => l.startsWith(`${name}:`)),
        `${name} should be required`,
      );
    }
    assert.equal(fs.existsSync(path.join(dataDir, 'secrets.json')), false, 'nothing generated in production');
  });

  it('wants both or neither of ADMIN_EMAIL and ADMIN_PASSWORD', () => {
    assert.equal(problems({ DATA_DIR: dataDir, ADMIN_EMAIL: 'a@b.c' }).length, 1);
    assert.deepEqual(problems({ DATA_DIR: dataDir, ADMIN_EMAIL: 'a@b.c', ADMIN_PASSWORD: 'long-enough-1' }), []);
  });
  it('takes the acquirer simulator in production only when chosen explicitly (ACQUIRER_SANDBOX)', () => {
    const services = {
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://u:p@postgres:5432/pixflow',
      TEMPORAL_ADDRESS: 'temporal:7233',
      ACQUIRER_URL: 'http://acquirer-simulator:8090',
      JWT_SECRET: 'sandbox-only-jwt-secret-0123456789abcdef',
      API_KEY_PEPPER: 'sandbox-only-pepper',
      ACQUIRER_CALLBACK_SECRET: 'sandbox-only-callback-secret',
      WEBHOOK_SECRET_KEYS: `sandbox-only:${Buffer.alloc(32, 3).toString('base64')}`,
      METRICS_TOKEN: 'metrics-token',
    };
    const real = problems(services);
    assert.ok(real.some((l) => l.startsWith('ACQUIRER_CLIENT_ID:')));
    assert.ok(real.some((l) => l.startsWith('ACQUIRER_CLIENT_SECRET:')));
    assert.ok(
      real.some((l) => l.startsWith('JWT_SECRET:') && /sandbox default/.test(l)),
      'sandbox secrets never guard a real acquirer',
    );
    assert.ok(real.some((l) => l.startsWith('WEBHOOK_SECRET_KEYS:') && /sandbox default/.test(l)));
    const sandbox = loadConfig({ ...services, ACQUIRER_SANDBOX: 'true' });
    assert.equal(sandbox.ACQUIRER_SANDBOX, true);
    const mixed = problems({ ...services, ACQUIRER_SANDBOX: 'true', ACQUIRER_CLIENT_ID: 'real-client' });
    assert.ok(
      mixed.some((l) => l.startsWith('ACQUIRER_SANDBOX:')),
      'real credentials with the sandbox flag are refused',
    );
  });

  it('checks WEBHOOK_SECRET_KEYS: <id>:<base64 of 32 bytes>, ids unique; the embedded dev key never in production', () => {
    const key = (b: number): string => Buffer.alloc(32, b).toString('base64');
    assert.deepEqual(problems({ DATA_DIR: dataDir, WEBHOOK_SECRET_KEYS: `k2:${key(2)}, k1:${key(1)}` }), []);
    for (const bad of ['nocolon', `k1:${Buffer.alloc(16).toString('base64')}`, `k1:${key(1)},k1:${key(2)}`, 'k 1:abc'])
      assert.ok(
        problems({ DATA_DIR: dataDir, WEBHOOK_SECRET_KEYS: bad }).some((l) => l.startsWith('WEBHOOK_SECRET_KEYS:')),
        bad,
      );
    const production = problems({
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      WEBHOOK_SECRET_KEYS: DEV_WEBHOOK_SECRET_KEYS,
    });
    assert.ok(production.some((l) => l.startsWith('WEBHOOK_SECRET_KEYS:') && /development key/.test(l)));
    assert.equal(loadConfig({ DATA_DIR: dataDir }).WEBHOOK_SECRET_OVERLAP_SECONDS, 86400);
  });

  it('keeps the Temporal SDK at WARN unless asked, and checks the metrics settings', () => {
    assert.equal(loadConfig({ DATA_DIR: dataDir }).TEMPORAL_LOG_LEVEL, 'WARN');
    assert.equal(loadConfig({ DATA_DIR: dataDir, TEMPORAL_LOG_LEVEL: 'info' }).TEMPORAL_LOG_LEVEL, 'INFO');
    const p = problems({
      DATA_DIR: dataDir,
      TEMPORAL_LOG_LEVEL: 'loud',
      TEMPORAL_METRICS_ADDRESS: 'nope',
      METRICS_PORT: 'x',
    });
    assert.deepEqual(p.map((l) => l.split(':')[0]).sort(), [
      'METRICS_PORT',
      'TEMPORAL_LOG_LEVEL',
      'TEMPORAL_METRICS_ADDRESS',
    ]);
  });

  it('reads a setting from <NAME>_FILE (a mounted secret), refusing both or an unreadable file', () => {
    const file = path.join(dataDir, 'admin-password');
    fs.writeFileSync(file, 'password-from-a-file\n');
    const config = loadConfig({ DATA_DIR: dataDir, ADMIN_EMAIL: 'a@b.c', ADMIN_PASSWORD_FILE: file });
    assert.equal(config.ADMIN_PASSWORD, 'password-from-a-file');
    assert.deepEqual(
      problems({ DATA_DIR: dataDir, ADMIN_EMAIL: 'a@b.c', ADMIN_PASSWORD: 'x'.repeat(10), ADMIN_PASSWORD_FILE: file }),
      ['ADMIN_PASSWORD and ADMIN_PASSWORD_FILE: set one or the other'],
    );
    const missing = problems({ DATA_DIR: dataDir, METRICS_TOKEN_FILE: path.join(dataDir, 'absent') });
    assert.equal(missing.length, 1);
    assert.match(missing[0] ?? '', /^METRICS_TOKEN_FILE: cannot read .*absent \(ENOENT\)$/);
  });
});
