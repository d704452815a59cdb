/**
 * Credentials are read through a per-process cache (docs/performance.md "Where a charge's time goes"): a warm
 * cache answers without a query, and still a deleted key, a suspended merchant or a revoked token
 * is refused on the very next request — by this process and by another one on the same database.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import readline from 'node:readline';
import { createKnex } from '../../src/db';
import { createApiKeysService } from '../../src/services/accounts/api-keys';
import { cacheInvalidation, stopCacheInvalidation } from '../../src/services/platform/cache-invalidation';
import { startApi, type MerchantFixture, type TestApi } from '../support/api';
import { getTestDb } from '../support/db';

const ROOT = path.resolve(__dirname, '../..');

/** A second API process on the test database; resolves with its base URL. */
async function startOtherProcess(dbUrl: string): Promise<{ baseUrl: string; child: ChildProcessWithoutNullStreams }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/support/api-instance.ts'), dbUrl], {
    cwd: ROOT,
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`api instance exited (${code}): ${stderr}`)));
  });
  const { port } = JSON.parse(line) as { port: number };
  return { baseUrl: `http://127.0.0.1:${port}`, child };
}

async function getStatus(baseUrl: string, pathName: string, token: string): Promise<number> {
  const res = await fetch(baseUrl + pathName, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

/** Polls until the process's cache listener is in effect (it starts with the first use). */
async function untilLive(isLive: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!isLive()) {
    if (Date.now() > deadline) throw new Error('cache listener never came up');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Warm requests until the other process answers 200 three times in a row (its listener is up and the entry cached). */
async function warm(baseUrl: string, token: string, pathName = '/v1/merchants/me'): Promise<void> {
  let ok = 0;
  const deadline = Date.now() + 10_000;
  while (ok < 3) {
    if (Date.now() > deadline) throw new Error('never warmed');
    ok = (await getStatus(baseUrl, pathName, token)) === 200 ? ok + 1 : 0;
  }
}

describe('API: credential cache', () => {
  let api: TestApi;
  let other: { baseUrl: string; child: ChildProcessWithoutNullStreams };
  let dbUrl: string;

  before(async () => {
    api = await startApi();
    dbUrl = (await getTestDb()).url;
    other = await startOtherProcess(dbUrl);
  });
  after(async () => {
    other?.child.stdin.end();
    other?.child.kill();
    await api?.close();
  });

  it('a warm cache authenticates an API key without a query', async () => {
    const m = await api.createMerchant();
    const key = await api.createApiKey(m.token);
    const knex = createKnex(dbUrl, 2);
    try {
      const keys = createApiKeysService({ knex, config: api.config });
      await untilLive(() => cacheInvalidation(knex).live());
      const queries: string[] = [];
      knex.on('query', (q: { sql: string }) => void queries.push(q.sql));
      assert.equal((await keys.authenticate(key.value))?.merchantId, m.merchantId);
      const afterFirst = queries.length;
      assert.ok(afterFirst >= 1, 'the first request reads the key');
      for (let i = 0; i < 5; i++) assert.equal((await keys.authenticate(key.value))?.merchantId, m.merchantId);
      assert.equal(queries.length, afterFirst, 'warm requests cost no query');
    } finally {
      await stopCacheInvalidation(knex);
      await knex.destroy();
    }
  });

  it('a deleted API key is refused on the next request while the cache is warm, in this process and in another', async () => {
    const m = await api.createMerchant();
    const key = await api.createApiKey(m.token);
    await warm(api.baseUrl, key.value);
    await warm(other.baseUrl, key.value);

    const deleted = await api.request('DELETE', `/v1/api-keys/${key.id}`, { token: m.token });
    assert.equal(deleted.status, 200);
    assert.equal(await getStatus(other.baseUrl, '/v1/merchants/me', key.value), 401);
    assert.equal(await getStatus(api.baseUrl, '/v1/merchants/me', key.value), 401);
  });

  it('a key deleted through the other process is refused here on the next request', async () => {
    const m = await api.createMerchant();
    const key = await api.createApiKey(m.token);
    await warm(api.baseUrl, key.value);
    await warm(other.baseUrl, key.value);
    const res = await fetch(`${other.baseUrl}/v1/api-keys/${key.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${m.token}` },
    });
    assert.equal(res.status, 200);
    assert.equal(await getStatus(api.baseUrl, '/v1/merchants/me', key.value), 401);
  });

  it('suspending a merchant refuses its warm API key (403) and revoking tokens refuses its warm JWT (401), in both processes', async () => {
    const m: MerchantFixture = await api.createMerchant();
    const key = await api.createApiKey(m.token);
    await Promise.all([
      warm(api.baseUrl, key.value),
      warm(other.baseUrl, key.value),
      warm(api.baseUrl, m.token),
      warm(other.baseUrl, m.token),
    ]);

    const revoked = await api.request('POST', `/v1/admin/users/${m.userId}/revoke-tokens`, {
      token: await api.adminToken(),
    });
    assert.equal(revoked.status, 200);
    assert.equal(await getStatus(other.baseUrl, '/v1/merchants/me', m.token), 401);
    assert.equal(await getStatus(api.baseUrl, '/v1/merchants/me', m.token), 401);

    const suspended = await api.request('PATCH', `/v1/admin/merchants/${m.merchantId}`, {
      token: await api.adminToken(),
      body: { status: 'SUSPENDED' },
    });
    assert.equal(suspended.status, 200);
    assert.equal(await getStatus(other.baseUrl, '/v1/merchants/me', key.value), 403);
    assert.equal(await getStatus(api.baseUrl, '/v1/merchants/me', key.value), 403);
  });

  it('a change made straight in the database (ops CLI, psql) reaches a warm cache', async () => {
    const m = await api.createMerchant();
    const key = await api.createApiKey(m.token);
    await warm(other.baseUrl, key.value);
    await api.knex('api_keys').where({ id: key.id }).delete();
    // No request of ours waited for the notification here: poll, bounded, for the refusal.
    const deadline = Date.now() + 5_000;
    while ((await getStatus(other.baseUrl, '/v1/merchants/me', key.value)) !== 401) {
      if (Date.now() > deadline) throw new Error('the warm cache never learned of the deletion');
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  it("the cached merchant profile shows an operator's change on the next request, in this process and in another", async () => {
    const m = await api.createMerchant();
    const key = await api.createApiKey(m.token);
    await warm(api.baseUrl, key.value);
    await warm(other.baseUrl, key.value);
    const profileOf = async (baseUrl: string) =>
      (
        (await (
          await fetch(`${baseUrl}/v1/merchants/me`, { headers: { authorization: `Bearer ${key.value}` } })
        ).json()) as { merchant: { feeBps: number } }
      ).merchant;
    const patched = await api.request('PATCH', `/v1/admin/merchants/${m.merchantId}`, {
      token: await api.adminToken(),
      body: { feeBps: 123 },
    });
    assert.equal(patched.status, 200);
    assert.equal((await profileOf(other.baseUrl)).feeBps, 123);
    assert.equal((await profileOf(api.baseUrl)).feeBps, 123);
    // Changed straight in the database (no marker of ours follows it): the trigger's notification
    // alone must reach the warm caches. Poll, bounded.
    await api.knex('merchants').where({ id: m.merchantId }).update({ fee_bps: 77 });
    const deadline = Date.now() + 5_000;
    while ((await profileOf(other.baseUrl)).feeBps !== 77 || (await profileOf(api.baseUrl)).feeBps !== 77) {
      if (Date.now() > deadline) throw new Error('the warm profile cache never learned of the change');
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  it('a writer waits until every listening process has acknowledged its marker (a silent listener holds it to the timeout)', async () => {
    const knex = createKnex(dbUrl, 2);
    const silent = new pg.Client({ connectionString: dbUrl });
    try {
      const inv = cacheInvalidation(knex);
      await untilLive(() => inv.live());
      // Every live listener (this process's test APIs, the other process) acknowledges: true.
      assert.equal(await inv.barrier(5_000), true);
      // A listener that is seen (named as listeners are) but never answers: the writer cannot know
      // its caches are clean, so it waits for it until the timeout and says so.
      await silent.connect();
      await silent.query('LISTEN pixflow_cache');
      await silent.query("select set_config('application_name', 'pixflow-cache:silent-test-listener', false)");
      assert.equal(await inv.barrier(300), false);
      await silent.end();
      // Its backend leaves pg_stat_activity as it exits.
      for (;;) {
        const { rows } = (await knex.raw(
          "select count(*)::int as n from pg_stat_activity where application_name = 'pixflow-cache:silent-test-listener'",
        )) as { rows: Array<{ n: number }> };
        if (rows[0]?.n === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(await inv.barrier(5_000), true, 'once it is gone, the others suffice again');
    } finally {
      await silent.end().catch(() => undefined);
      await stopCacheInvalidation(knex);
      await knex.destroy();
    }
  });
});
