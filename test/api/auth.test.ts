import assert from 'node:assert/strict';
import jwt from 'jsonwebtoken';
import {
  startApi,
  TEST_ADMIN,
  type ErrorBody,
  type LoginBody,
  type MerchantFixture,
  type TestApi,
} from '../support/api';
import { assertErrorBody, withoutRequestId } from '../support/errors';

describe('API: login and JWT', () => {
  let api: TestApi;
  let merchant: MerchantFixture;

  before(async () => {
    api = await startApi();
    merchant = await api.createMerchant();
  });
  after(() => api?.close());

  it('logs a merchant user in: 200 {token, user:{id,email,role}}', async () => {
    const res = await api.request<LoginBody>('POST', '/v1/auth/login', {
      body: { email: merchant.email, password: merchant.password },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.user, { id: merchant.userId, email: merchant.email, role: 'USER' });
    const claims = jwt.verify(res.body.token, api.config.JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    assert.equal(claims.sub, merchant.userId);
    assert.equal(claims.merchantId, merchant.merchantId);
    assert.equal(claims.role, 'USER');
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), api.config.JWT_TTL);
  });

  it('logs the operator in with role ADMIN and merchantId null', async () => {
    const res = await api.request<LoginBody>('POST', '/v1/auth/login', { body: TEST_ADMIN });
    assert.equal(res.status, 200);
    assert.equal(res.body.user.role, 'ADMIN');
    const claims = jwt.decode(res.body.token) as jwt.JwtPayload;
    assert.equal(claims.merchantId, null);
  });

  it('accepts the e-mail in any case', async () => {
    const res = await api.request('POST', '/v1/auth/login', {
      body: { email: merchant.email.toUpperCase(), password: merchant.password },
    });
    assert.equal(res.status, 200);
  });

  it('answers a wrong password and an unknown e-mail with the same 401 body', async () => {
    const wrong = await api.request<ErrorBody>('POST', '/v1/auth/login', {
      body: { email: merchant.email, password: 'not-the-password' },
    });
    const unknown = await api.request<ErrorBody>('POST', '/v1/auth/login', {
      body: { email: 'nobody@pixflow.test', password: 'not-the-password' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.deepEqual(withoutRequestId(wrong.body), withoutRequestId(unknown.body));
    assertErrorBody(wrong.body);
  });

  it('rejects missing fields with 400 naming the field', async () => {
    const noPassword = await api.request<ErrorBody>('POST', '/v1/auth/login', { body: { email: merchant.email } });
    assert.equal(noPassword.status, 400);
    assert.match(noPassword.body.message, /password/);
    const empty = await api.request<ErrorBody>('POST', '/v1/auth/login', { body: {} });
    assert.equal(empty.status, 400);
    assert.match(empty.body.message, /email/);
    const wrongType = await api.request<ErrorBody>('POST', '/v1/auth/login', { body: { email: 42, password: 'x' } });
    assert.equal(wrongType.status, 400);
    assert.match(wrongType.body.message, /email/);
  });

  describe('Bearer JWT', () => {
    it('accepts a valid token', async () => {
      const res = await api.request('GET', '/v1/api-keys', { token: merchant.token });
      assert.equal(res.status, 200);
    });

    it('refuses a missing or malformed Authorization header with 401 {message}', async () => {
      const variants: Array<Record<string, string>> = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }];
      for (const headers of variants) {
        const res = await api.request<ErrorBody>('GET', '/v1/api-keys', { headers });
        assert.equal(res.status, 401, JSON.stringify(headers));
        assert.equal(typeof res.body.message, 'string');
      }
    });

    it('refuses an expired token with 401', async () => {
      const expired = jwt.sign(
        { merchantId: merchant.merchantId, role: 'USER', exp: Math.floor(Date.now() / 1000) - 10 },
        api.config.JWT_SECRET,
        { algorithm: 'HS256', subject: merchant.userId },
      );
      const res = await api.request<ErrorBody>('GET', '/v1/api-keys', { token: expired });
      assert.equal(res.status, 401);
      assert.ok(res.body.message);
    });

    it('refuses a tampered token with 401', async () => {
      // Same header and signature, payload rewritten to claim the ADMIN role.
      const [header, , signature] = merchant.token.split('.');
      const forged = Buffer.from(
        JSON.stringify({
          sub: merchant.userId,
          merchantId: null,
          role: 'ADMIN',
          exp: Math.floor(Date.now() / 1000) + 600,
        }),
      ).toString('base64url');
      const res = await api.request('GET', '/v1/admin/merchants', { token: `${header}.${forged}.${signature}` });
      assert.equal(res.status, 401);
    });

    it('refuses a token signed with another secret or with alg none', async () => {
      const other = jwt.sign({ merchantId: merchant.merchantId, role: 'USER' }, 'another-secret', {
        algorithm: 'HS256',
        subject: merchant.userId,
      });
      assert.equal((await api.request('GET', '/v1/api-keys', { token: other })).status, 401);
      const none = jwt.sign({ merchantId: merchant.merchantId, role: 'USER', sub: merchant.userId }, '', {
        algorithm: 'none',
      });
      assert.equal((await api.request('GET', '/v1/api-keys', { token: none })).status, 401);
    });
  });

  it('keeps only argon2id hashes of passwords in the database', async () => {
    const rows = await api.knex('users').select('*');
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(merchant.password), 'merchant password found in clear');
    assert.ok(!dump.includes(TEST_ADMIN.password), 'admin password found in clear');
    const user = rows.find((r: { id: string }) => r.id === merchant.userId) as { password_hash: string };
    assert.match(user.password_hash, /^\$argon2id\$/);
  });
});
