/**
 * OWASP API4 (unrestricted resource consumption): bodies over BODY_LIMIT_BYTES are 413, pages over
 * 100 are 400, a credential over its burst is 429 with Retry-After (docs/api.md "Rate limits"), and a
 * merchant cannot hold more API keys or webhooks than the limit, even with requests in parallel.
 */
import assert from 'node:assert/strict';
import { startApi, type TestApi } from '../support/api';
import { fundedMerchant, withdrawalsStack } from '../support/withdrawals';
import { WEBHOOKS_TEST_CONFIG, webhookStack } from '../support/webhooks';
import { assertErrorBody } from '../support/errors';

describe('security: resource limits', function () {
  this.timeout(60_000);
  let api: TestApi;

  before(async () => {
    api = await startApi({ config: { RATE_LIMIT_BURST: 5, RATE_LIMIT_RPS: 1, MAX_API_KEYS_PER_MERCHANT: 3 } });
  });
  after(() => api.close());

  it('a body over the limit is 413 {message} and creates nothing', async () => {
    const m = await api.createMerchant();
    const big = JSON.stringify({ name: 'big', description: 'x'.repeat(api.config.BODY_LIMIT_BYTES) });
    const res = await api.request<Record<string, unknown>>('POST', '/v1/api-keys', { token: m.token, rawBody: big });
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assertErrorBody(res.body);
    assert.equal((await api.knex('api_keys').where({ merchant_id: m.merchantId })).length, 0);
    // Also unauthenticated: the size is refused before anything else is read.
    assert.equal((await api.request('POST', '/v1/auth/login', { rawBody: big })).status, 413);
  });

  it('a page size over 100 is 400 on every list', async () => {
    const w = await withdrawalsStack();
    const wh = await webhookStack();
    const m = await fundedMerchant(w.api, 0);
    const hook = await wh.createWebhook(m.token, { path: `/limits-${m.merchantId}` });
    for (const [target, path] of [
      [w.api, '/v1/charges'],
      [w.api, '/v1/merchants/me/withdrawals'],
      [wh.api, `/v1/webhooks/merchant/${hook.id}/deliveries`],
    ] as const) {
      const over = await target.request<Record<string, unknown>>('GET', `${path}?limit=101`, { token: m.token });
      assert.equal(over.status, 400, `${path}: ${JSON.stringify(over.body)}`);
      assertErrorBody(over.body);
      assert.equal((await target.request('GET', `${path}?limit=100`, { token: m.token })).status, 200, path);
      assert.equal((await target.request('GET', `${path}?limit=1e9`, { token: m.token })).status, 400, path);
    }
  });

  it('a credential over its burst gets 429 with Retry-After', async () => {
    const m = await api.createMerchant();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const res = await api.request<Record<string, unknown>>('GET', '/v1/merchants/me', { token: m.token });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        assertErrorBody(res.body);
      }
    }
    assert.deepEqual(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
    assert.ok(
      statuses.slice(5).every((s) => s === 429),
      statuses.join(','),
    );
    assert.match(retryAfter ?? '', /^[1-9]\d*$/);
  });

  it('API keys beyond the per-merchant limit are 400, even created in parallel', async () => {
    const m = await api.createMerchant({});
    // A merchant with its own credential budget: the burst above is per credential.
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        api.request('POST', '/v1/api-keys', { token: m.token, body: { name: `k${i}` } }),
      ),
    );
    const created = results.filter((r) => r.status === 201).length;
    assert.equal(created, 3, results.map((r) => r.status).join(','));
    assert.ok(results.every((r) => r.status === 201 || r.status === 400 || r.status === 429));
    assert.equal((await api.knex('api_keys').where({ merchant_id: m.merchantId })).length, 3);
  });

  it('webhooks beyond the per-merchant limit are 400, even created in parallel', async () => {
    const wh = await webhookStack();
    const m = await wh.api.createMerchant();
    const limit = WEBHOOKS_TEST_CONFIG.MAX_WEBHOOKS_PER_MERCHANT;
    const results = await Promise.all(
      Array.from({ length: limit + 5 }, (_, i) =>
        wh.api.request('POST', '/v1/webhooks/merchant', { token: m.token, body: { url: `https://example.com/h${i}` } }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 201).length, limit);
    assert.ok(
      results.every((r) => r.status === 201 || r.status === 400),
      results.map((r) => r.status).join(','),
    );
    assert.equal((await wh.knex('webhooks').where({ merchant_id: m.merchantId })).length, limit);
  });
});
