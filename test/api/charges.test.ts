/**
 * POST/GET /v1/charges over real HTTP: every boundary of docs/api.md "Charges", prerequisites, idempotency
 * under concurrency, the returned BR Code, and isolation between merchants.
 */
import assert from 'node:assert/strict';
import { parseBrCode } from '../../src/pix';
import { chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';

interface ChargeBody {
  charge: {
    id: string;
    type: string;
    txid: string | null;
    qrCode: string | null;
    imageBase64?: string;
    amount: number;
    status: string;
    expiresIn: number;
    customer: { id: string; name: string; document: string } | null;
    createdAt?: string;
  };
  idempotent?: boolean;
}
interface ListBody {
  page: number;
  limit: number;
  total: number;
  charges: Array<ChargeBody['charge'] & { description: string; paidAt: string | null }>;
}

const VALID_CPF = '12345678909';
const VALID_CNPJ = '11222333000181';
const customer = (over: Record<string, unknown> = {}) => ({
  name: 'Maria Silva',
  email: 'maria@example.com',
  phone: '11987654321',
  document: VALID_CPF,
  ...over,
});

describe('charges API', function () {
  this.timeout(120_000);
  let s: ChargesStack;
  let token: string;

  before(async () => {
    s = await chargesStack();
    token = (await readyMerchant(s.api)).token;
  });

  const create = (body: unknown, headers: Record<string, string> = {}, t = token) =>
    s.api.request<ChargeBody>('POST', '/v1/charges', { token: t, body, headers });
  const base = { amount: 1000, description: 'Pedido 42' };

  async function expectStatus(body: unknown, status: number, headers: Record<string, string> = {}): Promise<void> {
    const res = await create(body, headers);
    assert.equal(res.status, status, `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
    if (status >= 400) assert.equal(typeof (res.body as unknown as { message: string }).message, 'string');
  }

  it('creates a charge with QR Code, image and the fields of docs/api.md (201)', async () => {
    const res = await create({
      ...base,
      customer: customer(),
      tracking: { utmSource: 'google', clientIp: '203.0.113.7' },
    });
    assert.equal(res.status, 201);
    const c = res.body.charge;
    assert.match(c.id, /^ch_/);
    assert.equal(c.type, 'IMMEDIATE');
    assert.equal(c.status, 'PENDING');
    assert.equal(c.amount, 1000);
    assert.equal(c.expiresIn, 86_400);
    assert.ok(c.imageBase64?.startsWith('data:image/png;base64,'));
    assert.equal(c.customer?.name, 'Maria Silva');
    assert.equal(c.customer?.document, VALID_CPF);
    const row = await s.api.knex('charges').where({ id: c.id }).first();
    assert.equal(row.tracking.utmSource, 'google');
  });

  it('returns a BR Code that parses back with a correct CRC, the txid and the amount', async () => {
    const res = await create({ amount: 123_456, description: 'BR Code' });
    const c = res.body.charge;
    const parsed = parseBrCode(c.qrCode);
    assert.equal(parsed.txid, c.txid);
    assert.equal(parsed.amountCents, 123_456);
    assert.match(c.qrCode ?? '', /6304[0-9A-F]{4}$/);
  });

  it('validates amount: 0 and non-integers are 400, 1 is accepted', async () => {
    await expectStatus({ ...base, amount: 0 }, 400);
    await expectStatus({ ...base, amount: 1.5 }, 400);
    await expectStatus({ ...base, amount: '100' }, 400);
    await expectStatus({ ...base, amount: 1 }, 201);
  });

  it('validates description: 255 ok, 256 and missing are 400', async () => {
    await expectStatus({ amount: 100, description: 'x'.repeat(255) }, 201);
    await expectStatus({ amount: 100, description: 'x'.repeat(256) }, 400);
    await expectStatus({ amount: 100 }, 400);
  });

  it('validates expiresIn: 59 and 604801 are 400, 60 and 604800 ok, default 86400', async () => {
    await expectStatus({ ...base, expiresIn: 59 }, 400);
    await expectStatus({ ...base, expiresIn: 60 }, 201);
    await expectStatus({ ...base, expiresIn: 604_800 }, 201);
    await expectStatus({ ...base, expiresIn: 604_801 }, 400);
    assert.equal((await create(base)).body.charge.expiresIn, 86_400);
  });

  it('validates customer.name (1 vs 2) and phone (9/10/15/16 digits, non-digits)', async () => {
    await expectStatus({ ...base, customer: customer({ name: 'A' }) }, 400);
    await expectStatus({ ...base, customer: customer({ name: 'Al' }) }, 201);
    await expectStatus({ ...base, customer: customer({ phone: '119876543' }) }, 400);
    await expectStatus({ ...base, customer: customer({ phone: '1198765432' }) }, 201);
    await expectStatus({ ...base, customer: customer({ phone: '551198765432101' }) }, 201);
    await expectStatus({ ...base, customer: customer({ phone: '5511987654321012' }) }, 400);
    await expectStatus({ ...base, customer: customer({ phone: '(11)98765-4321' }) }, 400);
    await expectStatus({ ...base, customer: customer({ email: undefined }) }, 400);
  });

  it('validates the payer document: valid CPF/CNPJ ok, wrong check digit 422, wrong length 400', async () => {
    await expectStatus({ ...base, customer: customer({ document: VALID_CPF }) }, 201);
    await expectStatus({ ...base, customer: customer({ document: VALID_CNPJ }) }, 201);
    await expectStatus({ ...base, customer: customer({ document: '12345678900' }) }, 422);
    await expectStatus({ ...base, customer: customer({ document: '11222333000180' }) }, 422);
    await expectStatus({ ...base, customer: customer({ document: '11111111111' }) }, 422);
    await expectStatus({ ...base, customer: customer({ document: '1234567890' }) }, 400);
    await expectStatus({ ...base, customer: customer({ document: '123.456.789-09' }) }, 400);
  });

  it('validates tracking: sourceUrl 2048 vs 2049, clientIp v4/v6/garbage', async () => {
    const url = (n: number) => 'https://shop.example/' + 'a'.repeat(n - 'https://shop.example/'.length);
    await expectStatus({ ...base, tracking: { sourceUrl: url(2048) } }, 201);
    await expectStatus({ ...base, tracking: { sourceUrl: url(2049) } }, 400);
    await expectStatus({ ...base, tracking: { clientIp: '192.0.2.1' } }, 201);
    await expectStatus({ ...base, tracking: { clientIp: '2001:db8::1' } }, 201);
    await expectStatus({ ...base, tracking: { clientIp: '999.1.1.1' } }, 400);
    await expectStatus({ ...base, tracking: { clientIp: 'not-an-ip' } }, 400);
  });

  it('validates the idempotency key length: 64 ok, 65 is 400', async () => {
    await expectStatus(base, 201, { 'x-idempotency-key': 'k'.repeat(63) + Date.now().toString().slice(-1) });
    await expectStatus(base, 400, { 'x-idempotency-key': 'k'.repeat(65) });
  });

  it('replays an idempotent request with the same body (200, idempotent: true, no image)', async () => {
    const m = await readyMerchant(s.api);
    const key = `idem-${Date.now()}`;
    const first = await create(base, { 'x-idempotency-key': key }, m.token);
    assert.equal(first.status, 201);
    // The same request: fields in another order, the default expiresIn spelled out, an unknown field.
    const again = await create(
      { description: 'Pedido 42', expiresIn: 86400, amount: 1000, ignored: true },
      { 'x-idempotency-key': key },
      m.token,
    );
    assert.equal(again.status, 200);
    assert.equal(again.body.idempotent, true);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(first.headers.get('idempotent-replayed'), null, 'only a replay is marked');
    assert.equal(again.body.charge.id, first.body.charge.id);
    assert.equal(again.body.charge.amount, 1000);
    assert.equal(again.body.charge.imageBase64, undefined);
    assert.equal(again.body.charge.type, 'IMMEDIATE');
    assert.ok(again.body.charge.createdAt);
  });

  it('replays the first charge whatever the body: 201, then 200 with it and idempotent: true', async () => {
    const m = await readyMerchant(s.api);
    const key = `any-body-${Date.now()}`;
    const first = await create(base, { 'x-idempotency-key': key }, m.token);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    // Another amount, description, expiry or customer under the same key: the first charge, unchanged.
    for (const body of [
      { ...base, amount: 5 },
      { ...base, description: 'regenerated description' },
      { ...base, expiresIn: 60 },
      { ...base, customer: customer() },
    ]) {
      const other = await create(body, { 'x-idempotency-key': key }, m.token);
      assert.equal(other.status, 200, JSON.stringify(other.body));
      assert.equal(other.body.idempotent, true);
      assert.equal(other.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(
        [other.body.charge.id, other.body.charge.amount, other.body.charge.txid, other.body.charge.expiresIn],
        [first.body.charge.id, 1000, first.body.charge.txid, 86400],
      );
      assert.equal(other.body.charge.customer, null, 'the replay does not take the new body’s customer');
    }
    const rows = await s.api.knex('charges').where({ merchant_id: m.merchantId });
    assert.deepEqual(
      rows.map((r: { amount: number; description: string }) => [r.amount, r.description]),
      [[1000, 'Pedido 42']],
    );
  });

  it('concurrent requests with one key and different bodies: exactly one charge, every other answer replays it', async () => {
    const m = await readyMerchant(s.api);
    const key = `race-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        create({ ...base, amount: 1000 + i, description: `Pedido ${i}` }, { 'x-idempotency-key': key }, m.token),
      ),
    );
    const winner = results.find((r) => r.status === 201);
    assert.ok(winner, results.map((r) => r.status).join(','));
    assert.equal(results.filter((r) => r.status === 201).length, 1);
    for (const [i, r] of results.entries()) {
      if (r === winner) continue;
      assert.equal(r.status, 200, `request ${i}: ${JSON.stringify(r.body)}`);
      assert.deepEqual([r.body.charge.id, r.body.idempotent], [winner.body.charge.id, true]);
    }
    assert.equal((await s.api.knex('charges').where({ merchant_id: m.merchantId })).length, 1);
  });

  it('takes the key from Idempotency-Key as well; both headers must agree', async () => {
    const m = await readyMerchant(s.api);
    const key = `std-${Date.now()}`;
    const first = await create(base, { 'Idempotency-Key': key }, m.token);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const viaOurs = await create(base, { 'x-idempotency-key': key }, m.token);
    assert.deepEqual(
      [viaOurs.status, viaOurs.body.charge.id, viaOurs.headers.get('idempotent-replayed')],
      [200, first.body.charge.id, 'true'],
    );
    const both = await create(base, { 'x-idempotency-key': key, 'Idempotency-Key': `${key}-other` }, m.token);
    assert.equal(both.status, 400);
    assert.equal(
      (both.body as unknown as { message: string }).message,
      'Headers x-idempotency-key and Idempotency-Key differ: send one key',
    );
    const long = await create(base, { 'Idempotency-Key': 'k'.repeat(65) }, m.token);
    assert.equal(long.status, 400);
    assert.match((long.body as unknown as { message: string }).message, /^Header Idempotency-Key/);
  });

  it('creates exactly one charge for 50 concurrent requests with one idempotency key', async () => {
    const m = await readyMerchant(s.api);
    const key = `concurrent-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 50 }, () => create(base, { 'x-idempotency-key': key }, m.token)),
    );
    const created = results.filter((r) => r.status === 201);
    const replays = results.filter((r) => r.status === 200);
    assert.equal(created.length, 1);
    // The others wait for the first to finish (up to 10 s, then 409) and replay it.
    assert.equal(replays.length, 49, `statuses: ${results.map((r) => r.status).join(',')}`);
    for (const r of replays) {
      assert.equal(r.body.idempotent, true);
      assert.equal(r.body.charge.id, created[0]?.body.charge.id);
      assert.equal(r.body.charge.txid, created[0]?.body.charge.txid);
    }
    const rows = await s.api.knex('charges').where({ merchant_id: m.merchantId });
    assert.equal(rows.length, 1);
  });

  it('writes concurrent creations in shared statements without mixing them up: every charge its own, one per key', async () => {
    // 40 without a key and 3 keys × 10 requests, all at once: creations of one event-loop turn
    // are inserted (and their BR Codes stored) together (docs/performance.md "Where a charge's time goes").
    const m = await readyMerchant(s.api);
    const stamp = Date.now();
    const results = await Promise.all([
      ...Array.from({ length: 40 }, (_, i) => create({ ...base, amount: 1000 + i }, {}, m.token)),
      ...Array.from({ length: 30 }, (_, i) =>
        create({ ...base, amount: 5000 + (i % 3) }, { 'x-idempotency-key': `mixed-${stamp}-${i % 3}` }, m.token),
      ),
    ]);
    assert.equal(
      results.filter((r) => r.status === 201).length,
      43,
      `statuses: ${results.map((r) => r.status).join(',')}`,
    );
    assert.equal(results.filter((r) => r.status === 200).length, 27);
    for (const [i, r] of results.slice(0, 40).entries()) {
      assert.equal(r.body.charge.amount, 1000 + i, 'each request answers its own charge');
      const brCode = parseBrCode(r.body.charge.qrCode);
      assert.equal(brCode.txid, r.body.charge.txid);
      assert.equal(brCode.amountCents, 1000 + i);
    }
    const rows = await s.api.knex('charges').where({ merchant_id: m.merchantId }).orderBy('amount');
    assert.equal(rows.length, 43);
    assert.equal(new Set(rows.map((r) => r.id)).size, 43);
    for (const row of rows) {
      assert.ok(row.qr_code, `charge ${row.id} has its BR Code stored`);
      const answer = results.find((r) => r.body.charge.id === row.id);
      assert.equal(answer?.body.charge.qrCode, row.qr_code);
    }
  });

  it('lets only the winner of an idempotency key write the customer; the others (other bodies) replay it', async () => {
    const m = await readyMerchant(s.api);
    const key = `customer-race-${Date.now()}`;
    const document = '52998224725';
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        create(
          { ...base, customer: customer({ name: `Cliente ${i}`, document }) },
          { 'x-idempotency-key': key },
          m.token,
        ),
      ),
    );
    const winner = results.find((r) => r.status === 201);
    assert.ok(winner, 'one request created the charge');
    const row = await s.api.knex('customers').where({ merchant_id: m.merchantId, document }).first();
    assert.equal(row.name, winner.body.charge.customer?.name);
    for (const r of results) {
      if (r !== winner) assert.deepEqual([r.status, r.body.charge.customer?.name], [200, row.name]);
    }
    // Without a key the customer is upserted with the charge (one statement): the latest data wins.
    const later = await create({ ...base, customer: customer({ name: 'Cliente Novo', document }) }, {}, m.token);
    assert.equal(later.status, 201);
    assert.equal(later.body.charge.customer?.id, row.id);
    assert.equal((await s.api.knex('customers').where({ id: row.id }).first()).name, 'Cliente Novo');
  });

  it('answers 403 naming each missing prerequisite', async () => {
    const m = await s.api.createMerchant();
    const res = await create(base, {}, m.token);
    assert.equal(res.status, 403);
    const message = (res.body as unknown as { message: string }).message;
    assert.match(message, /KYC not approved/);
    assert.match(message, /acquirer account not configured/);
    assert.match(message, /no active PIX key/);
    const admin = await s.api.adminToken();
    await s.api.request('PATCH', `/v1/admin/merchants/${m.merchantId}`, {
      token: admin,
      body: { kycStatus: 'APPROVED' },
    });
    const onlyTwo = (await create(base, {}, m.token)).body as unknown as { message: string };
    assert.doesNotMatch(onlyTwo.message, /KYC/);
    assert.match(onlyTwo.message, /acquirer account not configured/);
    await s.api.request('PATCH', `/v1/admin/merchants/${m.merchantId}`, {
      token: admin,
      body: { acquirerAccountId: 'acc-x' },
    });
    const onlyKey = (await create(base, {}, m.token)).body as unknown as { message: string };
    assert.equal(onlyKey.message, 'Cannot create charges: no active PIX key');
  });

  it('answers 502 and keeps a FAILED charge with null txid when the acquirer fails at creation', async () => {
    s.simulator.control.setFaults({ failNext: { route: 'createCob', times: 3, status: 500 } });
    const m = await readyMerchant(s.api);
    const res = await create(base, {}, m.token);
    s.simulator.control.setFaults({});
    assert.equal(res.status, 502);
    const row = await s.api.knex('charges').where({ merchant_id: m.merchantId }).first();
    assert.equal(row.status, 'FAILED');
    assert.equal(row.txid, null);
    assert.equal(row.qr_code, null);
    assert.equal(
      s.simulator.control.calls.filter((c) => c.route === 'createCob' && c.status === 500).length >= 3,
      true,
    );
  });

  it('retries a transient acquirer failure at creation and succeeds', async () => {
    s.simulator.control.setFaults({ failNext: { route: 'createCob', times: 1, status: 503 } });
    const res = await create(base);
    s.simulator.control.setFaults({});
    assert.equal(res.status, 201);
  });

  it('lists newest first with page, limit, status filter and total', async () => {
    const m = await readyMerchant(s.api);
    for (let i = 1; i <= 3; i++) await create({ amount: i * 100, description: `n${i}` }, {}, m.token);
    const list = await s.api.request<ListBody>('GET', '/v1/charges?page=1&limit=2', { token: m.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 3);
    assert.deepEqual(
      list.body.charges.map((c) => c.amount),
      [300, 200],
    );
    const page2 = await s.api.request<ListBody>('GET', '/v1/charges?page=2&limit=2', { token: m.token });
    assert.deepEqual(
      page2.body.charges.map((c) => c.amount),
      [100],
    );
    const paid = await s.api.request<ListBody>('GET', '/v1/charges?status=PAID', { token: m.token });
    assert.equal(paid.body.total, 0);
    const immediate = await s.api.request<ListBody>('GET', '/v1/charges?type=IMMEDIATE&status=PENDING', {
      token: m.token,
    });
    assert.equal(immediate.body.total, 3);
    const dueDate = await s.api.request<ListBody>('GET', '/v1/charges?type=DUE_DATE', { token: m.token });
    assert.deepEqual([dueDate.body.total, dueDate.body.charges.length], [0, 0]);
    const item = list.body.charges[0];
    assert.equal(item?.type, 'IMMEDIATE');
    for (const field of [
      'id',
      'type',
      'txid',
      'qrCode',
      'amount',
      'description',
      'status',
      'expiresIn',
      'paidAt',
      'createdAt',
      'customer',
    ]) {
      assert.ok(field in (item ?? {}), `list item lacks ${field}`);
    }
  });

  it("caches the list 3 s per (merchant, query) and drops it on that merchant's own writes", async () => {
    const m = await readyMerchant(s.api);
    const other = await readyMerchant(s.api);
    const total = async (t: string, q = '') =>
      (await s.api.request<ListBody>('GET', `/v1/charges${q}`, { token: t })).body.total;
    await create(base, {}, m.token);
    await create(base, {}, other.token);
    assert.equal(await total(m.token), 1);
    assert.equal(await total(other.token), 1);
    // A row written behind the service's back is not seen while the entry lives...
    await s.api.knex('charges').insert({
      id: `ch_cache_${Date.now()}`,
      merchant_id: m.merchantId,
      amount: 100,
      description: 'behind the cache',
      status: 'FAILED',
      expires_in: 60,
      expires_at: s.api.knex.raw('now()'),
    });
    assert.equal(await total(m.token), 1);
    // ...the merchant's own write through the service drops its entries (another merchant's do not)...
    await create(base, {}, other.token);
    assert.equal(await total(m.token), 1);
    await create(base, {}, m.token);
    // The entry read next is filled after this instant, so it cannot expire before this + 3 s.
    const notBefore = performance.now() + 3_000;
    assert.equal(await total(m.token), 3);
    // ...and an entry expires on its own after 3 s (polled, not slept).
    await s.api.knex('charges').insert({
      id: `ch_cache2_${Date.now()}`,
      merchant_id: m.merchantId,
      amount: 100,
      description: 'behind the cache',
      status: 'FAILED',
      expires_in: 60,
      expires_at: s.api.knex.raw('now()'),
    });
    assert.equal(await total(m.token), 3);
    // A cache hit is the page serialized once (src/http/json-once.ts): still JSON, the same body.
    const [hit1, hit2] = await Promise.all(
      [1, 2].map(() => s.api.request<ListBody>('GET', '/v1/charges', { token: m.token })),
    );
    assert.equal(hit1?.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(hit1?.body, hit2?.body);
    assert.equal(hit1?.body.charges.length, 3);
    // Every read until the entry's 3 s are up must still be the cached 3; the first 4 may come only
    // after them. A causal bound (the fill happened after notBefore - 3 s), so a slow machine can only
    // make it hold more easily, never fail it.
    await eventually(
      async () => {
        const n = await total(m.token);
        if (n === 4) return true;
        assert.equal(n, 3);
        return undefined;
      },
      'the cache entry to expire',
      10_000,
    );
    assert.ok(performance.now() >= notBefore, `expired ${Math.round(notBefore - performance.now())} ms early`);
    // Each query is its own entry: a status filter is counted separately.
    assert.equal(await total(m.token, '?status=FAILED'), 2);
  });

  it('validates list parameters: page 0, limit 0/101, unknown status or type are 400; limit 1 and 100 ok', async () => {
    const get = (q: string) => s.api.request<ListBody>('GET', `/v1/charges?${q}`, { token });
    assert.equal((await get('page=0')).status, 400);
    assert.equal((await get('limit=0')).status, 400);
    assert.equal((await get('limit=101')).status, 400);
    assert.equal((await get('status=UNKNOWN')).status, 400);
    assert.equal((await get('type=BOLETO')).status, 400);
    assert.equal((await get('limit=1')).status, 200);
    assert.equal((await get('limit=100')).status, 200);
    assert.equal((await get('limit=1')).body.charges.length, 1);
  });

  it("hides another merchant's charge: 404 on get, cancel and refund, absent from the list", async () => {
    const a = await readyMerchant(s.api);
    const b = await readyMerchant(s.api);
    const charge = (await create(base, {}, a.token)).body.charge;
    for (const [method, path] of [
      ['GET', `/v1/charges/${charge.id}`],
      ['POST', `/v1/charges/${charge.id}/cancel`],
      ['POST', `/v1/charges/${charge.id}/refund`],
    ] as const) {
      const res = await s.api.request(method, path, { token: b.token, body: method === 'POST' ? {} : undefined });
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    const list = await s.api.request<ListBody>('GET', '/v1/charges', { token: b.token });
    assert.equal(list.body.total, 0);
    assert.equal((await s.api.request('GET', `/v1/charges/${charge.id}`, { token: a.token })).status, 200);
  });

  it('accepts an API key as well as a JWT, and rejects a missing credential', async () => {
    const key = await s.api.createApiKey(token);
    assert.equal((await create(base, {}, key.value)).status, 201);
    const res = await s.api.request('POST', '/v1/charges', { body: base });
    assert.equal(res.status, 401);
  });

  it('never answers 500 to malformed input on the charge endpoints', async () => {
    const bodies: unknown[] = [
      null,
      [],
      'text',
      42,
      {},
      { amount: null },
      { amount: 1e300, description: 'x' },
      { amount: -5, description: 'x' },
      { amount: 100, description: 'nul\u0000byte' },
      { amount: 100, description: 'x', customer: 'maria' },
      { amount: 100, description: 'x', customer: { ...customer(), document: 12345678909 } },
      { amount: 100, description: 'x', tracking: { utmSource: 7 } },
      { amount: 100, description: 'x', tracking: [] },
      { amount: 100, description: 'x', expiresIn: '3600' },
      { amount: 100, description: { nested: true } },
    ];
    for (const body of bodies) {
      const res = await create(body);
      assert.ok(res.status === 400, `${JSON.stringify(body)} → ${res.status}`);
    }
    const raw = await s.api.request('POST', '/v1/charges', {
      token,
      rawBody: '{"amount": 1,',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(raw.status, 400);
    for (const path of [
      `/v1/charges/${'x'.repeat(300)}`,
      '/v1/charges/%00',
      '/v1/charges?page=1e3',
      '/v1/charges?limit=-1&page=abc',
    ]) {
      const res = await s.api.request('GET', path, { token });
      assert.ok([400, 404].includes(res.status), `${path} → ${res.status}`);
    }
    for (const body of [null, [], { amount: 0 }, { amount: 'all' }, { reason: 'x'.repeat(500) }]) {
      const res = await s.api.request('POST', '/v1/charges/ch_unknown/refund', { token, body });
      assert.ok([400, 404].includes(res.status), `refund ${JSON.stringify(body)} → ${res.status}`);
    }
    const weirdKey = await create(base, { 'x-idempotency-key': 'chave-ção é' });
    assert.ok([200, 201].includes(weirdKey.status));
  });
});
