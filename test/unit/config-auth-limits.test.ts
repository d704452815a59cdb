import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';

describe('configuration: auth hardening and rate limits', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-config-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('has the documented defaults', () => {
    const c = loadConfig({ DATA_DIR: dataDir });
    assert.deepEqual(
      [c.RATE_LIMIT_RPS, c.RATE_LIMIT_BURST, c.RATE_LIMIT_ADDRESS_RPS, c.RATE_LIMIT_ADDRESS_BURST],
      [100, 200, 1000, 2000],
    );
    assert.deepEqual([c.AUTH_FAILURES_PER_ADDRESS, c.AUTH_FAILURE_WINDOW_SECONDS], [20, 60]);
    assert.deepEqual(
      [c.LOGIN_MAX_FAILURES_PER_ACCOUNT, c.LOGIN_MAX_FAILURES_PER_ADDRESS, c.LOGIN_WINDOW_SECONDS],
      [10, 50, 900],
    );
    assert.deepEqual([c.PASSWORD_HASH_CONCURRENCY, c.PASSWORD_HASH_QUEUE], [2, 32]);
    assert.equal(c.TRUST_PROXY, false);
  });

  it('reads overrides and names bad values', () => {
    const c = loadConfig({
      DATA_DIR: dataDir,
      TRUST_PROXY: 'true',
      LOGIN_WINDOW_SECONDS: '5',
      PASSWORD_HASH_QUEUE: '0',
    });
    assert.equal(c.TRUST_PROXY, true);
    assert.equal(c.LOGIN_WINDOW_SECONDS, 5);
    assert.equal(c.PASSWORD_HASH_QUEUE, 0);
    assert.throws(
      () =>
        loadConfig({
          DATA_DIR: dataDir,
          TRUST_PROXY: 'yes',
          PASSWORD_HASH_CONCURRENCY: '0',
          LOGIN_WINDOW_SECONDS: '0',
        }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 3 &&
        ['TRUST_PROXY', 'PASSWORD_HASH_CONCURRENCY', 'LOGIN_WINDOW_SECONDS'].every((n) =>
          err.problems.some((p) => p.startsWith(`${n}:`)),
        ),
    );
  });
});
