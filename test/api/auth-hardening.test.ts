/**
 * Auth hardening (docs/api.md "Auth hardening", "Rate limits"): login limits per account and per
 * address, suspension and disabled users refused at once, revocable JWTs, rate limits shared by
 * API processes through PostgreSQL, and failed authentications throttled before any lookup.
 *
 * Apps that need distinct client addresses run with TRUST_PROXY, so the address the limiters key
 * on is the X-Forwarded-For entry the test sends (as a trusted proxy would); addresses are random
 * per test because every suite shares one rate_limits table.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Knex } from 'knex';
import {
  startApi,
  uniqueEmail,
  type ErrorBody,
  type LoginBody,
  type MerchantFixture,
  type TestApi,
} from '../support/api';
import { assertErrorBody } from '../support/errors';

const randomAddress = (): string => `10.${crypto.randomInt(256)}.${crypto.randomInt(256)}.${crypto.randomInt(1, 255)}`;
const from = (address: string): Record<string, string> => ({ 'x-forwarded-for': address });

/** Polls `probe` until it returns true, at most `timeoutMs`. */
async function eventually(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function assertLimited(res: { status: number; headers: Headers; body: ErrorBody }, message: RegExp): void {
  assert.equal(res.status, 429, JSON.stringify(res.body));
  assertErrorBody(res.body);
  assert.match(res.body.message, message);
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${res.headers.get('retry-after')}`);
}

describe('API: auth hardening', () => {
  let api: TestApi;
  let admin: string;

  before(async () => {
    api = await startApi({ config: { TRUST_PROXY: true } });
    admin = await api.adminToken();
  });
  after(() => api?.close());

  describe('login limits', () => {
    it('limits 50 wrong passwords for one account from 50 addresses; the right password is still 429 within the window, then works', async () => {
      const windowSeconds = 4;
      const limited = await startApi({
        config: { TRUST_PROXY: true, LOGIN_MAX_FAILURES_PER_ACCOUNT: 5, LOGIN_WINDOW_SECONDS: windowSeconds },
      });
      try {
        const m = await limited.createMerchant();
        const attempts = await Promise.all(
          Array.from({ length: 50 }, () =>
            limited.request<ErrorBody>('POST', '/v1/auth/login', {
              body: { email: m.email, password: 'wrong-password' },
              headers: from(randomAddress()),
            }),
          ),
        );
        const statuses = attempts.map((r) => r.status);
        assert.ok(
          statuses.every((s) => s === 401 || s === 429),
          JSON.stringify(statuses),
        );
        // Counted before the password is checked, so 50 parallel guesses get exactly 5 tries.
        assert.equal(statuses.filter((s) => s === 401).length, 5);
        const refused = attempts.find((r) => r.status === 429);
        assert.ok(refused);
        assertLimited(refused, /account/);

        // Right password, new address, same window: still limited.
        const right = { email: m.email.toUpperCase(), password: m.password };
        const during = await limited.request<ErrorBody>('POST', '/v1/auth/login', {
          body: right,
          headers: from(randomAddress()),
        });
        assertLimited(during, /account/);

        // Once the window has passed, the right password works (and clears the count).
        await eventually(
          async () =>
            (await limited.request('POST', '/v1/auth/login', { body: right, headers: from(randomAddress()) }))
              .status === 200,
          (windowSeconds + 10) * 1000,
          'login to work again after the window',
        );
        const again = await limited.request<LoginBody>('POST', '/v1/auth/login', {
          body: right,
          headers: from(randomAddress()),
        });
        assert.equal(again.status, 200);
        assert.equal(again.body.user.id, m.userId);
      } finally {
        await limited.close();
      }
    });

    it('limits failed logins per address across accounts, unknown e-mails included, and trusts only the last X-Forwarded-For entry', async () => {
      const limited = await startApi({
        config: { TRUST_PROXY: true, LOGIN_MAX_FAILURES_PER_ADDRESS: 4, LOGIN_WINDOW_SECONDS: 60 },
      });
      try {
        const m = await limited.createMerchant();
        const address = randomAddress();
        const statuses: number[] = [];
        let last: Awaited<ReturnType<typeof limited.request<ErrorBody>>> | undefined;
        for (let i = 0; i < 6; i++) {
          // The client-written left part changes every time; the proxy's entry (the last) does not.
          last = await limited.request<ErrorBody>('POST', '/v1/auth/login', {
            body: { email: uniqueEmail('nobody'), password: 'guess-123' },
            headers: from(`${randomAddress()}, ${address}`),
          });
          statuses.push(last.status);
        }
        assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
        assert.ok(last);
        assertLimited(last, /address/);
        // The real user from that address is refused too until the window ends; from elsewhere it works.
        const blocked = await limited.request<ErrorBody>('POST', '/v1/auth/login', {
          body: { email: m.email, password: m.password },
          headers: from(address),
        });
        assertLimited(blocked, /address/);
        const elsewhere = await limited.request('POST', '/v1/auth/login', {
          body: { email: m.email, password: m.password },
          headers: from(randomAddress()),
        });
        assert.equal(elsewhere.status, 200);
      } finally {
        await limited.close();
      }
    });

    it('bounds password hashing: beyond the concurrency and queue limits a login is 429, never queued without bound', async () => {
      const limited = await startApi({
        config: { TRUST_PROXY: true, PASSWORD_HASH_CONCURRENCY: 1, PASSWORD_HASH_QUEUE: 0 },
      });
      try {
        const results = await Promise.all(
          Array.from({ length: 30 }, () =>
            limited.request<ErrorBody>('POST', '/v1/auth/login', {
              body: { email: uniqueEmail('flood'), password: 'guess-123' },
              headers: from(randomAddress()),
            }),
          ),
        );
        const statuses = results.map((r) => r.status);
        assert.ok(
          statuses.every((s) => s === 401 || s === 429),
          JSON.stringify(statuses),
        );
        assert.ok(statuses.includes(401), 'some logins are verified');
        const busy = results.find((r) => r.status === 429);
        assert.ok(busy, `30 parallel logins with one hashing slot and no queue: ${JSON.stringify(statuses)}`);
        assertLimited(busy, /in progress/);
      } finally {
        await limited.close();
      }
    });
  });

  describe('suspension, disabled users and token revocation', () => {
    let m: MerchantFixture;
    let key: { id: string; value: string };

    beforeEach(async () => {
      m = await api.createMerchant();
      key = await api.createApiKey(m.token);
    });

    it('suspending a merchant refuses its API key and its user JWT with 403 on the next request, and at login; reactivating restores them', async () => {
      assert.equal((await api.request('GET', '/v1/merchants/me', { token: key.value })).status, 200);
      assert.equal((await api.request('GET', '/v1/api-keys', { token: m.token })).status, 200);

      const suspended = await api.request('PATCH', `/v1/admin/merchants/${m.merchantId}`, {
        token: admin,
        body: { status: 'SUSPENDED' },
      });
      assert.equal(suspended.status, 200);

      for (const [method, path, token] of [
        ['GET', '/v1/merchants/me', key.value],
        ['GET', '/v1/api-keys', m.token],
        ['GET', '/v1/merchants/me', m.token],
        ['POST', '/v1/api-keys', m.token],
        ['DELETE', `/v1/api-keys/${key.id}`, m.token],
      ] as const) {
        const res = await api.request<ErrorBody>(method, path, {
          token,
          body: method === 'POST' ? { name: 'x' } : undefined,
        });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.match(res.body.message, /suspended/);
      }
      const login = await api.request<ErrorBody>('POST', '/v1/auth/login', {
        body: { email: m.email, password: m.password },
      });
      assert.equal(login.status, 403);
      assert.match(login.body.message, /suspended/);

      await api.request('PATCH', `/v1/admin/merchants/${m.merchantId}`, { token: admin, body: { status: 'ACTIVE' } });
      assert.equal((await api.request('GET', '/v1/merchants/me', { token: key.value })).status, 200);
      assert.equal((await api.request('GET', '/v1/api-keys', { token: m.token })).status, 200);
      // The key survived the suspension (the DELETE above was refused).
      const keys = await api.request<{ apiKeys: Array<{ id: string }> }>('GET', '/v1/api-keys', { token: m.token });
      assert.deepEqual(
        keys.body.apiKeys.map((k) => k.id),
        [key.id],
      );
    });

    it('bumping the token version (admin API) makes an old JWT 401 while a new login works; audited', async () => {
      const oldToken = m.token;
      const revoked = await api.request<{ user: { id: string; tokenVersion: number } }>(
        'POST',
        `/v1/admin/users/${m.userId}/revoke-tokens`,
        {
          token: admin,
        },
      );
      assert.equal(revoked.status, 200);
      assert.equal(revoked.body.user.tokenVersion, 1);

      const old = await api.request<ErrorBody>('GET', '/v1/api-keys', { token: oldToken });
      assert.equal(old.status, 401);
      // API keys are not login tokens: unaffected.
      assert.equal((await api.request('GET', '/v1/merchants/me', { token: key.value })).status, 200);

      const login = await api.request<LoginBody>('POST', '/v1/auth/login', {
        body: { email: m.email, password: m.password },
      });
      assert.equal(login.status, 200);
      assert.equal((jwt.decode(login.body.token) as jwt.JwtPayload).ver, 1);
      assert.equal((await api.request('GET', '/v1/api-keys', { token: login.body.token })).status, 200);

      // Per merchant: every user's tokens at once.
      const all = await api.request<{ users: Array<{ id: string; tokenVersion: number }> }>(
        'POST',
        `/v1/admin/merchants/${m.merchantId}/revoke-tokens`,
        { token: admin },
      );
      assert.equal(all.status, 200);
      assert.deepEqual(
        all.body.users.map((u) => [u.id, u.tokenVersion]),
        [[m.userId, 2]],
      );
      assert.equal((await api.request('GET', '/v1/api-keys', { token: login.body.token })).status, 401);

      const audit = await api.request<{ entries: Array<{ action: string; actorEmail: string }> }>(
        'GET',
        `/v1/admin/audit-log?targetType=user&targetId=${m.userId}`,
        { token: admin },
      );
      assert.deepEqual(
        audit.body.entries.map((e) => e.action),
        ['user.revoke_tokens'],
      );
      const merchantAudit = await api.request<{ entries: Array<{ action: string }> }>(
        'GET',
        `/v1/admin/audit-log?targetId=${m.merchantId}`,
        {
          token: admin,
        },
      );
      assert.equal(merchantAudit.body.entries[0]?.action, 'merchant.revoke_tokens');
    });

    it('refuses a JWT without a token version (issued before versions existed) with 401', async () => {
      const legacy = jwt.sign({ merchantId: m.merchantId, role: 'USER' }, api.config.JWT_SECRET, {
        algorithm: 'HS256',
        subject: m.userId,
      });
      assert.equal((await api.request('GET', '/v1/api-keys', { token: legacy })).status, 401);
    });

    it('a disabled user is 403 on every route and at login, with a clear message; re-enabled, it logs in again', async () => {
      const disabled = await api.request<{ user: { status: string } }>('PATCH', `/v1/admin/users/${m.userId}`, {
        token: admin,
        body: { status: 'DISABLED' },
      });
      assert.equal(disabled.status, 200);
      assert.equal(disabled.body.user.status, 'DISABLED');
      const res = await api.request<ErrorBody>('GET', '/v1/api-keys', { token: m.token });
      assert.equal(res.status, 403);
      assert.match(res.body.message, /disabled/);
      const login = await api.request<ErrorBody>('POST', '/v1/auth/login', {
        body: { email: m.email, password: m.password },
      });
      assert.equal(login.status, 403);
      assert.match(login.body.message, /disabled/);

      await api.request('PATCH', `/v1/admin/users/${m.userId}`, { token: admin, body: { status: 'ACTIVE' } });
      // Disabling revoked the old token; a new login works.
      assert.equal((await api.request('GET', '/v1/api-keys', { token: m.token })).status, 401);
      const back = await api.request<LoginBody>('POST', '/v1/auth/login', {
        body: { email: m.email, password: m.password },
      });
      assert.equal(back.status, 200);

      const bad = await api.request<ErrorBody>('PATCH', `/v1/admin/users/${m.userId}`, {
        token: admin,
        body: { status: 'GONE' },
      });
      assert.equal(bad.status, 400);
      const unknown = await api.request('POST', '/v1/admin/users/usr_nope/revoke-tokens', { token: admin });
      assert.equal(unknown.status, 404);
      const notAdmin = await api.request('POST', `/v1/admin/users/${m.userId}/revoke-tokens`, {
        token: back.body.token,
      });
      assert.equal(notAdmin.status, 403);
    });
  });

  describe('rate limits', () => {
    it('hold across two API processes sharing one PostgreSQL', async () => {
      const config = { RATE_LIMIT_RPS: 1, RATE_LIMIT_BURST: 4 };
      const a = await startApi({ config });
      const b = await startApi({ config });
      try {
        const m = await api.createMerchant();
        const k = await api.createApiKey(m.token);
        const statuses: string[] = [];
        for (const server of [a, b, a, b, a, b]) {
          const res = await server.request('GET', '/v1/merchants/me', { token: k.value });
          statuses.push(`${server === a ? 'A' : 'B'}${res.status}`);
        }
        // Each process served two requests, yet both refuse the fifth and sixth: one shared window.
        assert.deepEqual(statuses, ['A200', 'B200', 'A200', 'B200', 'A429', 'B429']);
        const refused = await a.request<ErrorBody>('GET', '/v1/merchants/me', { token: k.value });
        assertLimited(refused, /Too many requests/);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('throttles invalid API keys per address before looking them up', async () => {
      const limited = await startApi({
        config: { TRUST_PROXY: true, AUTH_FAILURES_PER_ADDRESS: 5, AUTH_FAILURE_WINDOW_SECONDS: 60 },
      });
      const knex: Knex = limited.knex;
      let lookups = 0;
      const count = (q: { sql?: string }): void => {
        if (q.sql?.includes('api_keys')) lookups += 1;
      };
      knex.on('query', count);
      try {
        const attacker = randomAddress();
        const statuses: number[] = [];
        for (let i = 0; i < 15; i++) {
          const res = await limited.request<ErrorBody>('GET', '/v1/merchants/me', {
            token: `pixflow_${crypto.randomBytes(30).toString('base64url')}`,
            headers: from(attacker),
          });
          statuses.push(res.status);
          if (res.status === 429) assertLimited(res, /failed authentication/);
        }
        assert.deepEqual(statuses, [...Array<number>(5).fill(401), ...Array<number>(10).fill(429)]);
        assert.equal(lookups, 5, 'only the first five keys were looked up');

        // Forged JWTs count against the same address.
        const forged = await limited.request('GET', '/v1/merchants/me', {
          token: 'eyJhbGciOiJIUzI1NiJ9.e30.c2ln',
          headers: from(attacker),
        });
        assert.equal(forged.status, 429);

        // Another address is unaffected.
        knex.removeListener('query', count);
        const m = await limited.createMerchant();
        const k = await limited.createApiKey(m.token);
        assert.equal(
          (await limited.request('GET', '/v1/merchants/me', { token: k.value, headers: from(randomAddress()) })).status,
          200,
        );
      } finally {
        knex.removeListener('query', count);
        await limited.close();
      }
    });

    it('limits every request per address before routing: health checks, callbacks and login included', async () => {
      const limited = await startApi({
        config: { TRUST_PROXY: true, RATE_LIMIT_ADDRESS_RPS: 1, RATE_LIMIT_ADDRESS_BURST: 3 },
      });
      try {
        const address = randomAddress();
        const seen: number[] = [];
        for (const [method, path] of [
          ['GET', '/healthz'],
          ['GET', '/readyz'],
          ['POST', '/v1/auth/login'],
          ['POST', '/v1/acquirer/pix'],
          ['GET', '/healthz'],
        ] as const) {
          const res = await limited.request<ErrorBody>(method, path, {
            headers: from(address),
            body: method === 'POST' ? {} : undefined,
          });
          seen.push(res.status);
          if (res.status === 429) assertLimited(res, /address/);
        }
        assert.deepEqual(seen.slice(0, 3), [200, 200, 400]);
        assert.deepEqual(seen.slice(3), [429, 429]);
        assert.equal((await limited.request('GET', '/healthz', { headers: from(randomAddress()) })).status, 200);
      } finally {
        await limited.close();
      }
    });
  });
});
