/**
 * Routes that decrypt a webhook's secret, on a server whose WEBHOOK_SECRET_KEYS cannot read it
 * (docs/operations.md "Webhook secret encryption"): a clear 503 `webhook_secret_unavailable`
 * naming the webhook and the key id, never a 500; the routes that need no secret still work.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { webhookRoutes } from '../../src/http/routes/webhooks';
import { createWebhooksService } from '../../src/services/webhooks/webhooks';
import { startApi, type TestApi } from '../support/api';
import { getTestDb } from '../support/db';
import { WEBHOOKS_TEST_CONFIG } from '../support/webhooks';

interface ErrorAnswer {
  message: string;
  code: string;
  requestId: string;
}

describe('API: a webhook secret this server cannot decrypt', function () {
  this.timeout(60_000);
  let knex: Knex;
  /** Encrypts under the embedded dev ring, as the webhook was registered. */
  let dev: TestApi;
  const servers: TestApi[] = [];

  /** The same routes on a server with another key ring. */
  async function serverWith(secretKeys: string): Promise<TestApi> {
    const service = createWebhooksService({
      knex,
      config: { ...WEBHOOKS_TEST_CONFIG, WEBHOOK_SECRET_KEYS: secretKeys },
    });
    const api = await startApi({ deps: { routes: [webhookRoutes(service)] } });
    servers.push(api);
    return api;
  }

  before(async () => {
    ({ knex } = await getTestDb());
    dev = await startApi({
      deps: { routes: [webhookRoutes(createWebhooksService({ knex, config: WEBHOOKS_TEST_CONFIG }))] },
    });
    servers.push(dev);
  });
  after(async () => {
    for (const api of servers) await api.close();
  });

  for (const [label, ring, why] of [
    ['a key missing from the ring', `k-other:${crypto.randomBytes(32).toString('base64')}`, 'key "dev"'],
    ['another key under the same id', `dev:${crypto.randomBytes(32).toString('base64')}`, 'key "dev"'],
  ] as const) {
    it(`${label}: GET /v1/webhooks/merchant and rotate-secret answer 503 naming the key; PATCH still works`, async () => {
      const m = await dev.createMerchant();
      const created = await dev.request<{ webhook: { id: string } }>('POST', '/v1/webhooks/merchant', {
        token: m.token,
        body: { url: 'http://127.0.0.1:9/hook' },
      });
      assert.equal(created.status, 201);
      const id = created.body.webhook.id;
      const stored = (await knex('webhooks').where({ id }).first('secret_ciphertext')) as { secret_ciphertext: string };
      const other = await serverWith(ring);

      const list = await other.request<ErrorAnswer>('GET', '/v1/webhooks/merchant', { token: m.token });
      assert.equal(list.status, 503, JSON.stringify(list.body));
      assert.equal(list.body.code, 'webhook_secret_unavailable');
      assert.ok(list.body.message.includes(why), list.body.message);
      assert.ok(list.body.message.includes(id), list.body.message);
      assert.equal(typeof list.body.requestId, 'string');

      const rotate = await other.request<ErrorAnswer>('POST', `/v1/webhooks/merchant/${id}/rotate-secret`, {
        token: m.token,
      });
      assert.deepEqual([rotate.status, rotate.body.code], [503, 'webhook_secret_unavailable']);
      assert.deepEqual(await knex('webhooks').where({ id }).first('secret_ciphertext'), stored, 'nothing rotated');

      // What needs no secret still answers: the merchant can pause or delete the webhook.
      const paused = await other.request('PATCH', `/v1/webhooks/merchant/${id}`, {
        token: m.token,
        body: { status: 'INACTIVE' },
      });
      assert.equal(paused.status, 200);
      // The server that holds the key reads it as before.
      assert.equal((await dev.request('GET', '/v1/webhooks/merchant', { token: m.token })).status, 200);
    });
  }
});
