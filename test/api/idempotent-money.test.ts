/**
 * `x-idempotency-key` on refunds and operator adjustments
 * (docs/api.md "Idempotency"): retried with one key, sequentially and 20 at once, money moves once and every
 * request gets the first answer. Plus the depth limit of the charge list.
 */
import { postingsTo } from '../support/ledger-postings';
import assert from 'node:assert/strict';
import { chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';
import { assertLedgerInvariant } from '../support/ledger-invariant';

interface RefundBody {
  refund: { id: string; chargeId: string; amount: number; status: string };
  idempotent?: true;
}
interface AdjustmentBody {
  adjustment: { id: string; amount: number; reason: string };
  balance: { available: number };
  idempotent?: true;
}

describe('idempotent refunds and adjustments', function () {
  this.timeout(120_000);
  let s: ChargesStack;

  before(async () => {
    s = await chargesStack();
  });
  afterEach(async () => {
    await assertLedgerInvariant(s.api.knex);
  });

  async function paidCharge(token: string): Promise<string> {
    const res = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token,
      body: { amount: 10_000, description: 'Pedido' },
    });
    assert.equal(res.status, 201);
    const id = res.body.charge.id;
    await s.api.request('POST', `/v1/sandbox/charges/${id}/pay`, { token, body: {} });
    await eventually(
      async () => ((await s.api.knex('charges').where({ id }).first()).status === 'PAID' ? true : undefined),
      'PAID',
    );
    return id;
  }

  it('a refund retried with one key, also 20 concurrently: one refund, one ledger movement, the same answer', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const chargeId = await paidCharge(m.token);
    const refund = (key: string, amount = 1_000) =>
      s.api.request<RefundBody>('POST', `/v1/charges/${chargeId}/refund`, {
        token: m.token,
        headers: { 'x-idempotency-key': key },
        body: { amount, reason: 'retry' },
      });

    const all = await Promise.all(Array.from({ length: 20 }, () => refund('refund-key-1')));
    const statuses = all.map((r) => r.status).sort();
    assert.deepEqual(
      statuses,
      [200, ...Array<number>(18).fill(200), 202].sort(),
      JSON.stringify(all.map((r) => r.body)),
    );
    const ids = new Set(all.map((r) => r.body.refund.id));
    assert.equal(ids.size, 1);
    for (const r of all) assert.equal(r.body.idempotent, r.status === 200 ? true : undefined);

    // A later retry with the same body replays the first answer; another amount or reason is a
    // 422 naming the key, and moves nothing.
    const later = await refund('refund-key-1');
    assert.equal(later.status, 200);
    assert.equal(later.headers.get('idempotent-replayed'), 'true');
    assert.equal(later.body.refund.id, [...ids][0]);
    assert.equal(later.body.refund.amount, 1_000);
    for (const body of [{ amount: 2_000, reason: 'retry' }, { amount: 1_000, reason: 'other' }, {}]) {
      const other = await s.api.request<{ message: string }>('POST', `/v1/charges/${chargeId}/refund`, {
        token: m.token,
        headers: { 'x-idempotency-key': 'refund-key-1' },
        body,
      });
      assert.equal(other.status, 422, JSON.stringify(body));
      assert.equal(other.body.message, 'Idempotency key "refund-key-1" was already used with a different request body');
    }
    // A key stored before fingerprints existed (null) replays whatever the body says.
    await s.api
      .knex('idempotency_keys')
      .where({ scope: 'charge_refund', owner_id: m.merchantId, key: 'refund-key-1' })
      .update({ request_hash: null });
    assert.equal((await refund('refund-key-1', 2_000)).status, 200);

    const rows = await s.api.knex('charge_refunds').where({ charge_id: chargeId, kind: 'MERCHANT' });
    assert.equal(rows.length, 1);
    const debits = await s.api.knex('ledger_transactions').where({ merchant_id: m.merchantId, kind: 'refund_debit' });
    assert.equal(debits.length, 1);
    // By what moved, whatever the reference or kind: the refund's 1,000 entered in_transit once.
    assert.deepEqual(await postingsTo(s.api.knex, m.merchantId, 'in_transit', 'in'), [1_000]);

    // Another key is another refund; a key used on another charge is a 409.
    assert.equal((await refund('refund-key-2')).status, 202);
    const other = await paidCharge(m.token);
    const reused = await s.api.request('POST', `/v1/charges/${other}/refund`, {
      token: m.token,
      headers: { 'x-idempotency-key': 'refund-key-1' },
      body: {},
    });
    assert.equal(reused.status, 409);
    // Someone else's charge stays a 404, key or not.
    const stranger = await readyMerchant(s.api);
    const foreign = await s.api.request('POST', `/v1/charges/${chargeId}/refund`, {
      token: stranger.token,
      headers: { 'x-idempotency-key': 'refund-key-1' },
      body: {},
    });
    assert.equal(foreign.status, 404);
    // A refused request does not burn its key.
    const tooMuch = await refund('refund-key-3', 1_000_000);
    assert.equal(tooMuch.status, 400);
    assert.equal((await refund('refund-key-3', 500)).status, 202);
    assert.equal(
      (
        await s.api.request('POST', `/v1/charges/${chargeId}/refund`, {
          token: m.token,
          headers: { 'x-idempotency-key': 'k'.repeat(65) },
          body: {},
        })
      ).status,
      400,
    );
  });

  it('an adjustment retried with one key, also 20 concurrently: one posting, the same answer', async () => {
    const m = await s.api.createMerchant();
    const admin = await s.api.adminToken();
    const adjust = (key: string, amount = 2_500) =>
      s.api.request<AdjustmentBody>('POST', `/v1/admin/merchants/${m.merchantId}/adjustments`, {
        token: admin,
        headers: { 'x-idempotency-key': key },
        body: { amount, reason: 'goodwill credit' },
      });
    const all = await Promise.all(Array.from({ length: 20 }, () => adjust('adj-key-1')));
    assert.equal(all.filter((r) => r.status === 201).length, 1, JSON.stringify(all.map((r) => [r.status, r.body])));
    assert.equal(all.filter((r) => r.status === 200 && r.body.idempotent === true).length, 19);
    assert.equal(new Set(all.map((r) => r.body.adjustment.id)).size, 1);
    const later = await adjust('adj-key-1');
    assert.equal(later.status, 200);
    assert.equal(later.headers.get('idempotent-replayed'), 'true');
    assert.equal(later.body.adjustment.amount, 2_500);
    assert.equal(later.body.balance.available, 2_500);
    // Another amount under the same key: 422, nothing posted.
    const other = await adjust('adj-key-1', 9_999);
    assert.equal(other.status, 422);
    assert.match(
      (other.body as unknown as { message: string }).message,
      /^Idempotency key "adj-key-1" was already used with a different request body$/,
    );

    const postings = await s.api.knex('ledger_transactions').where({ merchant_id: m.merchantId, kind: 'adjustment' });
    assert.equal(postings.length, 1);
    // By what moved, whatever the reference or kind: 2,500 entered available once.
    assert.deepEqual(await postingsTo(s.api.knex, m.merchantId, 'available', 'in'), [2_500]);
    const audits = await s.api.knex('audit_log').where({ action: 'balance.adjust', target_id: m.merchantId });
    assert.equal(audits.length, 1);

    // A debit the balance cannot cover is refused and leaves its key unused.
    assert.equal((await adjust('adj-key-2', -1_000_000)).status, 400);
    assert.equal((await adjust('adj-key-2', -500)).status, 201);
    assert.equal((await adjust('adj-key-3')).status, 201);
    const balance = await s.api.request<{ balance: { available: number } }>('GET', '/v1/merchants/me/balance', {
      token: m.token,
    });
    assert.equal(balance.body.balance.available, 2_500 - 500 + 2_500);
  });

  it('pages past the end of the charge, merchant and audit lists are empty (200, with the total); rows past the 10,000th are 400', async () => {
    const m = await readyMerchant(s.api);
    const list = (q: string) =>
      s.api.request<{ message: string; total: number; charges: unknown[] }>('GET', `/v1/charges?${q}`, {
        token: m.token,
      });
    await s.api.request('POST', '/v1/charges', { token: m.token, body: { amount: 100, description: 'one' } });
    for (const q of [
      'page=1000000&limit=20',
      'page=101&limit=100',
      'page=2&limit=1',
      'page=9999999999999&limit=100',
      'page=3&status=PAID',
    ]) {
      const past = await list(q);
      assert.equal(past.status, 200, q);
      assert.deepEqual(past.body.charges, [], q);
      assert.equal(past.body.total, q.includes('PAID') ? 0 : 1, q);
    }
    // The operator's lists follow the same rule.
    const admin = await s.api.adminToken();
    for (const path of ['/v1/admin/merchants?page=1000000', '/v1/admin/audit-log?page=1000000&limit=20']) {
      const res = await s.api.request<{ total: number; merchants?: unknown[]; entries?: unknown[] }>('GET', path, {
        token: admin,
      });
      assert.equal(res.status, 200, path);
      assert.deepEqual(res.body.merchants ?? res.body.entries, [], path);
      assert.ok(res.body.total > 0, path);
    }
    // A page holding rows past the 10,000th is refused: 10,001 charges written in one statement.
    const big = await readyMerchant(s.api);
    await s.api.knex.raw(
      `insert into charges (id, merchant_id, amount, description, status, expires_in, expires_at, created_at)
       select 'ch_deep_' || ? || '_' || i, ?, 100, 'deep', 'FAILED', 60, now(), now() - make_interval(secs => i)
         from generate_series(1, 10001) i`,
      [big.merchantId, big.merchantId],
    );
    try {
      const bigList = (q: string) =>
        s.api.request<{ message: string; total: number; charges: unknown[] }>('GET', `/v1/charges?${q}`, {
          token: big.token,
        });
      assert.equal((await bigList('page=100&limit=100')).body.charges.length, 100);
      const deep = await bigList('page=101&limit=100');
      assert.equal(deep.status, 400);
      assert.match(deep.body.message, /^page is too deep/);
      const past = await bigList('page=102&limit=100');
      assert.deepEqual([past.status, past.body.total, past.body.charges.length], [200, 10_001, 0]);
    } finally {
      await s.api.knex('charges').where({ merchant_id: big.merchantId }).delete();
    }
  });
});
