/**
 * OWASP API1 (broken object-level authorization) and API5 (function-level): every route with an id
 * in its path, enumerated from the routers of the running apps, is tried by another merchant (its
 * JWT and its API key) on the first merchant's real objects. The answer is 404 `{message}` for
 * merchant routes and 403 `{message}` for admin routes (docs/api.md "Errors":
 * another merchant's id is 404; a USER on admin routes is 403), and the first merchant's rows are
 * byte-for-byte what they were.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { newId } from '../../src/lib/ids';
import type { MerchantFixture, TestApi } from '../support/api';
import { DEST, fundedMerchant, withdrawalsStack } from '../support/withdrawals';
import { medStack } from '../support/med';
import { SAMPLE_EVENT_DATA, webhookStack } from '../support/webhooks';
import { routesOf, type RouteEntry } from './routes';
import { ENDPOINTS } from '../../src/openapi/document';
import { assertErrorBody } from '../support/errors';

interface Target {
  api: TestApi;
  /** The concrete path, with the victim's ids. */
  path: string;
  body?: unknown;
  /** Admin routes: a USER is refused whatever the id. */
  admin?: boolean;
  /** Routes that want a JWT: an API key is 403 before any lookup. */
  jwtOnly?: boolean;
}

describe('security: object-level authorization on every :id route', function () {
  this.timeout(120_000);
  let victim: MerchantFixture;
  let attacker: MerchantFixture;
  let attackerKey: string;
  let targets: Map<string, Target>;
  let mounted: RouteEntry[];
  let knex: Knex;
  let ids: Record<string, string>;

  before(async () => {
    const [w, wh, med] = await Promise.all([withdrawalsStack(), webhookStack(), medStack()]);
    knex = w.api.knex;
    victim = await fundedMerchant(w.api, 100_000);
    attacker = await fundedMerchant(w.api, 100_000);
    attackerKey = (await w.api.createApiKey(attacker.token)).value;

    const charge = await w.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: victim.token,
      body: { amount: 1500, description: 'victim charge' },
    });
    assert.equal(charge.status, 201, JSON.stringify(charge.body));
    const withdrawal = await w.api.request<{ withdraw: { id: string } }>('POST', '/v1/merchants/me/withdrawals', {
      token: victim.token,
      body: { amount: 1000, ...DEST },
    });
    assert.equal(withdrawal.status, 201, JSON.stringify(withdrawal.body));
    const webhook = await wh.createWebhook(victim.token, { path: `/victim-${victim.merchantId}` });
    const eventId = await wh.publish(victim.merchantId, 'charge.paid', SAMPLE_EVENT_DATA['charge.paid']);
    const delivery = await wh.startedDelivery(eventId, webhook.id);
    await wh.deliveryResult(delivery.id);
    // The attacker's own webhook, to pair with the victim's delivery id.
    await wh.createWebhook(attacker.token, { path: `/attacker-${attacker.merchantId}` });
    const apiKey = await w.api.createApiKey(victim.token, 'victim key');
    const infractionId = newId('inf');
    await knex('infractions').insert({
      id: infractionId,
      merchant_id: victim.merchantId,
      acquirer_infraction_id: `acq-${infractionId}`,
      amount: 100,
      reason: 'fraude',
    });
    const pixKey = (await knex('pix_keys').where({ merchant_id: victim.merchantId }).first('id')) as { id: string };
    const defense = await storedDefense(knex, infractionId, victim.merchantId);

    ids = {
      charge: charge.body.charge.id,
      withdrawal: withdrawal.body.withdraw.id,
      webhook: webhook.id,
      delivery: delivery.id,
      apiKey: apiKey.id,
      infraction: infractionId,
      merchant: victim.merchantId,
      user: victim.userId,
      pixKey: pixKey.id,
      defense: defense.defenseId,
      defenseFile: defense.fileId,
    };

    const t = (api: TestApi, path: string, extra: Partial<Target> = {}): Target => ({ api, path, ...extra });
    targets = new Map<string, Target>([
      ['GET /v1/charges/:id', t(w.api, `/v1/charges/${ids.charge}`)],
      ['POST /v1/charges/:id/cancel', t(w.api, `/v1/charges/${ids.charge}/cancel`)],
      ['POST /v1/charges/:id/refund', t(w.api, `/v1/charges/${ids.charge}/refund`, { body: { amount: 100 } })],
      ['POST /v1/sandbox/charges/:id/pay', t(w.api, `/v1/sandbox/charges/${ids.charge}/pay`, { body: {} })],
      ['GET /v1/merchants/me/withdrawals/:id', t(w.api, `/v1/merchants/me/withdrawals/${ids.withdrawal}`)],
      [
        'POST /v1/sandbox/withdrawals/:id/complete',
        t(w.api, `/v1/sandbox/withdrawals/${ids.withdrawal}/complete`, { body: {} }),
      ],
      [
        'POST /v1/sandbox/withdrawals/:id/fail',
        t(w.api, `/v1/sandbox/withdrawals/${ids.withdrawal}/fail`, { body: {} }),
      ],
      [
        'POST /v1/sandbox/withdrawals/:id/return',
        t(w.api, `/v1/sandbox/withdrawals/${ids.withdrawal}/return`, { body: {} }),
      ],
      ['GET /v1/infractions/:id', t(med.api, `/v1/infractions/${ids.infraction}`)],
      [
        'POST /v1/infractions/:id/defenses',
        t(med.api, `/v1/infractions/${ids.infraction}/defenses`, { body: { defense: 'not mine' } }),
      ],
      [
        'GET /v1/infractions/:id/defenses/:defenseId/files/:fileId',
        t(med.api, `/v1/infractions/${ids.infraction}/defenses/${ids.defense}/files/${ids.defenseFile}`),
      ],
      ['POST /v1/sandbox/infractions/:id/accept', t(med.api, `/v1/sandbox/infractions/${ids.infraction}/accept`)],
      ['POST /v1/sandbox/infractions/:id/reject', t(med.api, `/v1/sandbox/infractions/${ids.infraction}/reject`)],
      ['POST /v1/sandbox/pix-keys/:id/activate', t(med.api, `/v1/sandbox/pix-keys/${ids.pixKey}/activate`)],
      ['POST /v1/sandbox/pix-keys/:id/deactivate', t(med.api, `/v1/sandbox/pix-keys/${ids.pixKey}/deactivate`)],
      [
        'PATCH /v1/webhooks/merchant/:id',
        t(wh.api, `/v1/webhooks/merchant/${ids.webhook}`, { body: { status: 'INACTIVE', name: 'owned' } }),
      ],
      ['DELETE /v1/webhooks/merchant/:id', t(wh.api, `/v1/webhooks/merchant/${ids.webhook}`)],
      ['GET /v1/webhooks/merchant/:id/deliveries', t(wh.api, `/v1/webhooks/merchant/${ids.webhook}/deliveries`)],
      [
        'POST /v1/webhooks/merchant/:id/deliveries/:deliveryId/redeliver',
        t(wh.api, `/v1/webhooks/merchant/${ids.webhook}/deliveries/${ids.delivery}/redeliver`),
      ],
      ['POST /v1/webhooks/merchant/:id/rotate-secret', t(wh.api, `/v1/webhooks/merchant/${ids.webhook}/rotate-secret`)],
      ['DELETE /v1/api-keys/:id', t(w.api, `/v1/api-keys/${ids.apiKey}`, { jwtOnly: true })],
      ['GET /v1/admin/merchants/:id', t(w.api, `/v1/admin/merchants/${ids.merchant}`, { admin: true })],
      [
        'PATCH /v1/admin/merchants/:id',
        t(w.api, `/v1/admin/merchants/${ids.merchant}`, { admin: true, body: { status: 'SUSPENDED' } }),
      ],
      [
        'POST /v1/admin/merchants/:id/adjustments',
        t(w.api, `/v1/admin/merchants/${ids.merchant}/adjustments`, {
          admin: true,
          body: { amount: -50_000, reason: 'steal' },
        }),
      ],
      [
        'POST /v1/admin/merchants/:id/pix-keys',
        t(w.api, `/v1/admin/merchants/${ids.merchant}/pix-keys`, {
          admin: true,
          body: { type: 'EMAIL', key: 'attacker@example.com' },
        }),
      ],
      [
        'PATCH /v1/admin/merchants/:id/pix-keys/:keyId',
        t(w.api, `/v1/admin/merchants/${ids.merchant}/pix-keys/${ids.pixKey}`, {
          admin: true,
          body: { status: 'INACTIVE' },
        }),
      ],
      ['GET /v1/admin/merchants/:id/users', t(w.api, `/v1/admin/merchants/${ids.merchant}/users`, { admin: true })],
      [
        'POST /v1/admin/merchants/:id/revoke-tokens',
        t(w.api, `/v1/admin/merchants/${ids.merchant}/revoke-tokens`, { admin: true }),
      ],
      [
        'POST /v1/admin/users/:id/revoke-tokens',
        t(w.api, `/v1/admin/users/${ids.user}/revoke-tokens`, { admin: true }),
      ],
      [
        'PATCH /v1/admin/users/:id',
        t(w.api, `/v1/admin/users/${ids.user}`, { admin: true, body: { status: 'DISABLED' } }),
      ],
    ]);
    // The routes mounted in every stack the suite runs (together they mount everything the service does).
    mounted = dedupe([...routesOf(w.api.app), ...routesOf(wh.api.app), ...routesOf(med.api.app)]).filter(
      // Static files of the reference page: the name is a file, not an object anyone owns.
      (r) => r.path.includes(':') && r.path !== '/docs/:asset',
    );
  });

  /** Everything the victim owns, as stored (the comparison is exact). */
  const snapshot = async (): Promise<string> => {
    const m = victim.merchantId;
    const tables: Record<string, unknown> = {};
    for (const table of [
      'charges',
      'withdrawals',
      'webhooks',
      'api_keys',
      'infractions',
      'infraction_defenses',
      'infraction_defense_files',
      'pix_keys',
      'users',
      'ledger_accounts',
      'ledger_transactions',
      'charge_refunds',
    ]) {
      tables[table] = await knex(table).where({ merchant_id: m }).orderBy('id');
    }
    tables.merchant = await knex('merchants').where({ id: m });
    tables.deliveries = await knex('webhook_deliveries').where({ webhook_id: ids.webhook }).orderBy('id');
    return JSON.stringify(tables);
  };

  it('knows every :id route the routers mount (a new route must be added here to pass)', () => {
    const known = [...targets.keys()].sort();
    const found = mounted.map((r) => `${r.method} ${r.path}`).sort();
    assert.deepEqual(found, known);
  });

  it("answers another merchant's JWT and API key with 404 (403 on admin routes), never data, and changes nothing", async () => {
    const before = await snapshot();
    for (const [route, target] of targets) {
      const method = route.split(' ')[0] as string;
      for (const [label, token] of [
        ['JWT', attacker.token],
        ['API key', attackerKey],
      ] as const) {
        const res = await target.api.request<Record<string, unknown>>(method, target.path, {
          token,
          ...(target.body === undefined ? {} : { body: target.body }),
        });
        const expected = target.admin || (target.jwtOnly && label === 'API key') ? 403 : 404;
        assert.equal(
          res.status,
          expected,
          `${route} with the other merchant's ${label}: ${res.status} ${JSON.stringify(res.body)}`,
        );
        assertErrorBody(res.body, `${route}: ${JSON.stringify(res.body)}`);
        for (const id of Object.values(ids)) {
          assert.ok(!JSON.stringify(res.body).includes(id) || target.path.includes(id), `${route} leaks ${id}`);
        }
      }
    }
    assert.equal(await snapshot(), before);
  });

  it("the victim's delivery under the attacker's own webhook is 404 too", async () => {
    const wh = await webhookStack();
    const own = (await knex('webhooks').where({ merchant_id: attacker.merchantId }).first('id')) as { id: string };
    const before = await snapshot();
    const res = await wh.api.request('POST', `/v1/webhooks/merchant/${own.id}/deliveries/${ids.delivery}/redeliver`, {
      token: attacker.token,
    });
    assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal(await snapshot(), before);
  });

  it('a charge or infraction of another merchant named in a body is 404 as well', async () => {
    const med = await medStack();
    const before = await snapshot();
    const res = await med.api.request('POST', '/v1/sandbox/infractions', {
      token: attacker.token,
      body: { chargeId: ids.charge },
    });
    assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal(await snapshot(), before);
  });

  it("the owner succeeds on every one of these routes (its documented 2xx) where the other merchant's request is refused", async function () {
    this.timeout(300_000);
    const w = await withdrawalsStack();
    const wh = await webhookStack();
    const med = await medStack();
    const admin = await w.api.adminToken();
    const until = async <T>(what: string, read: () => Promise<T | undefined>): Promise<T> => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const v = await read();
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const statusOf = (table: string, id: string, status: string) =>
      until(`${table} ${id} ${status}`, async () =>
        (await knex(table).where({ id }).first('status'))?.status === status ? true : undefined,
      );
    const newCharge = async (api: TestApi): Promise<string> => {
      const res = await api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
        token: victim.token,
        body: { amount: 2_000, description: 'owner' },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.charge.id;
    };
    const paidCharge = async (api: TestApi): Promise<string> => {
      const id = await newCharge(api);
      assert.equal(
        (await api.request('POST', `/v1/sandbox/charges/${id}/pay`, { token: victim.token, body: {} })).status,
        202,
      );
      await statusOf('charges', id, 'PAID');
      return id;
    };
    const newWithdrawal = async (): Promise<string> => {
      const res = await w.api.request<{ withdraw: { id: string } }>('POST', '/v1/merchants/me/withdrawals', {
        token: victim.token,
        body: { amount: 100, ...DEST },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.withdraw.id;
    };
    const openInfraction = async (): Promise<string> => {
      const chargeId = await paidCharge(med.api);
      const res = await med.api.request<{ infraction: { id: string } }>('POST', '/v1/sandbox/infractions', {
        token: victim.token,
        body: { chargeId },
      });
      assert.ok(res.status >= 200 && res.status < 300, JSON.stringify(res.body));
      return res.body.infraction.id;
    };
    const registeredKey = async (): Promise<string> => {
      const res = await med.api.request<{ pixKey: { id: string } }>(
        'POST',
        `/v1/admin/merchants/${victim.merchantId}/pix-keys`,
        {
          token: admin,
          body: { type: 'EMAIL', key: `owner-${newId('k')}@example.com`.toLowerCase() },
        },
      );
      assert.ok(res.status >= 200 && res.status < 300, JSON.stringify(res.body));
      await until('the key registered at the acquirer', async () =>
        (await knex('pix_keys').where({ id: res.body.pixKey.id }).first('acquirer_key_id'))?.acquirer_key_id
          ? true
          : undefined,
      );
      return res.body.pixKey.id;
    };

    type Case = { api: TestApi; path: string; body?: unknown };
    // Each case makes what the route needs in the state the route acts on (a PENDING charge to
    // cancel, a COMPLETED withdrawal to return, …); admin routes are the operator's, last because
    // they revoke the victim's tokens.
    const cases: Array<[string, () => Promise<Case>]> = [
      ['GET /v1/charges/:id', async () => ({ api: w.api, path: `/v1/charges/${ids.charge}` })],
      [
        'POST /v1/charges/:id/cancel',
        async () => ({ api: w.api, path: `/v1/charges/${await newCharge(w.api)}/cancel` }),
      ],
      [
        'POST /v1/charges/:id/refund',
        async () => ({ api: w.api, path: `/v1/charges/${await paidCharge(w.api)}/refund`, body: { amount: 100 } }),
      ],
      [
        'POST /v1/sandbox/charges/:id/pay',
        async () => ({ api: w.api, path: `/v1/sandbox/charges/${await newCharge(w.api)}/pay`, body: {} }),
      ],
      [
        'GET /v1/merchants/me/withdrawals/:id',
        async () => ({ api: w.api, path: `/v1/merchants/me/withdrawals/${ids.withdrawal}` }),
      ],
      [
        'POST /v1/sandbox/withdrawals/:id/complete',
        async () => ({ api: w.api, path: `/v1/sandbox/withdrawals/${await newWithdrawal()}/complete`, body: {} }),
      ],
      [
        'POST /v1/sandbox/withdrawals/:id/fail',
        async () => ({ api: w.api, path: `/v1/sandbox/withdrawals/${await newWithdrawal()}/fail`, body: {} }),
      ],
      [
        'POST /v1/sandbox/withdrawals/:id/return',
        async () => {
          const id = await newWithdrawal();
          assert.equal(
            (await w.api.request('POST', `/v1/sandbox/withdrawals/${id}/complete`, { token: victim.token, body: {} }))
              .status,
            202,
          );
          await statusOf('withdrawals', id, 'COMPLETED');
          return { api: w.api, path: `/v1/sandbox/withdrawals/${id}/return`, body: {} };
        },
      ],
      ['GET /v1/infractions/:id', async () => ({ api: med.api, path: `/v1/infractions/${ids.infraction}` })],
      [
        'POST /v1/infractions/:id/defenses',
        async () => ({
          api: med.api,
          path: `/v1/infractions/${await openInfraction()}/defenses`,
          rawBody: `--owner\r\nContent-Disposition: form-data; name="defense"\r\n\r\nMy own defense\r\n--owner--\r\n`,
          headers: { 'content-type': 'multipart/form-data; boundary=owner' },
        }),
      ],
      [
        'GET /v1/infractions/:id/defenses/:defenseId/files/:fileId',
        async () => ({
          api: med.api,
          path: `/v1/infractions/${ids.infraction}/defenses/${ids.defense}/files/${ids.defenseFile}`,
        }),
      ],
      [
        'POST /v1/sandbox/infractions/:id/accept',
        async () => ({ api: med.api, path: `/v1/sandbox/infractions/${await openInfraction()}/accept` }),
      ],
      [
        'POST /v1/sandbox/infractions/:id/reject',
        async () => ({ api: med.api, path: `/v1/sandbox/infractions/${await openInfraction()}/reject` }),
      ],
      [
        'POST /v1/sandbox/pix-keys/:id/activate',
        async () => ({ api: med.api, path: `/v1/sandbox/pix-keys/${await registeredKey()}/activate` }),
      ],
      [
        'POST /v1/sandbox/pix-keys/:id/deactivate',
        async () => ({ api: med.api, path: `/v1/sandbox/pix-keys/${await registeredKey()}/deactivate` }),
      ],
      [
        'PATCH /v1/webhooks/merchant/:id',
        async () => ({ api: wh.api, path: `/v1/webhooks/merchant/${ids.webhook}`, body: { name: 'owned' } }),
      ],
      [
        'GET /v1/webhooks/merchant/:id/deliveries',
        async () => ({ api: wh.api, path: `/v1/webhooks/merchant/${ids.webhook}/deliveries` }),
      ],
      [
        'POST /v1/webhooks/merchant/:id/deliveries/:deliveryId/redeliver',
        async () => ({
          api: wh.api,
          path: `/v1/webhooks/merchant/${ids.webhook}/deliveries/${ids.delivery}/redeliver`,
        }),
      ],
      [
        'POST /v1/webhooks/merchant/:id/rotate-secret',
        async () => ({ api: wh.api, path: `/v1/webhooks/merchant/${ids.webhook}/rotate-secret` }),
      ],
      [
        'DELETE /v1/webhooks/merchant/:id',
        async () => ({
          api: wh.api,
          path: `/v1/webhooks/merchant/${(await wh.createWebhook(victim.token, { path: `/owner-${newId('p')}` })).id}`,
        }),
      ],
      [
        'DELETE /v1/api-keys/:id',
        async () => ({ api: w.api, path: `/v1/api-keys/${(await w.api.createApiKey(victim.token, 'owner key')).id}` }),
      ],
      ['GET /v1/admin/merchants/:id', async () => ({ api: w.api, path: `/v1/admin/merchants/${ids.merchant}` })],
      [
        'PATCH /v1/admin/merchants/:id',
        async () => ({ api: w.api, path: `/v1/admin/merchants/${ids.merchant}`, body: { kycStatus: 'APPROVED' } }),
      ],
      [
        'POST /v1/admin/merchants/:id/adjustments',
        async () => ({
          api: w.api,
          path: `/v1/admin/merchants/${ids.merchant}/adjustments`,
          body: { amount: 100, reason: 'owner' },
        }),
      ],
      [
        'POST /v1/admin/merchants/:id/pix-keys',
        async () => ({
          api: w.api,
          path: `/v1/admin/merchants/${ids.merchant}/pix-keys`,
          body: { type: 'EMAIL', key: `owner-${newId('k')}@example.com`.toLowerCase() },
        }),
      ],
      [
        'PATCH /v1/admin/merchants/:id/pix-keys/:keyId',
        async () => ({
          api: w.api,
          path: `/v1/admin/merchants/${ids.merchant}/pix-keys/${ids.pixKey}`,
          body: { status: 'ACTIVE' },
        }),
      ],
      [
        'GET /v1/admin/merchants/:id/users',
        async () => ({ api: w.api, path: `/v1/admin/merchants/${ids.merchant}/users` }),
      ],
      [
        'PATCH /v1/admin/users/:id',
        async () => ({ api: w.api, path: `/v1/admin/users/${ids.user}`, body: { status: 'ACTIVE' } }),
      ],
      [
        'POST /v1/admin/users/:id/revoke-tokens',
        async () => ({ api: w.api, path: `/v1/admin/users/${ids.user}/revoke-tokens` }),
      ],
      [
        'POST /v1/admin/merchants/:id/revoke-tokens',
        async () => ({ api: w.api, path: `/v1/admin/merchants/${ids.merchant}/revoke-tokens` }),
      ],
    ];
    assert.deepEqual(
      cases.map(([route]) => route).sort(),
      [...targets.keys()].sort(),
      'a success case for every route checked above',
    );
    for (const [route, prepare] of cases) {
      const c: { api: TestApi; path: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } =
        await prepare();
      const method = route.split(' ')[0] as string;
      const opts = {
        ...(c.body === undefined ? {} : { body: c.body }),
        ...(c.rawBody === undefined ? {} : { rawBody: c.rawBody, headers: c.headers }),
      };
      const refusedWith = targets.get(route)?.admin ? 403 : 404;
      const other = await c.api.request(method, c.path, { token: attacker.token, ...opts });
      assert.equal(
        other.status,
        refusedWith,
        `${route} by the other merchant: ${other.status} ${JSON.stringify(other.body)}`,
      );
      const res = await c.api.request(method, c.path, {
        token: targets.get(route)?.admin ? admin : victim.token,
        ...opts,
      });
      assert.equal(
        res.status,
        documentedSuccess(route),
        `${route} by its owner: ${res.status} ${JSON.stringify(res.body)}`,
      );
    }
  });
});

