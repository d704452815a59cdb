/**
 * POST/GET /v1/merchants/me/withdrawals over real HTTP, on the full stack (real PostgreSQL, the
 * simulator, the saga on a real worker): each 400 rule with its message, the 201 body, idempotency
 * (also under concurrency), the guarded debit under 100 concurrent requests, listing and isolation.
 */
import assert from 'node:assert/strict';
import * as ledger from '../../src/services/ledger/ledger';
import { eventually } from '../support/charges';
import {
  assertBooksReconcile,
  DEST,
  fundedMerchant,
  withdrawalsStack,
  type WithdrawBody,
  type WithdrawalsStack,
} from '../support/withdrawals';
import type { MerchantFixture } from '../support/api';
import { assertErrorBody } from '../support/errors';

interface ListBody {
  page: number;
  limit: number;
  total: number;
  withdrawals: Array<WithdrawBody['withdraw'] & { pixKey: string; pixKeyType: string }>;
}

describe('withdrawals API', function () {
  this.timeout(120_000);
  let s: WithdrawalsStack;

  before(async () => {
    s = await withdrawalsStack();
  });

  const withdraw = (token: string, body: unknown, headers: Record<string, string> = {}) =>
    s.api.request<WithdrawBody>('POST', '/v1/merchants/me/withdrawals', { token, body, headers });
  const message = async (token: string, body: unknown, headers: Record<string, string> = {}): Promise<string> => {
    const res = await s.api.request<{ message: string }>('POST', '/v1/merchants/me/withdrawals', {
      token,
      body,
      headers,
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assertErrorBody(res.body);
    return res.body.message;
  };

  /** Completes the transfers of these withdrawals at the simulator and waits for COMPLETED. */
  async function completeAll(ids: string[]): Promise<void> {
    for (const id of ids) {
      const transferId = await eventually(async () => {
        const row = await s.knex('withdrawals').where({ id }).first('transfer_id');
        return (row?.transfer_id as string | null) ?? undefined;
      }, `the transfer of ${id}`);
      s.simulator.control.completeTransfer(transferId);
    }
    await eventually(
      async () => {
        const open = await s
          .knex('withdrawals')
          .whereIn('id', ids)
          .whereNot('status', 'COMPLETED')
          .count({ n: '*' })
          .first();
        return Number(open?.n) === 0 ? true : undefined;
      },
      'every withdrawal to be COMPLETED',
      60_000,
    );
  }

  describe('validation and prerequisites (400 naming the reason)', () => {
    let ready: MerchantFixture;
    before(async () => {
      ready = await fundedMerchant(s.api, 500);
    });

    it('names each unmet prerequisite: KYC, merchant ACTIVE, acquirer account', async () => {
      const fresh = await s.api.createMerchant();
      assert.equal(
        await message(fresh.token, { amount: 100, ...DEST }),
        'Cannot withdraw: KYC not approved; acquirer account not configured',
      );
      const admin = await s.api.adminToken();
      await s.api.request('PATCH', `/v1/admin/merchants/${fresh.merchantId}`, {
        token: admin,
        body: { kycStatus: 'APPROVED' },
      });
      assert.equal(
        await message(fresh.token, { amount: 100, ...DEST }),
        'Cannot withdraw: acquirer account not configured',
      );
      const suspended = await fundedMerchant(s.api, 1_000);
      await s.api.request('PATCH', `/v1/admin/merchants/${suspended.merchantId}`, {
        token: admin,
        body: { status: 'SUSPENDED' },
      });
      // A SUSPENDED merchant is refused at authentication on every route (docs/api.md "Auth hardening"),
      // before the withdrawal's own rule (which stays as a second guard) is reached.
      const refused = await withdraw(suspended.token, { amount: 100, ...DEST });
      assert.equal(refused.status, 403);
      assert.equal(
        assertErrorBody(refused.body, '', { code: 'forbidden' }).message,
        'This merchant account is suspended; contact support',
      );
    });

    it('refuses more than the available balance, and amounts below 100 or not integers', async () => {
      assert.equal(
        await message(ready.token, { amount: 501, ...DEST }),
        'Insufficient available balance for this withdrawal',
      );
      assert.equal(await message(ready.token, { amount: 99, ...DEST }), 'amount must be >= 100');
      assert.equal(await message(ready.token, { amount: '100', ...DEST }), 'amount must be a number');
      assert.equal(await message(ready.token, { amount: 100.5, ...DEST }), 'amount must be an integer');
      assert.equal(await message(ready.token, { ...DEST }), 'amount is required');
      assert.deepEqual(await ledger.getBalance(s.knex, ready.merchantId), {
        available: 500,
        pending: 0,
        blocked: 0,
        total: 500,
      });
      assert.equal((await s.knex('withdrawals').where({ merchant_id: ready.merchantId })).length, 0);
    });

    it('refuses a PIX key that does not match its type, for every type', async () => {
      const cases: Array<[string, string, RegExp]> = [
        ['CPF', '1234567890', /^pixKey does not match pixKeyType CPF: must be 11 digits$/],
        ['CPF', '12345678900', /^pixKey does not match pixKeyType CPF: is not a valid CPF$/],
        ['CNPJ', '11222333000180', /^pixKey does not match pixKeyType CNPJ: is not a valid CNPJ$/],
        ['EMAIL', 'not-an-email', /^pixKey does not match pixKeyType EMAIL: is not a valid e-mail address$/],
        ['PHONE', '11987654321', /^pixKey does not match pixKeyType PHONE: must be in E\.164 format/],
        ['CHAVE_ALEATORIA', 'abc', /^pixKey does not match pixKeyType CHAVE_ALEATORIA: must be a UUID/],
      ];
      for (const [pixKeyType, pixKey, expected] of cases) {
        assert.match(await message(ready.token, { amount: 100, pixKeyType, pixKey }), expected);
      }
      assert.equal(
        await message(ready.token, { amount: 100, pixKeyType: 'PIX', pixKey: 'x' }),
        'pixKeyType must be one of CPF, CNPJ, EMAIL, PHONE, CHAVE_ALEATORIA',
      );
      assert.equal(await message(ready.token, { amount: 100, pixKeyType: 'EMAIL' }), 'pixKey is required');
    });

    it('refuses a description over 200 characters and an idempotency key over 64', async () => {
      assert.equal(
        await message(ready.token, { amount: 100, ...DEST, description: 'x'.repeat(201) }),
        'description must be at most 200 characters long',
      );
      assert.match(
        await message(ready.token, { amount: 100, ...DEST }, { 'x-idempotency-key': 'k'.repeat(65) }),
        /x-idempotency-key/,
      );
    });

    it('an operator (no merchant) gets 404 and no credential gets 401', async () => {
      const admin = await s.api.adminToken();
      assert.equal((await s.api.request('GET', '/v1/merchants/me/withdrawals', { token: admin })).status, 404);
      assert.equal(
        (await s.api.request('POST', '/v1/merchants/me/withdrawals', { body: { amount: 100, ...DEST } })).status,
        401,
      );
    });
  });

  it('answers 201 with message, withdraw (PROCESSING) and the balance after the debit', async () => {
    const m = await fundedMerchant(s.api, 10_000);
    const res = await withdraw(m.token, {
      amount: 2_500,
      pixKeyType: 'CPF',
      pixKey: '12345678909',
      description: 'Saque semanal',
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['balance', 'message', 'withdraw']);
    assert.equal(res.body.message, 'Withdrawal requested');
    const w = res.body.withdraw;
    assert.deepEqual(Object.keys(w).sort(), ['amount', 'batchId', 'createdAt', 'description', 'id', 'status']);
    assert.match(w.id, /^wd_/);
    assert.equal(w.amount, 2_500);
    assert.equal(w.description, 'Saque semanal');
    assert.equal(w.status, 'PROCESSING');
    assert.ok(!Number.isNaN(Date.parse(w.createdAt)));
    assert.deepEqual(res.body.balance, { available: 7_500, pending: 0, blocked: 0, total: 7_500 });
    // The money is in transit, not gone: the debit is one ledger transaction under its reference.
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 2_500);
    const debit = await s.knex('ledger_transactions').where({ reference: `withdrawal:${w.id}:debit` });
    assert.equal(debit.length, 1);
    // The saga sends the transfer and stores the acquirer's batch id.
    const row = await eventually(async () => {
      const r = await s.knex('withdrawals').where({ id: w.id }).first();
      return r?.batch_id ? r : undefined;
    }, 'the batch id');
    const got = await s.api.request<{ withdraw: { batchId: string } }>('GET', `/v1/merchants/me/withdrawals/${w.id}`, {
      token: m.token,
    });
    assert.equal(got.body.withdraw.batchId, row.batch_id);
    await completeAll([w.id]);
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), {
      available: 7_500,
      pending: 0,
      blocked: 0,
      total: 7_500,
    });
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 0);
  });

  it('replays an idempotency key: the same withdrawal, 200 idempotent, one debit; another body is 422', async () => {
    const m = await fundedMerchant(s.api, 5_000);
    const key = { 'x-idempotency-key': 'saque-0001' };
    const first = await withdraw(m.token, { amount: 1_000, ...DEST }, key);
    assert.equal(first.status, 201);
    // The same body (fields in another order, an unknown field ignored) replays.
    const again = await withdraw(
      m.token,
      { pixKey: DEST.pixKey, unknown: 1, pixKeyType: DEST.pixKeyType, amount: 1_000 },
      key,
    );
    assert.equal(again.status, 200);
    assert.equal(again.body.idempotent, true);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.withdraw.id, first.body.withdraw.id);
    assert.equal(again.body.withdraw.amount, 1_000);
    // Another amount, PIX key or description under the same key: 422 naming the key, nothing moves.
    for (const body of [
      { amount: 3_000, ...DEST },
      { amount: 1_000, pixKeyType: 'EMAIL', pixKey: 'outra@example.com' },
      { amount: 1_000, ...DEST, description: 'outro' },
    ]) {
      const other = await withdraw(m.token, body, key);
      assert.equal(other.status, 422, JSON.stringify(other.body));
      assert.equal(
        (other.body as unknown as { message: string }).message,
        'Idempotency key "saque-0001" was already used with a different request body',
      );
    }
    assert.equal((await s.knex('withdrawals').where({ merchant_id: m.merchantId })).length, 1);
    assert.equal((await ledger.getBalance(s.knex, m.merchantId)).available, 4_000);
    // A withdrawal made before fingerprints existed (null) replays whatever the body says.
    await s.knex('withdrawals').where({ id: first.body.withdraw.id }).update({ request_hash: null });
    assert.equal((await withdraw(m.token, { amount: 3_000, ...DEST }, key)).status, 200);
    // The key is the merchant's own: another merchant may use the same one.
    const other = await fundedMerchant(s.api, 1_000);
    assert.equal((await withdraw(other.token, { amount: 1_000, ...DEST }, key)).status, 201);
    await completeAll([first.body.withdraw.id]);
  });

  it('20 concurrent requests with one idempotency key: one withdrawal, one debit', async () => {
    const m = await fundedMerchant(s.api, 50_000);
    const key = { 'x-idempotency-key': 'concurrent-key' };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => withdraw(m.token, { amount: 1_000, ...DEST }, key)),
    );
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((st) => st === 201).length, 1, statuses.join(','));
    assert.ok(
      statuses.every((st) => st === 201 || st === 200),
      statuses.join(','),
    );
    const ids = new Set(results.map((r) => r.body.withdraw.id));
    assert.equal(ids.size, 1);
    assert.equal((await s.knex('withdrawals').where({ merchant_id: m.merchantId })).length, 1);
    const debits = await s.knex('ledger_transactions').where({ merchant_id: m.merchantId, kind: 'withdrawal_debit' });
    assert.equal(debits.length, 1);
    assert.equal((await ledger.getBalance(s.knex, m.merchantId)).available, 49_000);
    await completeAll([...ids]);
    await assertBooksReconcile(s.knex, [m.merchantId]);
  });

  it('100 concurrent withdrawals of 1,000 against 50,000 available: exactly 50 created, 50 refused', async () => {
    const m = await fundedMerchant(s.api, 50_000);
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => withdraw(m.token, { amount: 1_000, ...DEST, description: `saque ${i}` })),
    );
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 400);
    assert.equal(created.length, 50);
    assert.equal(refused.length, 50);
    for (const r of refused)
      assert.equal(
        (r.body as unknown as { message: string }).message,
        'Insufficient available balance for this withdrawal',
      );
    // Every 201 saw a balance that its own debit left, never below zero, and all different.
    const seen = created.map((r) => r.body.balance.available).sort((a, b) => a - b);
    assert.deepEqual(
      seen,
      Array.from({ length: 50 }, (_, i) => i * 1_000),
    );
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), { available: 0, pending: 0, blocked: 0, total: 0 });
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 50_000);
    assert.equal((await s.knex('withdrawals').where({ merchant_id: m.merchantId })).length, 50);
    assert.equal(
      (await s.knex('ledger_transactions').where({ merchant_id: m.merchantId, kind: 'withdrawal_debit' })).length,
      50,
    );
    await assertBooksReconcile(s.knex, [m.merchantId]); // 50 in transit, each with its PROCESSING withdrawal
    await completeAll(created.map((r) => r.body.withdraw.id));
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 0);
    await assertBooksReconcile(s.knex, [m.merchantId]);
  });

  it('group commit: 80 at once, twins among them: one per key, refusals and balances per request', async () => {
    // docs/performance.md "One merchant's payouts": 40 keyed requests (20 pairs of twins with the
    // same body) and 40 unkeyed ones at once, funds for 45 of the 60 distinct withdrawals.
    const m = await fundedMerchant(s.api, 45_000);
    const requests = [
      ...Array.from({ length: 40 }, (_, i) => ({
        body: { amount: 1_000, ...DEST, description: `par ${i % 20}` },
        headers: { 'Idempotency-Key': `pair-${i % 20}` },
      })),
      ...Array.from({ length: 40 }, (_, i) => ({
        body: { amount: 1_000, ...DEST, description: `solo ${i}` },
        headers: {},
      })),
    ];
    const results = await Promise.all(requests.map((r) => withdraw(m.token, r.body, r.headers)));
    assert.equal((await s.knex('withdrawals').where({ merchant_id: m.merchantId })).length, 45);
    // Twins: each key made at most one withdrawal, and both answers of a pair name the same one
    // (201 + 200) or are both refused.
    for (let k = 0; k < 20; k++) {
      const pair = results.filter((_, i) => i < 40 && i % 20 === k);
      const ok = pair.filter((r) => r.status === 201 || r.status === 200);
      if (ok.length > 0) {
        assert.equal(ok.length, 2, pair.map((r) => r.status).join(','));
        assert.equal(ok[0]?.body.withdraw.id, ok[1]?.body.withdraw.id);
        assert.equal(pair.filter((r) => r.status === 201).length, 1);
      } else
        assert.deepEqual(
          pair.map((r) => r.status),
          [400, 400],
        );
    }
    // Each created withdrawal was answered with the balance its own debit left: all distinct.
    const created = results.filter((r) => r.status === 201);
    assert.equal(created.length, 45);
    assert.deepEqual(
      created.map((r) => r.body.balance.available).sort((a, b) => a - b),
      Array.from({ length: 45 }, (_, i) => i * 1_000),
    );
    const debits = await s.knex('ledger_transactions').where({ merchant_id: m.merchantId, kind: 'withdrawal_debit' });
    assert.equal(debits.length, 45);
    assert.equal((await ledger.getBalance(s.knex, m.merchantId)).available, 0);
    await assertBooksReconcile(s.knex, [m.merchantId]);
    await completeAll(created.map((r) => r.body.withdraw.id));
    await assertBooksReconcile(s.knex, [m.merchantId]);
  });

  it('lists newest first with page, limit and total, items with pixKey and pixKeyType', async () => {
    const m = await fundedMerchant(s.api, 10_000);
    const ids: string[] = [];
    for (const [i, dest] of [
      { pixKeyType: 'CPF', pixKey: '12345678909' },
      { pixKeyType: 'PHONE', pixKey: '+5511987654321' },
      { pixKeyType: 'CHAVE_ALEATORIA', pixKey: '123e4567-e89b-42d3-a456-426614174000' },
    ].entries()) {
      const res = await withdraw(m.token, { amount: 100 * (i + 1), ...dest });
      assert.equal(res.status, 201);
      ids.push(res.body.withdraw.id);
    }
    const page1 = await s.api.request<ListBody>('GET', '/v1/merchants/me/withdrawals?page=1&limit=2', {
      token: m.token,
    });
    assert.equal(page1.status, 200);
    assert.equal(page1.body.page, 1);
    assert.equal(page1.body.limit, 2);
    assert.equal(page1.body.total, 3);
    assert.deepEqual(
      page1.body.withdrawals.map((w) => w.id),
      [ids[2], ids[1]],
    );
    const newest = page1.body.withdrawals[0];
    assert.deepEqual(Object.keys(newest ?? {}).sort(), [
      'amount',
      'batchId',
      'createdAt',
      'description',
      'id',
      'pixKey',
      'pixKeyType',
      'status',
    ]);
    assert.equal(newest?.pixKeyType, 'CHAVE_ALEATORIA');
    assert.equal(newest?.pixKey, '123e4567-e89b-42d3-a456-426614174000');
    const page2 = await s.api.request<ListBody>('GET', '/v1/merchants/me/withdrawals?page=2&limit=2', {
      token: m.token,
    });
    assert.deepEqual(
      page2.body.withdrawals.map((w) => w.id),
      [ids[0]],
    );
    const defaults = await s.api.request<ListBody>('GET', '/v1/merchants/me/withdrawals', { token: m.token });
    assert.equal(defaults.body.page, 1);
    assert.equal(defaults.body.limit, 20);
    assert.equal((await s.api.request('GET', '/v1/merchants/me/withdrawals?limit=0', { token: m.token })).status, 400);
    assert.equal(
      (await s.api.request('GET', '/v1/merchants/me/withdrawals?limit=101', { token: m.token })).status,
      400,
    );
    assert.equal((await s.api.request('GET', '/v1/merchants/me/withdrawals?page=x', { token: m.token })).status, 400);
    // A page past the end is empty with its total, however far (docs/api.md "Pagination limits").
    for (const q of ['page=3&limit=2', 'page=2&limit=100', 'page=1000000', 'page=9999999999999&limit=100']) {
      const past = await s.api.request<ListBody>('GET', `/v1/merchants/me/withdrawals?${q}`, { token: m.token });
      assert.equal(past.status, 200, q);
      assert.equal(past.body.total, 3, q);
      assert.deepEqual(past.body.withdrawals, [], q);
    }
    await completeAll(ids);
  });

  it('list total from maintained counts; pages up to the 10,000th row served, deeper ones 400, past the end empty', async () => {
    const m = await fundedMerchant(s.api, 0);
    const list = (q: string) =>
      s.api.request<ListBody & { message: string }>('GET', `/v1/merchants/me/withdrawals?${q}`, { token: m.token });
    // 10,050 withdrawals in one statement (FAILED, so they owe nothing to the books), removed at the end.
    await s.knex.raw(
      `insert into withdrawals (id, merchant_id, amount, pix_key_type, pix_key, status, created_at)
       select 'wd_bulk_' || ? || '_' || lpad(i::text, 5, '0'), ?, 100, 'EMAIL', 'a@b.co', 'FAILED', now() - make_interval(secs => i / 3)
         from generate_series(1, 10050) i`,
      [m.merchantId, m.merchantId],
    );
    try {
      assert.equal((await list('page=1')).body.total, 10_050);
      const plain = (offset: number, limit: number) =>
        s
          .knex('withdrawals')
          .where({ merchant_id: m.merchantId })
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .offset(offset)
          .limit(limit)
          .pluck('id');
      for (const [page, limit] of [
        [1, 20],
        [100, 100],
        [500, 20],
        [333, 30],
      ] as const) {
        const res = await list(`page=${page}&limit=${limit}`);
        assert.equal(res.status, 200, `page ${page}`);
        assert.deepEqual(
          res.body.withdrawals.map((w) => w.id),
          await plain((page - 1) * limit, limit),
          `page ${page} × ${limit}`,
        );
      }
      // Rows past the 10,000th: refused, also for a page that only begins before the bound.
      for (const q of ['page=101&limit=100', 'page=501&limit=20', 'page=334&limit=30']) {
        const deep = await list(q);
        assert.equal(deep.status, 400, q);
        assert.match(deep.body.message, /^page is too deep/);
      }
      // Past the end: empty, with the total.
      for (const q of ['page=102&limit=100', 'page=1000000']) {
        const past = await list(q);
        assert.equal(past.status, 200, q);
        assert.deepEqual([past.body.total, past.body.withdrawals.length], [10_050, 0], q);
      }
    } finally {
      await s.knex('withdrawals').where({ merchant_id: m.merchantId }).delete();
    }
    // The delete trigger keeps the count.
    assert.equal((await list('page=1')).body.total, 0);
    const counted = await s
      .knex('list_counts')
      .where({ list: 'withdrawals', owner_id: m.merchantId })
      .sum({ n: 'n' })
      .first();
    assert.equal(Number(counted?.n ?? 0), 0);
  });

  it("another merchant's withdrawal: 404 by id and in the sandbox, absent from its list", async () => {
    const a = await fundedMerchant(s.api, 1_000);
    const b = await fundedMerchant(s.api, 0);
    const res = await withdraw(a.token, { amount: 1_000, ...DEST });
    const id = res.body.withdraw.id;
    const byB = await s.api.request<{ message: string }>('GET', `/v1/merchants/me/withdrawals/${id}`, {
      token: b.token,
    });
    assert.equal(byB.status, 404);
    assert.equal(assertErrorBody(byB.body, '', { code: 'not_found' }).message, 'Withdrawal not found');
    assert.equal(
      (await s.api.request('GET', '/v1/merchants/me/withdrawals/wd_unknown', { token: a.token })).status,
      404,
    );
    const listB = await s.api.request<ListBody>('GET', '/v1/merchants/me/withdrawals', { token: b.token });
    assert.equal(listB.body.total, 0);
    assert.deepEqual(listB.body.withdrawals, []);
    assert.equal(
      (await s.api.request('POST', `/v1/sandbox/withdrawals/${id}/complete`, { token: b.token, body: {} })).status,
      404,
    );
    const own = await s.api.request<{ withdraw: { id: string; pixKey: string } }>(
      'GET',
      `/v1/merchants/me/withdrawals/${id}`,
      { token: a.token },
    );
    assert.equal(own.status, 200);
    assert.equal(own.body.withdraw.pixKey, DEST.pixKey);
    await completeAll([id]);
  });

  it('leaves the books of every merchant it touched reconciled (ledger invariant)', async () => {
    await assertBooksReconcile(s.knex);
  });
});
