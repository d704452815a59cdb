/**
 * OWASP API7 (server-side request forgery) on webhook URLs under the production rule
 * (docs/api.md "Webhooks", Addresses): https only, and the host must be, or resolve only to, public unicast
 * addresses — including every spelling of a private address a URL parser accepts (decimal,
 * octal, hex, shortened IPv4, IPv4-mapped IPv6) — at registration (400, nothing stored) and again on
 * the address a delivery connects to (DNS rebinding gets nothing).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startApi, type TestApi } from '../support/api';
import { SAMPLE_EVENT_DATA, WEBHOOKS_TEST_CONFIG, webhookStack, type WebhookStack } from '../support/webhooks';
import { createWebhooksService } from '../../src/services/webhooks/webhooks';
import { webhookRoutes } from '../../src/http/routes/webhooks';
import { assertErrorBody } from '../support/errors';

describe('security: SSRF on webhook URLs (production rule)', function () {
  this.timeout(120_000);
  let s: WebhookStack;
  let production: TestApi;

  before(async () => {
    s = await webhookStack();
    production = await startApi({
      deps: {
        routes: [
          webhookRoutes(
            createWebhooksService({
              knex: s.knex,
              config: { ...WEBHOOKS_TEST_CONFIG, isProduction: true },
              resolve: s.resolve,
            }),
          ),
        ],
      },
    });
  });
  after(() => production.close());

  const create = (token: string, url: string) =>
    production.request<Record<string, unknown>>('POST', '/v1/webhooks/merchant', { token, body: { url } });

  it('refuses http, private, loopback, link-local, metadata, mapped and oddly spelled addresses with 400, storing nothing', async () => {
    const m = await production.createMerchant();
    const privateName = `internal-${crypto.randomBytes(3).toString('hex')}.fake-dns.test`;
    s.fakeDns.set(privateName, ['10.0.0.5']);
    const refused = [
      'http://93.184.216.34/hook', // plain http, even to a public address
      'ftp://93.184.216.34/hook',
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://10.0.0.1/hook',
      'https://172.16.0.1/hook',
      'https://192.168.1.1/hook',
      'https://100.64.0.1/hook', // carrier-grade NAT
      'https://169.254.169.254/latest/meta-data/', // cloud metadata
      'https://169.254.170.2/v2/credentials',
      'https://0.0.0.0/hook',
      'https://255.255.255.255/hook',
      'https://2130706433/hook', // 127.0.0.1 in decimal
      'https://0177.0.0.1/hook', // octal
      'https://0x7f.0.0.1/hook', // hex
      'https://0x7f000001/hook',
      'https://127.1/hook', // shortened
      'https://017700000001/hook',
      'https://2852039166/latest', // 169.254.169.254 in decimal
      'https://[::1]/hook',
      'https://[::]/hook',
      'https://[fe80::1]/hook',
      'https://[fc00::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:7f00:1]/hook', // mapped, hex form
      'https://[::ffff:a9fe:a9fe]/hook', // mapped metadata address
      'https://[::ffff:10.0.0.1]/hook',
      'https://user:pass@127.0.0.1/hook',
      `https://${privateName}/hook`,
    ];
    for (const url of refused) {
      const res = await create(m.token, url);
      assert.equal(res.status, 400, `${url}: ${res.status} ${JSON.stringify(res.body)}`);
      assertErrorBody(res.body, url);
    }
    assert.equal((await s.knex('webhooks').where({ merchant_id: m.merchantId })).length, 0);

    // The same rule on PATCH: a registered webhook cannot be moved inside.
    const ok = await create(m.token, 'https://93.184.216.34/hook');
    assert.equal(ok.status, 201);
    const id = (ok.body.webhook as { id: string }).id;
    for (const url of ['https://2130706433/hook', 'https://[::ffff:a9fe:a9fe]/', `https://${privateName}/x`]) {
      const moved = await production.request('PATCH', `/v1/webhooks/merchant/${id}`, { token: m.token, body: { url } });
      assert.equal(moved.status, 400, url);
    }
    const row = (await s.knex('webhooks').where({ id }).first('url')) as { url: string };
    assert.equal(row.url, 'https://93.184.216.34/hook');
  });

  it('a name that resolved to a public address at registration and to the metadata address at delivery gets nothing', async () => {
    const m = await production.createMerchant();
    const host = `rebind-${crypto.randomBytes(3).toString('hex')}.fake-dns.test`;
    s.fakeDns.set(host, ['93.184.216.34']);
    const res = await create(m.token, `https://${host}/hook`);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const hook = res.body.webhook as { id: string };
    s.withDeliverySettings(hook.id, { requirePublicHttps: true });
    s.fakeDns.set(host, ['169.254.169.254']);
    const eventId = await s.publish(
      m.merchantId,
      'pixkey.updated',
      SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>,
    );
    const delivery = await s.startedDelivery(eventId, hook.id);
    assert.equal((await s.deliveryResult(delivery.id)).status, 'FAILED');
    const logs = (await s.knex('webhook_delivery_logs').where({ delivery_id: delivery.id })) as Array<{
      status_code: number | null;
      error: string;
    }>;
    assert.ok(logs.length > 0);
    for (const l of logs) {
      assert.equal(l.status_code, null);
      assert.match(l.error, /169\.254\.169\.254, which is not a public address/);
    }
  });
});
