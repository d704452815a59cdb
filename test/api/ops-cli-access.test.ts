/**
 * The ops CLI's login controls (docs/api.md "Auth hardening"): revoking a user's or a merchant's tokens
 * and disabling a user take effect on the API's next request, and are audited as "cli".
 */
import assert from 'node:assert/strict';
import { getTestDb } from '../support/db';
import { runOps, type CliResult } from '../support/ops-cli';
import { startApi, type ErrorBody, type LoginBody, type TestApi } from '../support/api';

describe('ops CLI: users and token revocation', function () {
  // Each command is a fresh tsx process: allow for its start-up on a busy machine.
  this.timeout(120_000);
  let api: TestApi;
  let databaseUrl: string;

  before(async () => {
    databaseUrl = (await getTestDb()).url;
    api = await startApi();
  });
  after(() => api?.close());

  const ops = (...args: string[]): Promise<CliResult> => runOps(databaseUrl, ...args);

  it('lists a merchant\'s users, revokes their tokens (old JWT → 401), disables and re-enables a user; audited as "cli"', async () => {
    const m = await api.createMerchant();

    const listed = await ops('users', 'list', m.merchantId);
    assert.equal(listed.code, 0, listed.stderr);
    const { users } = JSON.parse(listed.stdout) as {
      users: Array<{ id: string; status: string; tokenVersion: number }>;
    };
    assert.deepEqual(
      users.map((u) => [u.id, u.status, u.tokenVersion]),
      [[m.userId, 'ACTIVE', 0]],
    );

    const revoked = await ops('users', 'revoke-tokens', m.userId);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((JSON.parse(revoked.stdout) as { user: { tokenVersion: number } }).user.tokenVersion, 1);
    assert.equal((await api.request('GET', '/v1/api-keys', { token: m.token })).status, 401);

    const fresh = await api.request<LoginBody>('POST', '/v1/auth/login', {
      body: { email: m.email, password: m.password },
    });
    assert.equal(fresh.status, 200);
    const all = await ops('merchants', 'revoke-tokens', m.merchantId);
    assert.equal(all.code, 0, all.stderr);
    assert.equal((await api.request('GET', '/v1/api-keys', { token: fresh.body.token })).status, 401);

    const disabled = await ops('users', 'set-status', m.userId, 'DISABLED');
    assert.equal(disabled.code, 0, disabled.stderr);
    const login = await api.request<ErrorBody>('POST', '/v1/auth/login', {
      body: { email: m.email, password: m.password },
    });
    assert.equal(login.status, 403);
    assert.match(login.body.message, /disabled/);
    const bad = await ops('users', 'set-status', m.userId, 'SLEEPING');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /status/);
    assert.equal((await ops('users', 'set-status', m.userId, 'ACTIVE')).code, 0);
    assert.equal(
      (await api.request('POST', '/v1/auth/login', { body: { email: m.email, password: m.password } })).status,
      200,
    );

    const audit = await ops('audit-log', '--target-type', 'user', '--target-id', m.userId);
    const { entries } = JSON.parse(audit.stdout) as { entries: Array<{ action: string; actorEmail: string }> };
    assert.deepEqual(
      entries.map((e) => e.action),
      ['user.update', 'user.update', 'user.revoke_tokens'],
    );
    assert.ok(entries.every((e) => e.actorEmail === 'cli'));
  });
});
