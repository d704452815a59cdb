/**
 * Every error answer is `{message, code, requestId}` (plus `param` when one field is at fault) and
 * its requestId is the `x-request-id` header (docs/api.md "Errors"): walked over every mounted
 * route (test/security/routes.ts) without a credential, with the wrong one and with bad input,
 * then the cross-cutting cases one by one (404, 405, 413, malformed JSON, 429, idempotency, balance).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startApi, type ApiResponse, type MerchantFixture, type TestApi } from '../support/api';
import { assertErrorBody } from '../support/errors';
import { DEST, fundedMerchant, withdrawalsStack } from '../support/withdrawals';
import { routesOf, type RouteEntry } from '../security/routes';
import { createLogger } from '../../src/lib/logger';
import type { ErrorCode } from '../../src/contracts/errors';

describe('API: error codes and request ids on every error answer', function () {
  this.timeout(180_000);
  let api: TestApi;
  let m: MerchantFixture;
  let apiKey: string;
  let routes: RouteEntry[];
  /** Every error answer seen, by code, so the walk shows it covered many. */
  const seen = new Map<ErrorCode, number>();

  before(async () => {
    api = (await withdrawalsStack()).api;
    m = await fundedMerchant(api, 10_000);
    apiKey = (await api.createApiKey(m.token)).value;
    routes = routesOf(api.app);
  });

  /** Asserts the answer's shape when it is an error; every answer carries x-request-id. */
  function check(res: ApiResponse<unknown>, what: string, code?: ErrorCode): void {
    const id = res.headers.get('x-request-id');
    assert.ok(id, `${what}: no x-request-id`);
    if (res.status < 400) {
      assert.equal(code, undefined, `${what}: expected ${code} but got ${res.status}`);
      return;
    }
    const body = assertErrorBody(res.body, what, { headers: res.headers, status: res.status, code });
    seen.set(body.code, (seen.get(body.code) ?? 0) + 1);
  }

  const concrete = (path: string): string => path.replace(/:[A-Za-z]+/g, 'x_unknown_id');

  it('walks every mounted route without a credential, with a bad one, and with bad input', async () => {
    assert.ok(routes.length > 20, `only ${routes.length} routes`);
    let errors = 0;
    for (const r of routes) {
      const path = concrete(r.path);
      for (const [label, opts] of [
        ['no credential', {}],
        ['garbage credential', { token: 'not-a-token' }],
        ['API key', { token: apiKey }],
        ['merchant JWT, bad body', { token: m.token, body: { amount: 'ten', name: 12, url: 3 } }],
        ['malformed JSON', { token: m.token, rawBody: '{"amount": ' }],
      ] as const) {
        if (r.method === 'GET' && ('body' in opts || 'rawBody' in opts)) continue;
        const res = await api.request(r.method, path, opts);
        check(res, `${label}: ${r.method} ${path}`);
        if (res.status >= 400) errors++;
      }
    }
    assert.ok(errors > routes.length * 2, `only ${errors} error answers`);
    for (const code of ['unauthorized', 'forbidden', 'not_found', 'validation_error'] as const) {
      assert.ok(seen.has(code), `the walk never saw ${code}: ${JSON.stringify([...seen])}`);
    }
  });

  it('401 and 403 carry unauthorized and forbidden', async () => {
    check(await api.request('GET', '/v1/merchants/me'), 'no credential', 'unauthorized');
    check(await api.request('GET', '/v1/merchants/me', { token: 'pixflow_nope' }), 'unknown key', 'unauthorized');
    check(
      await api.request('POST', '/v1/api-keys', { token: apiKey, body: { name: 'x' } }),
      'API key where a JWT is needed',
      'forbidden',
    );
    check(await api.request('GET', '/v1/admin/merchants', { token: m.token }), 'USER on admin', 'forbidden');
  });

  it('unknown route 404, wrong method 405, oversized 413, malformed JSON 400', async () => {
    check(await api.request('GET', '/v1/no-such-route'), 'unknown route', 'not_found');
    check(await api.request('GET', '/no-such-route', { token: m.token }), 'unknown route, authed', 'not_found');
    check(await api.request('PUT', '/v1/api-keys', { token: m.token, body: {} }), 'wrong method', 'method_not_allowed');
    const big = { name: 'x'.repeat(api.config.BODY_LIMIT_BYTES + 10) };
    check(await api.request('POST', '/v1/api-keys', { token: m.token, body: big }), 'too large', 'payload_too_large');
    check(
      await api.request('POST', '/v1/api-keys', { token: m.token, rawBody: '{"name":' }),
      'malformed JSON',
      'malformed_json',
    );
  });

  it('a validation error names the first failing field in param', async () => {
    const wrongType = await api.request('POST', '/v1/charges', {
      token: apiKey,
      body: { amount: '100', description: 'x' },
    });
    check(wrongType, 'amount as a string', 'validation_error');
    assert.equal(assertErrorBody(wrongType.body).param, 'amount');
    const nested = await api.request('POST', '/v1/charges', {
      token: apiKey,
      body: { amount: 100, description: 'x', customer: { name: 7 } },
    });
    check(nested, 'customer.name as a number', 'validation_error');
    assert.equal(assertErrorBody(nested.body).param, 'customer.name');
    const query = await api.request('GET', '/v1/charges?limit=abc', { token: apiKey });
    check(query, 'bad query', 'validation_error');
    assert.equal(assertErrorBody(query.body).param, 'limit');
    const header = await api.request('POST', '/v1/charges', {
      token: apiKey,
      body: { amount: 100 },
      headers: { 'idempotency-key': 'k'.repeat(65) },
    });
    check(header, 'idempotency key too long', 'validation_error');
    assert.equal(assertErrorBody(header.body).param, 'Idempotency-Key');
    const notObject = await api.request('POST', '/v1/api-keys', { token: m.token, body: [] });
    check(notObject, 'array body');
    assert.equal(assertErrorBody(notObject.body).param, undefined, 'no field is at fault');
  });

  it('money errors: insufficient_balance, idempotency_key_reused, invalid_document', async () => {
    check(
      await api.request('POST', '/v1/merchants/me/withdrawals', { token: m.token, body: { amount: 999_999, ...DEST } }),
      'withdraw more than available',
      'insufficient_balance',
    );
    const key = `err-${crypto.randomUUID()}`;
    const first = await api.request('POST', '/v1/merchants/me/withdrawals', {
      token: m.token,
      body: { amount: 100, ...DEST },
      headers: { 'Idempotency-Key': key },
    });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    check(first, 'first withdrawal');
    check(
      await api.request('POST', '/v1/merchants/me/withdrawals', {
        token: m.token,
        body: { amount: 101, ...DEST },
        headers: { 'Idempotency-Key': key },
      }),
      'same key, other body',
      'idempotency_key_reused',
    );
    const doc = await api.request('POST', '/v1/charges', {
      token: m.token,
      body: {
        amount: 100,
        description: 'x',
        customer: { name: 'Ana Souza', email: 'ana@example.com', phone: '11987654321', document: '11111111111' },
      },
    });
    check(doc, 'invalid CPF', 'invalid_document');
    assert.equal(assertErrorBody(doc.body).param, 'customer.document');
  });

  it('429 carries rate_limited, Retry-After and the request id', async () => {
    const limited = await startApi({
      config: { TRUST_PROXY: true, RATE_LIMIT_ADDRESS_BURST: 1, RATE_LIMIT_ADDRESS_RPS: 0.001 },
    });
    try {
      const from = {
        'x-forwarded-for': `10.${crypto.randomInt(256)}.${crypto.randomInt(256)}.${crypto.randomInt(256)}`,
      };
      let res = await limited.request('GET', '/healthz', { headers: from });
      for (let i = 0; i < 5 && res.status !== 429; i++)
        res = await limited.request('GET', '/healthz', { headers: from });
      check(res, 'over the address limit', 'rate_limited');
      assert.ok(Number(res.headers.get('retry-after')) > 0);
    } finally {
      await limited.close();
    }
  });

  it('the requestId is the reqId of the log lines of that request', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logged = await startApi({
      deps: {
        logger: createLogger({
          level: 'info',
          destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
        }),
      },
    });
    try {
      const res = await logged.request('GET', '/v1/merchants/me', { token: 'not-a-token' });
      const { requestId } = assertErrorBody(res.body, 'logged 401', { headers: res.headers, code: 'unauthorized' });
      const access = lines.find((l) => l.msg === 'request' && l.path === '/v1/merchants/me');
      assert.ok(access, JSON.stringify(lines));
      assert.equal(access.reqId, requestId);
      assert.equal(access.status, 401);
    } finally {
      await logged.close();
    }
  });

  it('honours a sane client x-request-id in the body and header, replaces an odd one', async () => {
    const sane = `support-${crypto.randomUUID()}`;
    const echoed = await api.request('GET', '/v1/merchants/me', { headers: { 'x-request-id': sane } });
    check(echoed, 'client id', 'unauthorized');
    assert.equal(assertErrorBody(echoed.body).requestId, sane);
    const odd = await api.request('GET', '/v1/merchants/me', { headers: { 'x-request-id': 'has spaces <and> more' } });
    check(odd, 'odd client id', 'unauthorized');
    assert.notEqual(assertErrorBody(odd.body).requestId, 'has spaces <and> more');
  });
});