/** The success status the API reference documents for a route (its lowest 2xx). */
function documentedSuccess(route: string): number {
  const [method, path] = route.split(' ') as [string, string];
  const endpoint = ENDPOINTS.find((e) => e.method === method.toLowerCase() && e.path === path);
  // A first request's answer, not the replay of an idempotency key (documented as 200 beside it).
  const codes = Object.entries(endpoint?.responses ?? {})
    .filter(([, r]) => !r.description.startsWith('Replay'))
    .map(([code]) => Number(code))
    .filter((n) => n >= 200 && n < 300);
  if (codes.length === 0) throw new Error(`no documented success for ${route}`);
  return Math.min(...codes);
}

/** A defense with one file on the victim's infraction, stored as the API stores it. */
async function storedDefense(knex: Knex, infractionId: string, merchantId: string) {
  const defenseId = newId('dfs');
  const fileId = newId('dff');
  const content = Buffer.from('%PDF-1.4 victim evidence');
  await knex('infraction_defenses').insert({
    id: defenseId,
    infraction_id: infractionId,
    merchant_id: merchantId,
    defense: 'victim',
  });
  await knex('infraction_defense_files').insert({
    id: fileId,
    defense_id: defenseId,
    merchant_id: merchantId,
    position: 0,
    name: 'victim.pdf',
    mime_type: 'application/pdf',
    size: content.length,
    content,
  });
  return { defenseId, fileId };
}

function dedupe(routes: RouteEntry[]): RouteEntry[] {
  const seen = new Map<string, RouteEntry>();
  for (const r of routes) seen.set(`${r.method} ${r.path}`, r);
  return [...seen.values()];
}
