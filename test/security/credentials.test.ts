/**
 * OWASP API2 (broken authentication): forged, expired, tampered, `alg: none`, wrongly signed,
 * revoked and deleted credentials get 401, a suspended merchant's 403 (docs/api.md "Auth hardening"),
 * and none of them gets a byte of data: the body is `{message}` alone.
 */
import assert from 'node:assert/strict';
import jwt from 'jsonwebtoken';
import { startApi, type ApiResponse, type MerchantFixture, type TestApi } from '../support/api';
import { assertErrorBody } from '../support/errors';

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('security: credentials', function () {
  this.timeout(60_000);
  let api: TestApi;
  let m: MerchantFixture;
  let other: MerchantFixture;

  before(async () => {
    api = await startApi();
    m = await api.createMerchant();
    other = await api.createMerchant();
  });
  after(() => api.close());

  /** The claims of a real token of `m`. */
  const claimsOf = (token: string): Record<string, unknown> => jwt.decode(token) as Record<string, unknown>;

  const refusedWith = (res: ApiResponse<Record<string, unknown>>, status: number, what: string): void => {
    assert.equal(res.status, status, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
    assertErrorBody(res.body, `${what}: ${JSON.stringify(res.body)}`);
  };

  /** Tried on a merchant route with data and on an admin route. */
  const assertRefused = async (token: string, status: number, what: string): Promise<void> => {
    for (const path of ['/v1/api-keys', '/v1/merchants/me', '/v1/admin/merchants']) {
      refusedWith(await api.request<Record<string, unknown>>('GET', path, { token }), status, `${what} on ${path}`);
    }
  };

  it('the genuine token works (so every refusal below is about the credential)', async () => {
    assert.equal((await api.request('GET', '/v1/merchants/me', { token: m.token })).status, 200);
  });

  it('an expired JWT is 401', async () => {
    const claims = claimsOf(m.token);
    const now = Math.floor(Date.now() / 1000);
    const expired = jwt.sign({ ...claims, iat: now - 7200, exp: now - 60 }, api.config.JWT_SECRET, {
      algorithm: 'HS256',
    });
    await assertRefused(expired, 401, 'expired');
  });

  it('a JWT whose payload was changed (signature kept) is 401', async () => {
    const [header, , signature] = m.token.split('.');
    for (const change of [
      { merchantId: other.merchantId },
      { role: 'ADMIN', merchantId: null },
      { sub: other.userId },
      { exp: 4_102_444_800 },
    ]) {
      const payload = b64url({ ...claimsOf(m.token), ...change });
      await assertRefused(`${header}.${payload}.${signature}`, 401, `tampered ${JSON.stringify(change)}`);
    }
  });

  it('an unsigned JWT (alg: none, with or without a signature) is 401', async () => {
    const payload = b64url({ ...claimsOf(m.token), role: 'ADMIN', merchantId: null });
    const signature = m.token.split('.')[2];
    for (const alg of ['none', 'None', 'NONE']) {
      const header = b64url({ alg, typ: 'JWT' });
      await assertRefused(`${header}.${payload}.`, 401, `alg ${alg}`);
      await assertRefused(`${header}.${payload}.${signature}`, 401, `alg ${alg} with a signature`);
    }
  });

  it('a JWT signed with another secret or algorithm is 401', async () => {
    const claims = claimsOf(m.token);
    await assertRefused(
      jwt.sign(claims, 'not-the-secret-0123456789abcdef0123456789', { algorithm: 'HS256' }),
      401,
      'wrong secret',
    );
    await assertRefused(jwt.sign(claims, api.config.JWT_SECRET, { algorithm: 'HS512' }), 401, 'HS512');
    // Right secret, but the claims say more than the user is: the user is re-read on every request.
    const escalated = jwt.sign({ ...claims, role: 'ADMIN', merchantId: null }, api.config.JWT_SECRET, {
      algorithm: 'HS256',
    });
    await assertRefused(escalated, 401, 'role claim not matching the user');
  });

  it('malformed Authorization headers are 401', async () => {
    for (const authorization of [
      '',
      'Bearer',
      'Bearer ',
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      `Bearer ${m.token}x`,
      'Bearer a.b.c',
    ]) {
      const res = await api.request<Record<string, unknown>>('GET', '/v1/merchants/me', { headers: { authorization } });
      refusedWith(res, 401, `authorization "${authorization.slice(0, 20)}"`);
    }
  });

  it('a deleted API key is 401, and so is an unknown one with a real prefix', async () => {
    const key = await api.createApiKey(m.token);
    assert.equal((await api.request('GET', '/v1/merchants/me', { token: key.value })).status, 200);
    assert.equal((await api.request('DELETE', `/v1/api-keys/${key.id}`, { token: m.token })).status, 200);
    await assertRefused(key.value, 401, 'deleted API key');
    const flipped = key.value.slice(0, -1) + (key.value.endsWith('a') ? 'b' : 'a');
    await assertRefused(flipped, 401, 'altered API key');
  });

  it('a JWT of a revoked token version is 401; a new login works', async () => {
    const u = await api.createMerchant();
    const admin = await api.adminToken();
    assert.equal(
      (await api.request('POST', `/v1/admin/users/${u.userId}/revoke-tokens`, { token: admin })).status,
      200,
    );
    await assertRefused(u.token, 401, 'revoked version');
    // A forged token with the current version needs the secret: the version alone is not a credential.
    const login = await api.request<{ token: string }>('POST', '/v1/auth/login', {
      body: { email: u.email, password: u.password },
    });
    assert.equal(login.status, 200);
    assert.equal((await api.request('GET', '/v1/merchants/me', { token: login.body.token })).status, 200);
  });

  it("a suspended merchant's JWT and API key are 403 with no data, and login is refused", async () => {
    const u = await api.createMerchant();
    const key = await api.createApiKey(u.token);
    const admin = await api.adminToken();
    assert.equal(
      (
        await api.request('PATCH', `/v1/admin/merchants/${u.merchantId}`, {
          token: admin,
          body: { status: 'SUSPENDED' },
        })
      ).status,
      200,
    );
    for (const path of ['/v1/api-keys', '/v1/merchants/me', '/v1/merchants/me/balance']) {
      refusedWith(
        await api.request<Record<string, unknown>>('GET', path, { token: u.token }),
        403,
        `suspended JWT on ${path}`,
      );
      refusedWith(
        await api.request<Record<string, unknown>>('GET', path, { token: key.value }),
        403,
        `suspended API key on ${path}`,
      );
    }
    refusedWith(
      await api.request<Record<string, unknown>>('POST', '/v1/api-keys', { token: u.token, body: { name: 'x' } }),
      403,
      'new key',
    );
    const login = await api.request<Record<string, unknown>>('POST', '/v1/auth/login', {
      body: { email: u.email, password: u.password },
    });
    refusedWith(login, 403, 'login');
    assert.equal(
      await api
        .knex('api_keys')
        .where({ merchant_id: u.merchantId })
        .count<{ count: string }[]>('* as count')
        .then((r) => Number(r[0]?.count)),
      1,
    );
  });
});
