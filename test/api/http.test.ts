import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/lib/logger';
import { startApi, type ErrorBody, type MerchantFixture, type TestApi } from '../support/api';
import { assertErrorBody } from '../support/errors';

describe('API: cross-cutting behaviour', () => {
  let api: TestApi;
  let m: MerchantFixture;

  before(async () => {
    api = await startApi();
    m = await api.createMerchant();
  });
  after(() => api?.close());

  describe('bodies and validation', () => {
    it('answers malformed JSON with 400 {message}', async () => {
      for (const rawBody of ['{"name": ', 'not json', '{"name": "x",}']) {
        const res = await api.request<ErrorBody>('POST', '/v1/api-keys', { token: m.token, rawBody });
        assert.equal(res.status, 400, rawBody);
        assertErrorBody(res.body);
      }
    });

    it('answers a JSON body that is not an object with 400', async () => {
      for (const rawBody of ['[]', '"text"', '42', 'null']) {
        const res = await api.request<ErrorBody>('POST', '/v1/api-keys', { token: m.token, rawBody });
        assert.equal(res.status, 400, rawBody);
        assert.ok(res.body.message);
      }
    });

    it('answers a non-JSON content type with 400 (the body is not a JSON object)', async () => {
      const res = await api.request<ErrorBody>('POST', '/v1/api-keys', {
        token: m.token,
        rawBody: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(res.status, 400);
    });

    it('answers wrong types and missing fields with 400 naming the field', async () => {
      const admin = await api.adminToken();
      const path = `/v1/admin/merchants/${m.merchantId}/adjustments`;
      const cases: Array<[unknown, RegExp]> = [
        [{ amount: '100', reason: 'r' }, /amount/],
        [{ amount: 100.5, reason: 'r' }, /amount/],
        [{ amount: 100 }, /reason is required/],
        [{ reason: 'r' }, /amount is required/],
        [{ amount: 100, reason: 42 }, /reason/],
      ];
      for (const [body, field] of cases) {
        const res = await api.request<ErrorBody>('POST', path, { token: admin, body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.match(res.body.message, field);
      }
    });

    it('ignores unknown body fields', async () => {
      const res = await api.request('POST', '/v1/api-keys', { token: m.token, body: { name: 'extra', color: 'blue' } });
      assert.equal(res.status, 201);
    });

    it('refuses strings PostgreSQL cannot store (NUL) with 400, not 500', async () => {
      const res = await api.request('POST', '/v1/api-keys', { token: m.token, body: { name: 'a\u0000b' } });
      assert.equal(res.status, 400);
      const login = await api.request('POST', '/v1/auth/login', { body: { email: 'a\u0000@x', password: 'p' } });
      assert.equal(login.status, 400);
    });

    it('answers an oversized body with 413 {message}', async () => {
      const rawBody = JSON.stringify({ name: 'x', description: 'y'.repeat(api.config.BODY_LIMIT_BYTES) });
      const res = await api.request<ErrorBody>('POST', '/v1/api-keys', { token: m.token, rawBody });
      assert.equal(res.status, 413);
      assert.ok(res.body.message);
    });

    it('answers odd path parameters without a 500', async () => {
      for (const id of ['%E0%A4%A', '%00', 'x'.repeat(500), '..%2F..%2Fetc']) {
        const res = await api.request('DELETE', `/v1/api-keys/${id}`, { token: m.token });
        assert.ok([400, 404].includes(res.status), `${id} → ${res.status}`);
      }
    });
  });

  describe('routing', () => {
    it('answers unknown routes with 404 {message}', async () => {
      const res = await api.request<ErrorBody>('GET', '/v1/nope');
      assert.equal(res.status, 404);
      assert.equal(typeof res.body.message, 'string');
    });

    it('answers a wrong method with 405 {message} and Allow', async () => {
      const res = await api.request<ErrorBody>('PUT', '/v1/auth/login', { body: {} });
      assert.equal(res.status, 405);
      assert.match(res.headers.get('allow') ?? '', /POST/);
      assert.equal(typeof res.body.message, 'string');
    });
  });

  describe('request ids', () => {
    it('echoes a caller-supplied x-request-id and mints one otherwise', async () => {
      const given = await api.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-abc-123' } });
      assert.equal(given.headers.get('x-request-id'), 'trace-abc-123');
      const minted = await api.request('GET', '/healthz');
      assert.match(minted.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      const junk = await api.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
      assert.notEqual(junk.headers.get('x-request-id'), 'bad id with spaces');
    });
  });

  describe('health', () => {
    it('GET /healthz → 200', async () => {
      const res = await api.request<{ status: string }>('GET', '/healthz');
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'ok');
    });

    it('GET /readyz → 200 when the database and every check answer', async () => {
      const res = await api.request<{ status: string; checks: Record<string, string> }>('GET', '/readyz');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.checks, { database: 'ok', temporal: 'ok' });
    });

    it('GET /readyz → 503 naming the failing check, without its error', async () => {
      const broken = await startApi({
        deps: {
          checks: {
            temporal: async () => {
              throw new Error('connect ECONNREFUSED 10.1.2.3:7233');
            },
          },
        },
      });
      try {
        const res = await broken.request<ErrorBody & { checks: Record<string, string> }>('GET', '/readyz');
        assert.equal(res.status, 503);
        assert.deepEqual(res.body.checks, { database: 'ok', temporal: 'failed' });
        assert.ok(!JSON.stringify(res.body).includes('ECONNREFUSED'));
      } finally {
        await broken.close();
      }
    });
  });

  describe('rate limit', () => {
    it('answers 429 with Retry-After once a credential exhausts its burst, per credential', async () => {
      const limited = await startApi({ config: { RATE_LIMIT_RPS: 1, RATE_LIMIT_BURST: 3 } });
      try {
        const a = await limited.createMerchant();
        const b = await limited.createMerchant();
        const statuses: number[] = [];
        let last: Awaited<ReturnType<typeof limited.request<ErrorBody>>> | undefined;
        for (let i = 0; i < 5; i++) {
          last = await limited.request<ErrorBody>('GET', '/v1/api-keys', { token: a.token });
          statuses.push(last.status);
        }
        assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
        assert.equal(statuses[4], 429);
        assert.ok(last);
        assert.ok(Number(last.headers.get('retry-after')) >= 1);
        assert.equal(typeof last.body.message, 'string');
        // Another credential has its own bucket.
        assert.equal((await limited.request('GET', '/v1/api-keys', { token: b.token })).status, 200);
      } finally {
        await limited.close();
      }
    });
  });

  describe('internal errors', () => {
    it('turns an unexpected failure into 500 {message:"Internal server error"} without details', async () => {
      const failing = await startApi({
        deps: {
          routes: [
            (router, guards) =>
              router.get('/v1/test/boom', ...guards.authenticated, () => {
                throw new Error('relation "secret_table" does not exist');
              }),
          ],
        },
      });
      try {
        const mm = await failing.createMerchant();
        const res = await failing.request<ErrorBody>('GET', '/v1/test/boom', { token: mm.token });
        assert.equal(res.status, 500);
        assert.equal(assertErrorBody(res.body, '', { code: 'internal_error' }).message, 'Internal server error');
      } finally {
        await failing.close();
      }
    });
  });

  describe('logs', () => {
    it('never contain passwords, tokens or API keys', async () => {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      });
      const logged = await startApi({ deps: { logger: createLogger({ level: 'trace', destination: sink }) } });
      try {
        const mm = await logged.createMerchant();
        const key = await logged.createApiKey(mm.token);
        await logged.request('GET', '/v1/api-keys', { token: key.value });
        await logged.request('POST', '/v1/auth/login', { body: { email: mm.email, password: 'wrong-password-xyz' } });
        await logged.request('POST', '/v1/api-keys', { token: mm.token, rawBody: '{"name": ' });
        const all = lines.join('');
        assert.ok(lines.length > 0, 'something was logged');
        for (const secret of [mm.password, 'wrong-password-xyz', mm.token, key.value]) {
          assert.ok(!all.includes(secret), `log contains ${secret.slice(0, 12)}…`);
        }
      } finally {
        await logged.close();
      }
    });
  });
});
