/**
 * Webhook management over real HTTP: the contract of every endpoint, masking, validation, limits,
 * merchant scoping, the 20 newest logs, and the production address rule at registration and at
 * delivery (DNS rebinding).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { WEBHOOK_EVENT_TYPES } from '../../src/contracts/webhook-events';
import { createWebhooksService } from '../../src/services/webhooks/webhooks';
import { webhookRoutes } from '../../src/http/routes/webhooks';
import { startApi, type TestApi } from '../support/api';
import { eventually } from '../support/charges';
import {
  SAMPLE_EVENT_DATA,
  WEBHOOKS_TEST_CONFIG,
  webhookStack,
  type CreatedWebhook,
  type WebhookStack,
} from '../support/webhooks';
import { assertErrorBody } from '../support/errors';

interface ListedWebhook extends Omit<CreatedWebhook, 'secret'> {
  secret: string;
  updatedAt: string;
  logs: Array<Record<string, unknown>>;
}

describe('webhook management API', function () {
  this.timeout(120_000);
  let s: WebhookStack;
  let production: TestApi;

  before(async () => {
    s = await webhookStack();
    // The same routes with the production address rule on (NODE_ENV=production forces it).
    production = await startApi({
      deps: {
        routes: [
          webhookRoutes(
            createWebhooksService({
              knex: s.knex,
              config: { ...WEBHOOKS_TEST_CONFIG, WEBHOOK_REQUIRE_PUBLIC_HTTPS: true },
              resolve: s.resolve,
            }),
          ),
        ],
      },
    });
  });

  const path = (label: string): string => `/${label}-${crypto.randomBytes(4).toString('hex')}`;
  const list = async (token: string): Promise<ListedWebhook[]> => {
    const res = await s.api.request<{ webhooks: ListedWebhook[] }>('GET', '/v1/webhooks/merchant', { token });
    assert.equal(res.status, 200);
    return res.body.webhooks;
  };

  it('lists every event of the catalogue with their category and a Portuguese description', async () => {
    const m = await s.api.createMerchant();
    const key = await s.api.createApiKey(m.token);
    const res = await s.api.request<{ events: Array<{ event: string; description: string; category: string }> }>(
      'GET',
      '/v1/webhooks/merchant/events',
      { token: key.value },
    );
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.events.map((e) => e.event),
      [...WEBHOOK_EVENT_TYPES],
    );
    const category = Object.fromEntries(res.body.events.map((e) => [e.event, e.category]));
    assert.equal(category['charge.paid'], 'Cobranças');
    assert.equal(category['withdraw.refunded'], 'Saques');
    assert.equal(category['pixkey.updated'], 'Chave PIX');
    assert.equal(category['infraction.refund_completed'], 'Infrações');
    for (const e of res.body.events) {
      assert.deepEqual(Object.keys(e).sort(), ['category', 'description', 'event']);
      assert.ok(e.description.length > 10);
    }
    assert.equal((await s.api.request('GET', '/v1/webhooks/merchant/events')).status, 401);
  });

  it('creates with a JWT or an API key: the full secret once, ACTIVE, [] for all events', async () => {
    const m = await s.api.createMerchant();
    const byJwt = await s.api.request<{ webhook: CreatedWebhook }>('POST', '/v1/webhooks/merchant', {
      token: m.token,
      body: { url: s.receiver.url('/jwt'), name: 'ERP', events: ['charge.paid', 'charge.paid', 'withdraw.failed'] },
    });
    assert.equal(byJwt.status, 201);
    const w = byJwt.body.webhook;
    assert.deepEqual(Object.keys(w).sort(), ['createdAt', 'events', 'id', 'name', 'secret', 'status', 'url']);
    assert.match(w.id, /^wh_/);
    assert.match(w.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(w.status, 'ACTIVE');
    assert.equal(w.name, 'ERP');
    assert.deepEqual(w.events, ['charge.paid', 'withdraw.failed']);
    assert.equal(new Date(w.createdAt).toISOString(), w.createdAt);

    const key = await s.api.createApiKey(m.token);
    const byKey = await s.api.request<{ webhook: CreatedWebhook }>('POST', '/v1/webhooks/merchant', {
      token: key.value,
      body: { url: s.receiver.url('/key') },
    });
    assert.equal(byKey.status, 201);
    assert.deepEqual(byKey.body.webhook.events, []);
    assert.equal(byKey.body.webhook.name, null);
  });

  it('lists newest first with masked secrets and never the full one', async () => {
    const m = await s.api.createMerchant();
    const a = await s.createWebhook(m.token, { path: path('a'), name: 'first' });
    const b = await s.createWebhook(m.token, { path: path('b') });
    const res = await s.api.request<{ webhooks: ListedWebhook[] }>('GET', '/v1/webhooks/merchant', { token: m.token });
    const hooks = res.body.webhooks;
    assert.deepEqual(
      hooks.map((h) => h.id),
      [b.id, a.id],
    );
    for (const [h, created] of [
      [hooks[0], b],
      [hooks[1], a],
    ] as const) {
      assert.ok(h);
      assert.deepEqual(Object.keys(h).sort(), [
        'createdAt',
        'events',
        'id',
        'logs',
        'name',
        'secret',
        'status',
        'updatedAt',
        'url',
      ]);
      assert.equal(h.secret, `${created.secret.slice(0, 6)}****${created.secret.slice(-4)}`);
      assert.deepEqual(h.logs, []);
    }
    const raw = JSON.stringify(res.body);
    assert.ok(!raw.includes(a.secret) && !raw.includes(b.secret));
  });

  it('carries only the 20 newest delivery logs per webhook, with the log fields', async () => {
    const m = await s.api.createMerchant();
    const hook = await s.createWebhook(m.token, { path: path('many') });
    for (let i = 0; i < 23; i++)
      await s.publish(m.merchantId, 'pixkey.updated', SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>);
    await eventually(async () => {
      const rows = await s.knex('webhook_delivery_logs').where({ webhook_id: hook.id });
      return rows.length === 23 ? true : undefined;
    }, '23 delivery logs');
    const newest = (await s
      .knex('webhook_delivery_logs')
      .where({ webhook_id: hook.id })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(20)
      .pluck('id')) as string[];
    const [listed] = await list(m.token);
    assert.ok(listed);
    assert.equal(listed.logs.length, 20);
    assert.deepEqual(
      listed.logs.map((l) => l.id),
      newest,
    );
    const log = listed.logs[0] as Record<string, unknown>;
    assert.deepEqual(Object.keys(log).sort(), [
      'attempts',
      'createdAt',
      'deliveryId',
      'error',
      'event',
      'id',
      'payload',
      'response',
      'statusCode',
      'success',
      'url',
    ]);
    assert.equal(log.event, 'pixkey.updated');
    assert.equal(log.url, hook.url);
    assert.equal(log.statusCode, 200);
    assert.equal(log.attempts, 1);
    assert.equal(log.success, true);
    assert.equal(log.response, 'ok');
    assert.equal((JSON.parse(log.payload as string) as { event: string }).event, 'pixkey.updated');
  });

  it('patches only the fields sent: null removes the name, [] returns to all events, status toggles', async () => {
    const m = await s.api.createMerchant();
    const hook = await s.createWebhook(m.token, { path: path('patch'), name: 'old', events: ['charge.paid'] });
    const patch = (body: unknown) =>
      s.api.request<{ webhook: Record<string, unknown> }>('PATCH', `/v1/webhooks/merchant/${hook.id}`, {
        token: m.token,
        body,
      });
    const renamed = await patch({ name: 'x'.repeat(100) });
    assert.equal(renamed.status, 200);
    assert.deepEqual(Object.keys(renamed.body.webhook).sort(), [
      'createdAt',
      'events',
      'id',
      'name',
      'status',
      'updatedAt',
      'url',
    ]);
    assert.equal(renamed.body.webhook.name, 'x'.repeat(100));
    assert.deepEqual(renamed.body.webhook.events, ['charge.paid']);
    const unnamed = await patch({ name: null });
    assert.equal(unnamed.body.webhook.name, null);
    assert.deepEqual((await patch({ events: [] })).body.webhook.events, []);
    assert.equal((await patch({ status: 'INACTIVE' })).body.webhook.status, 'INACTIVE');
    const moved = await patch({ url: s.receiver.url('/moved'), status: 'ACTIVE' });
    assert.equal(moved.body.webhook.url, s.receiver.url('/moved'));
    assert.equal(moved.body.webhook.status, 'ACTIVE');
    assert.equal(moved.body.webhook.name, null, 'fields not sent are kept');
    assert.equal((await patch({})).status, 200);
  });

  it('refuses invalid input with 400 {message} naming the field', async () => {
    const m = await s.api.createMerchant();
    const hook = await s.createWebhook(m.token, { path: path('valid') });
    const cases: Array<[string, string, unknown, RegExp]> = [
      ['POST', '/v1/webhooks/merchant', {}, /^url is required/],
      ['POST', '/v1/webhooks/merchant', { url: 'not a url' }, /^url must be an absolute URL/],
      ['POST', '/v1/webhooks/merchant', { url: 'ftp://example.com/x' }, /^url must be an http or https URL/],
      [
        'POST',
        '/v1/webhooks/merchant',
        { url: 'https://example.com/' + 'a'.repeat(2048) },
        /^url must be at most 2048/,
      ],
      [
        'POST',
        '/v1/webhooks/merchant',
        { url: s.receiver.url('/x'), events: ['charge.created'] },
        /^events\[0\] must be one of/,
      ],
      [
        'POST',
        '/v1/webhooks/merchant',
        { url: s.receiver.url('/x'), events: 'charge.paid' },
        /^events must be an array/,
      ],
      [
        'POST',
        '/v1/webhooks/merchant',
        { url: s.receiver.url('/x'), name: 'x'.repeat(101) },
        /^name must be at most 100/,
      ],
      ['POST', '/v1/webhooks/merchant', { url: 42 }, /^url must be a string/],
      ['PATCH', `/v1/webhooks/merchant/${hook.id}`, { status: 'PAUSED' }, /^status must be one of ACTIVE, INACTIVE/],
      ['PATCH', `/v1/webhooks/merchant/${hook.id}`, { events: null }, /^events must be an array/],
      ['PATCH', `/v1/webhooks/merchant/${hook.id}`, { url: 'nope' }, /^url must be an absolute URL/],
      ['GET', `/v1/webhooks/merchant/${hook.id}/deliveries?limit=0`, undefined, /^limit must be >= 1/],
    ];
    for (const [method, url, body, message] of cases) {
      const res = await s.api.request(method, url, { token: m.token, body });
      assert.equal(res.status, 400, `${method} ${url} ${JSON.stringify(body)}`);
      assertErrorBody(res.body);
      assert.match(res.body.message, message);
    }
    const malformed = await s.api.request('POST', '/v1/webhooks/merchant', { token: m.token, rawBody: '{"url":' });
    assert.equal(malformed.status, 400);
  });

  it('refuses more than MAX_WEBHOOKS_PER_MERCHANT with 400, also under parallel requests', async () => {
    const m = await s.api.createMerchant();
    const max = WEBHOOKS_TEST_CONFIG.MAX_WEBHOOKS_PER_MERCHANT;
    const results = await Promise.all(
      Array.from({ length: max + 5 }, (_, i) =>
        s.api.request('POST', '/v1/webhooks/merchant', {
          token: m.token,
          body: { url: s.receiver.url(`/limit-${i}`) },
        }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 201).length, max);
    const refused = results.filter((r) => r.status === 400);
    assert.equal(refused.length, 5);
    assert.match(refused[0]?.body.message ?? '', /limit/i);
    assert.equal((await list(m.token)).length, max);
  });

  it("another merchant cannot see, patch, delete or touch a merchant's webhook (404)", async () => {
    const owner = await s.api.createMerchant();
    const other = await s.api.createMerchant();
    const hook = await s.createWebhook(owner.token, { path: path('mine') });
    assert.deepEqual(await list(other.token), []);
    const attempts: Array<[string, string, unknown]> = [
      ['PATCH', `/v1/webhooks/merchant/${hook.id}`, { status: 'INACTIVE' }],
      ['DELETE', `/v1/webhooks/merchant/${hook.id}`, undefined],
      ['GET', `/v1/webhooks/merchant/${hook.id}/deliveries`, undefined],
      ['POST', `/v1/webhooks/merchant/${hook.id}/rotate-secret`, undefined],
      ['POST', `/v1/webhooks/merchant/${hook.id}/deliveries/whd_x/redeliver`, undefined],
    ];
    for (const [method, url, body] of attempts) {
      const res = await s.api.request(method, url, { token: other.token, body });
      assert.equal(res.status, 404, `${method} ${url}`);
      assert.equal(res.body.message, 'Webhook not found');
    }
    const [still] = await list(owner.token);
    assert.equal(still?.status, 'ACTIVE');
    assert.equal(
      (await s.api.request('PATCH', '/v1/webhooks/merchant/wh_unknown', { token: owner.token, body: {} })).status,
      404,
    );
  });

  it('deletes: 200 {message}, gone from the list, a second delete is 404', async () => {
    const m = await s.api.createMerchant();
    const hook = await s.createWebhook(m.token, { path: path('bye') });
    const res = await s.api.request<{ message: string }>('DELETE', `/v1/webhooks/merchant/${hook.id}`, {
      token: m.token,
    });
    assert.equal(res.status, 200);
    assert.equal(typeof res.body.message, 'string');
    assert.deepEqual(await list(m.token), []);
    assert.equal((await s.api.request('DELETE', `/v1/webhooks/merchant/${hook.id}`, { token: m.token })).status, 404);
  });

  it('(ext) pages through deliveries newest first; redelivery of one in progress is 409, on an INACTIVE webhook 400', async () => {
    const m = await s.api.createMerchant();
    const p = path('pages');
    const hook = await s.createWebhook(m.token, { path: p });
    const events: string[] = [];
    for (let i = 0; i < 3; i++)
      events.push(
        await s.publish(m.merchantId, 'pixkey.updated', SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>),
      );
    await s.receiver.waitFor(p, 3);
    const first = await s.api.request<{
      page: number;
      limit: number;
      total: number;
      deliveries: Array<Record<string, unknown>>;
    }>('GET', `/v1/webhooks/merchant/${hook.id}/deliveries?limit=2`, { token: m.token });
    assert.equal(first.status, 200);
    assert.equal(first.body.total, 3);
    assert.equal(first.body.deliveries.length, 2);
    assert.deepEqual(Object.keys(first.body.deliveries[0] as object).sort(), [
      'attempts',
      'completedAt',
      'createdAt',
      'event',
      'eventId',
      'id',
      'lastError',
      'lastStatusCode',
      'status',
      'updatedAt',
    ]);
    assert.equal(first.body.deliveries[0]?.eventId, events[2]);
    const second = await s.api.request<{ deliveries: Array<{ eventId: string }> }>(
      'GET',
      `/v1/webhooks/merchant/${hook.id}/deliveries?limit=2&page=2`,
      {
        token: m.token,
      },
    );
    assert.deepEqual(
      second.body.deliveries.map((d) => d.eventId),
      [events[0]],
    );
    // A page past the end is empty with its total (docs/api.md "Pagination limits"); the total is the
    // trigger-kept count, equal to a count of the rows.
    for (const q of ['limit=2&page=3', 'page=1000000']) {
      const past = await s.api.request<{ total: number; deliveries: unknown[] }>(
        'GET',
        `/v1/webhooks/merchant/${hook.id}/deliveries?${q}`,
        { token: m.token },
      );
      assert.deepEqual([past.status, past.body.total, past.body.deliveries], [200, 3, []], q);
    }
    const counted = await s.api
      .knex('list_counts')
      .where({ list: 'webhook_deliveries', owner_id: hook.id })
      .sum({ n: 'n' })
      .first();
    assert.equal(Number(counted?.n), 3);

    s.receiver.script(p, [], { status: 500 });
    const eventId = await s.publish(
      m.merchantId,
      'pixkey.updated',
      SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>,
    );
    const pending = await s.startedDelivery(eventId, hook.id);
    const busy = await s.api.request('POST', `/v1/webhooks/merchant/${hook.id}/deliveries/${pending.id}/redeliver`, {
      token: m.token,
    });
    assert.equal(busy.status, 409);
    await s.api.request('PATCH', `/v1/webhooks/merchant/${hook.id}`, { token: m.token, body: { status: 'INACTIVE' } });
    assert.equal((await s.deliveryResult(pending.id)).status, 'CANCELED');
    const inactive = await s.api.request(
      'POST',
      `/v1/webhooks/merchant/${hook.id}/deliveries/${pending.id}/redeliver`,
      { token: m.token },
    );
    assert.equal(inactive.status, 400);
    const unknown = await s.api.request('POST', `/v1/webhooks/merchant/${hook.id}/deliveries/whd_nope/redeliver`, {
      token: m.token,
    });
    assert.equal(unknown.status, 404);
  });

  describe('production address rule', () => {
    const create = (token: string, url: string) =>
      production.request<{ webhook: CreatedWebhook }>('POST', '/v1/webhooks/merchant', { token, body: { url } });

    it('refuses http:// and private, loopback, link-local, multicast and mapped addresses with 400', async () => {
      const m = await production.createMerchant();
      const host = `private-${crypto.randomBytes(3).toString('hex')}.fake-dns.test`;
      s.fakeDns.set(host, ['93.184.216.34', '192.168.0.10']);
      const refused = [
        'http://93.184.216.34/hook',
        'https://127.0.0.1/hook',
        'https://10.1.2.3/hook',
        'https://172.20.0.1/hook',
        'https://169.254.169.254/latest',
        'https://224.0.0.1/hook',
        'https://0.0.0.0/hook',
        'https://[::1]/hook',
        'https://[fe80::1]/hook',
        'https://[::ffff:127.0.0.1]/hook',
        `https://${host}/hook`,
        'https://nowhere.fake-dns.test/hook',
      ];
      for (const url of refused) {
        const res = await create(m.token, url);
        assert.equal(res.status, 400, url);
        assert.match((res.body as unknown as { message: string }).message, /^url /);
      }
      const ok = await create(m.token, 'https://93.184.216.34/hook');
      assert.equal(ok.status, 201);
      const moved = await production.request('PATCH', `/v1/webhooks/merchant/${ok.body.webhook.id}`, {
        token: m.token,
        body: { url: 'https://192.168.1.1/hook' },
      });
      assert.equal(moved.status, 400);
    });

    it('refuses at delivery a host that resolved to a public address at registration and to 127.0.0.1 now', async () => {
      const m = await production.createMerchant();
      const host = `rebind-${crypto.randomBytes(3).toString('hex')}.fake-dns.test`;
      s.fakeDns.set(host, ['93.184.216.34']);
      const res = await create(m.token, `https://${host}/hook`);
      assert.equal(res.status, 201);
      const hook = res.body.webhook;
      s.withDeliverySettings(hook.id, { requirePublicHttps: true });
      // The name now points at the loopback interface (and an IPv4-mapped form of it).
      s.fakeDns.set(host, ['::ffff:127.0.0.1', '127.0.0.1']);
      const eventId = await s.publish(
        m.merchantId,
        'pixkey.updated',
        SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>,
      );
      const delivery = await s.startedDelivery(eventId, hook.id);
      assert.equal((await s.deliveryResult(delivery.id)).status, 'FAILED');
      const logs = (await s
        .knex('webhook_delivery_logs')
        .where({ delivery_id: delivery.id })
        .orderBy('attempt')) as Array<{
        status_code: number | null;
        success: boolean;
        error: string;
      }>;
      assert.equal(logs.length, 3);
      for (const l of logs) {
        assert.equal(l.status_code, null);
        assert.equal(l.success, false);
        assert.match(l.error, /refused: .* resolves to ::ffff:127\.0\.0\.1, which is not a public address/);
      }
    });
  });
});
