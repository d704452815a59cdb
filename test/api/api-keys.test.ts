import assert from 'node:assert/strict';
import { startApi, type ApiKeyBody, type ErrorBody, type MerchantFixture, type TestApi } from '../support/api';

describe('API: API keys', () => {
  let api: TestApi;
  let a: MerchantFixture;
  let b: MerchantFixture;

  before(async () => {
    api = await startApi();
    [a, b] = await Promise.all([api.createMerchant(), api.createMerchant()]);
  });
  after(() => api?.close());

  it('creates a key (201), shows its value once, lists it masked, authenticates with it, deletes it → 401 at once', async () => {
    const created = await api.request<{ apiKey: ApiKeyBody }>('POST', '/v1/api-keys', {
      token: a.token,
      body: { name: 'server', description: 'backend integration' },
    });
    assert.equal(created.status, 201);
    const key = created.body.apiKey;
    assert.deepEqual(Object.keys(key).sort(), ['createdAt', 'description', 'id', 'name', 'status', 'value']);
    assert.equal(key.name, 'server');
    assert.equal(key.description, 'backend integration');
    assert.equal(key.status, 'ACTIVE');
    assert.match(key.value, /^pixflow_[0-9A-Za-z]{32,}$/);
    assert.ok(!Number.isNaN(Date.parse(key.createdAt)));

    // The key authenticates a request...
    const listed = await api.request<{ apiKeys: ApiKeyBody[] }>('GET', '/v1/api-keys', { token: key.value });
    assert.equal(listed.status, 200);
    const item = listed.body.apiKeys.find((k) => k.id === key.id);
    assert.ok(item);
    // ...and the list never shows the value: prefix, asterisks, last four.
    assert.equal(item.value, `pixflow_********${key.value.slice(-4)}`);
    assert.notEqual(item.value, key.value);
    assert.ok(!JSON.stringify(listed.body).includes(key.value));
    assert.ok(item.lastUsedAt, 'lastUsedAt set by the authenticated request');

    const deleted = await api.request<ErrorBody>('DELETE', `/v1/api-keys/${key.id}`, { token: a.token });
    assert.equal(deleted.status, 200);
    assert.equal(typeof deleted.body.message, 'string');

    const after = await api.request<ErrorBody>('GET', '/v1/api-keys', { token: key.value });
    assert.equal(after.status, 401);
    assert.equal(typeof after.body.message, 'string');

    const again = await api.request('DELETE', `/v1/api-keys/${key.id}`, { token: a.token });
    assert.equal(again.status, 404);
  });

  it('lists keys newest first', async () => {
    const m = await api.createMerchant();
    const first = await api.createApiKey(m.token, 'first');
    const second = await api.createApiKey(m.token, 'second');
    const res = await api.request<{ apiKeys: ApiKeyBody[] }>('GET', '/v1/api-keys', { token: m.token });
    assert.deepEqual(
      res.body.apiKeys.map((k) => k.id),
      [second.id, first.id],
    );
    assert.equal(res.body.apiKeys[0]?.description, '');
  });

  it('refuses an API key for creating or deleting keys (403)', async () => {
    const key = await api.createApiKey(a.token);
    const create = await api.request<ErrorBody>('POST', '/v1/api-keys', { token: key.value, body: { name: 'x' } });
    assert.equal(create.status, 403);
    assert.ok(create.body.message);
    const del = await api.request('DELETE', `/v1/api-keys/${key.id}`, { token: key.value });
    assert.equal(del.status, 403);
  });

  it("keeps merchants apart: B neither sees nor deletes A's key (404)", async () => {
    const key = await api.createApiKey(a.token, 'a-only');
    const listB = await api.request<{ apiKeys: ApiKeyBody[] }>('GET', '/v1/api-keys', { token: b.token });
    assert.ok(!listB.body.apiKeys.some((k) => k.id === key.id));
    const del = await api.request<ErrorBody>('DELETE', `/v1/api-keys/${key.id}`, { token: b.token });
    assert.equal(del.status, 404);
    // A's key still works.
    assert.equal((await api.request('GET', '/v1/api-keys', { token: key.value })).status, 200);
  });

  it('validates the body: name required, ≤ 100 chars; description ≤ 500', async () => {
    const missing = await api.request<ErrorBody>('POST', '/v1/api-keys', { token: a.token, body: {} });
    assert.equal(missing.status, 400);
    assert.match(missing.body.message, /name/);
    const long = await api.request<ErrorBody>('POST', '/v1/api-keys', {
      token: a.token,
      body: { name: 'x'.repeat(101) },
    });
    assert.equal(long.status, 400);
    const desc = await api.request<ErrorBody>('POST', '/v1/api-keys', {
      token: a.token,
      body: { name: 'ok', description: 'x'.repeat(501) },
    });
    assert.equal(desc.status, 400);
    assert.match(desc.body.message, /description/);
  });

  it('refuses an unknown pixflow_ key with 401', async () => {
    const res = await api.request('GET', '/v1/api-keys', { token: 'pixflow_' + 'A'.repeat(40) });
    assert.equal(res.status, 401);
  });

  it('enforces MAX_API_KEYS_PER_MERCHANT with 400', async () => {
    const small = await startApi({ config: { MAX_API_KEYS_PER_MERCHANT: 2 } });
    try {
      const m = await small.createMerchant();
      await small.createApiKey(m.token);
      await small.createApiKey(m.token);
      const third = await small.request<ErrorBody>('POST', '/v1/api-keys', { token: m.token, body: { name: 'third' } });
      assert.equal(third.status, 400);
      assert.match(third.body.message, /limit/i);
    } finally {
      await small.close();
    }
  });

  it('stores neither the key value nor anything derived without the pepper', async () => {
    const key = await api.createApiKey(a.token);
    const rows = await api.knex('api_keys').select('*');
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(key.value), 'API key value found in clear');
    assert.ok(!dump.includes(key.value.slice('pixflow_'.length)), 'API key random part found in clear');
  });
});
