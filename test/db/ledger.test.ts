import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { AppError } from '../../src/lib/errors';
import { newId } from '../../src/lib/ids';
import * as ledger from '../../src/services/ledger/ledger';
import { createMerchantFixture, fundMerchant, getTestDb } from '../support/db';

/**
 * The ledger's books for one merchant must always agree with themselves: every transaction sums
 * to zero, and every materialised balance equals the sum of its account's postings.
 */
async function assertBooksBalance(knex: Knex, merchantId: string): Promise<void> {
  const unbalanced = await knex('ledger_postings as p')
    .join('ledger_transactions as t', 't.id', 'p.transaction_id')
    .where('t.merchant_id', merchantId)
    .groupBy('t.id')
    .havingRaw('sum(p.amount) <> 0')
    .select('t.id');
  assert.deepEqual(unbalanced, [], 'every transaction sums to zero');
  const drift = await knex('ledger_accounts as a')
    .leftJoin('ledger_postings as p', 'p.account_id', 'a.id')
    .where('a.merchant_id', merchantId)
    .groupBy('a.id', 'a.kind', 'a.balance')
    .havingRaw('a.balance <> coalesce(sum(p.amount), 0)')
    .select('a.kind');
  assert.deepEqual(drift, [], 'materialised balances equal the sum of their postings');
}

async function newMerchantId(knex: Knex): Promise<string> {
  return (await createMerchantFixture(knex, { booksOutsideTheDomain: true })).id;
}

describe('ledger', () => {
  let knex: Knex;
  before(async () => {
    ({ knex } = await getTestDb());
  });

  describe('post', () => {
    it('credits a payment with the fee split and settles it', async () => {
      const m = await newMerchantId(knex);
      const chargeId = newId('ch');
      await ledger.creditChargePayment(knex, { chargeId, merchantId: m, amount: 10_000, fee: 99 });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 0, pending: 9_901, blocked: 0, total: 9_901 });
      await ledger.settleChargePayment(knex, { chargeId, merchantId: m, net: 9_901 });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 9_901, pending: 0, blocked: 0, total: 9_901 });
      const accounts = await ledger.getAccounts(knex, m);
      assert.equal(accounts.fee_revenue, 99);
      assert.equal(accounts.acquirer, -10_000);
      await assertBooksBalance(knex, m);
    });

    it('a fee equal to the amount credits only the platform', async () => {
      const m = await newMerchantId(knex);
      await ledger.creditChargePayment(knex, { chargeId: newId('ch'), merchantId: m, amount: 5, fee: 5 });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 0, pending: 0, blocked: 0, total: 0 });
      assert.equal((await ledger.getAccounts(knex, m)).fee_revenue, 5);
      await assertBooksBalance(knex, m);
    });

    it('a replay returns the first transaction and changes nothing, whatever it carries', async () => {
      const m = await newMerchantId(knex);
      const first = await ledger.post(knex, {
        reference: `r:${m}`,
        kind: 'first',
        merchantId: m,
        postings: [
          { kind: 'available', amount: 100 },
          { kind: 'adjustments', amount: -100 },
        ],
      });
      const replay = await ledger.post(knex, {
        reference: `r:${m}`,
        kind: 'second',
        merchantId: m,
        postings: [
          { kind: 'available', amount: 999 },
          { kind: 'adjustments', amount: -999 },
        ],
      });
      assert.deepEqual(first, { transactionId: first.transactionId, kind: 'first', created: true });
      assert.deepEqual(replay, { transactionId: first.transactionId, kind: 'first', created: false });
      assert.equal((await ledger.getBalance(knex, m)).available, 100);
    });

    it('is idempotent under 20 concurrent duplicates: one transaction', async () => {
      const m = await newMerchantId(knex);
      const chargeId = newId('ch');
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          ledger.creditChargePayment(knex, { chargeId, merchantId: m, amount: 500, fee: 5 }),
        ),
      );
      assert.equal(results.filter((r) => r.created).length, 1);
      assert.equal(new Set(results.map((r) => r.transactionId)).size, 1);
      assert.equal((await ledger.getBalance(knex, m)).pending, 495);
      const count = await knex('ledger_transactions').where({ merchant_id: m }).count({ n: '*' }).first();
      assert.equal(Number((count as { n: number }).n), 1);
      await assertBooksBalance(knex, m);
    });

    it('creates accounts lazily, also when 20 first movements race', async () => {
      const m = await newMerchantId(knex);
      await Promise.all(
        Array.from({ length: 20 }, () =>
          ledger.creditChargePayment(knex, { chargeId: newId('ch'), merchantId: m, amount: 100, fee: 1 }),
        ),
      );
      const accounts = await knex('ledger_accounts').where({ merchant_id: m }).orderBy('kind').pluck('kind');
      assert.deepEqual(accounts, ['acquirer', 'fee_revenue', 'pending']);
      assert.deepEqual(await ledger.getAccounts(knex, m), { acquirer: -2_000, fee_revenue: 20, pending: 1_980 });
      await assertBooksBalance(knex, m);
    });

    it('rejects unbalanced, zero and fractional postings before touching the database', async () => {
      const m = await newMerchantId(knex);
      const attempt = (postings: ledger.Posting[]): Promise<ledger.PostResult> =>
        ledger.post(knex, { reference: newId('bad'), kind: 'bad', merchantId: m, postings });
      await assert.rejects(
        attempt([
          { kind: 'available', amount: 10 },
          { kind: 'adjustments', amount: -9 },
        ]),
        ledger.LedgerInvariantError,
      );
      await assert.rejects(
        attempt([
          { kind: 'available', amount: 0 },
          { kind: 'adjustments', amount: 0 },
        ]),
        ledger.LedgerInvariantError,
      );
      await assert.rejects(
        attempt([
          { kind: 'available', amount: 1.5 },
          { kind: 'adjustments', amount: -1.5 },
        ]),
        ledger.LedgerInvariantError,
      );
      await assert.rejects(attempt([{ kind: 'available', amount: 0 }]), ledger.LedgerInvariantError);
      assert.equal((await knex('ledger_transactions').where({ merchant_id: m })).length, 0);
    });
  });

  describe('enforced by the database', () => {
    // Written by hand past the ledger's functions, so as the owner role: the service's may not.
    let owner: Knex;
    before(async () => {
      ({ ownerKnex: owner } = await getTestDb());
    });

    it('a transaction whose postings do not sum to zero fails at commit (deferred trigger)', async () => {
      const m = await newMerchantId(knex);
      const txId = newId('ltx');
      let insertedBeforeCommit = false;
      await assert.rejects(
        owner.transaction(async (trx) => {
          const accId = newId('acc');
          await trx('ledger_accounts').insert({ id: accId, merchant_id: m, kind: 'adjustments', balance: 0 });
          await trx('ledger_transactions').insert({ id: txId, reference: txId, kind: 'raw', merchant_id: m });
          await trx('ledger_postings').insert({ transaction_id: txId, account_id: accId, amount: 5 });
          insertedBeforeCommit = true; // deferred: the insert itself is accepted
        }),
        /does not sum to zero/,
      );
      assert.ok(insertedBeforeCommit);
      assert.equal(await knex('ledger_transactions').where({ id: txId }).first(), undefined);
    });

    it('a balanced raw transaction commits; its postings can be neither changed nor deleted', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 50);
      const posting = await knex('ledger_postings as p')
        .join('ledger_transactions as t', 't.id', 'p.transaction_id')
        .where('t.merchant_id', m)
        .first('p.id');
      assert.ok(posting);
      await assert.rejects(owner('ledger_postings').where({ id: posting.id }).update({ amount: 1 }), /append-only/);
      await assert.rejects(owner('ledger_postings').where({ id: posting.id }).delete(), /append-only/);
    });

    it('a second transaction with the same reference is refused by the unique constraint', async () => {
      const m = await newMerchantId(knex);
      const reference = newId('ref');
      await ledger.move(knex, {
        reference,
        kind: 'raw',
        merchantId: m,
        amount: 5,
        from: 'adjustments',
        to: 'available',
      });
      await assert.rejects(
        owner('ledger_transactions').insert({ id: newId('ltx'), reference, kind: 'raw', merchant_id: m }),
        /ledger_transactions_reference_unique/,
      );
    });

    it('no merchant-side balance can go negative, whatever bypasses the service', async () => {
      const m = await newMerchantId(knex);
      for (const kind of ['available', 'pending', 'blocked', 'in_transit', 'fee_revenue']) {
        await assert.rejects(
          owner('ledger_accounts').insert({ id: newId('acc'), merchant_id: m, kind, balance: -1 }),
          /ledger_accounts_non_negative/,
          kind,
        );
      }
      // The external mirrors may: the acquirer side is negative by construction. (A hand-written
      // balance still needs the postings that explain it: docs/architecture.md "Money and the ledger".)
      await owner.transaction(async (trx) => {
        const [acquirer, adjustments, txId] = [newId('acc'), newId('acc'), newId('ltx')];
        await trx('ledger_accounts').insert([
          { id: acquirer, merchant_id: m, kind: 'acquirer', balance: -1 },
          { id: adjustments, merchant_id: m, kind: 'adjustments', balance: 1 },
        ]);
        await trx('ledger_transactions').insert({ id: txId, reference: txId, kind: 'raw', merchant_id: m });
        await trx('ledger_postings').insert([
          { transaction_id: txId, account_id: acquirer, amount: -1 },
          { transaction_id: txId, account_id: adjustments, amount: 1 },
        ]);
      });
      assert.deepEqual(await ledger.getAccounts(knex, m), { acquirer: -1, adjustments: 1 });
    });
  });

  describe('available never goes negative', () => {
    it('50 parallel withdrawals against a balance for 10: exactly 10 succeed, the rest are InsufficientFundsError', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 10 * 1_000);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 50 }, () =>
          ledger.debitWithdrawal(knex, { withdrawalId: newId('wd'), merchantId: m, amount: 1_000 }),
        ),
      );
      const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      assert.equal(outcomes.length - rejected.length, 10);
      for (const r of rejected) assert.ok(r.reason instanceof ledger.InsufficientFundsError, String(r.reason));
      const accounts = await ledger.getAccounts(knex, m);
      assert.equal(accounts.available, 0);
      assert.equal(accounts.in_transit, 10_000);
      // Refused debits leave no trace: one funding + 10 debits.
      assert.equal((await knex('ledger_transactions').where({ merchant_id: m })).length, 11);
      await assertBooksBalance(knex, m);
    });

    it('parallel withdrawals of mixed sizes never overdraw', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 10_000);
      const amounts = Array.from({ length: 40 }, (_, i) => 100 + ((i * 737) % 1_900));
      const outcomes = await Promise.allSettled(
        amounts.map((amount) => ledger.debitWithdrawal(knex, { withdrawalId: newId('wd'), merchantId: m, amount })),
      );
      const debited = amounts.filter((_, i) => outcomes[i].status === 'fulfilled').reduce((a, b) => a + b, 0);
      assert.ok(debited <= 10_000);
      assert.deepEqual(await ledger.getAccounts(knex, m), {
        available: 10_000 - debited,
        in_transit: debited,
        adjustments: -10_000,
      });
      await assertBooksBalance(knex, m);
    });

    it('inside a caller transaction a refused debit leaves that transaction usable and the reference free', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 100);
      const withdrawalId = newId('wd');
      await knex.transaction(async (trx) => {
        await assert.rejects(
          ledger.debitWithdrawal(trx, { withdrawalId, merchantId: m, amount: 101 }),
          ledger.InsufficientFundsError,
        );
        // The caller goes on in the same transaction.
        await ledger.debitWithdrawal(trx, { withdrawalId: newId('wd'), merchantId: m, amount: 60 });
      });
      const retried = await ledger.debitWithdrawal(knex, { withdrawalId, merchantId: m, amount: 40 });
      assert.equal(retried.created, true);
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 0, pending: 0, blocked: 0, total: 0 });
      await assertBooksBalance(knex, m);
    });

    it('every non-negative kind refuses an overdraft with InsufficientFundsError, never a database error', async () => {
      const m = await newMerchantId(knex);
      for (const kind of ['available', 'pending', 'blocked', 'in_transit', 'fee_revenue'] as const) {
        await assert.rejects(
          ledger.post(knex, {
            reference: newId('od'),
            kind: 'overdraft',
            merchantId: m,
            postings: [
              { kind, amount: -1 },
              { kind: 'adjustments', amount: 1 },
            ],
          }),
          (err: unknown) => err instanceof ledger.InsufficientFundsError && err.account === kind && err.requested === 1,
        );
      }
    });
  });

  describe("postBatch: one merchant's movements together", () => {
    const debit = (m: string, amount: number): ledger.PostInput => ({
      reference: `withdrawal:${newId('wd')}:debit`,
      kind: 'withdrawal_debit',
      merchantId: m,
      postings: [
        { kind: 'available', amount: -amount },
        { kind: 'in_transit', amount },
      ],
    });

    it('decides in arrival order against the running balance; a refused one leaves no trace', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 1_000);
      const replayed = debit(m, 100);
      await ledger.post(knex, replayed);
      // 900 left: 500 fits, 600 does not, 400 fits, 1 does not, the replay posts nothing.
      const inputs = [debit(m, 500), debit(m, 600), replayed, debit(m, 400), debit(m, 1)];
      const outcomes = await ledger.postBatch(knex, m, inputs);
      const seen = outcomes.map((o) =>
        'refused' in o
          ? `refused ${o.refused.requested}`
          : `${o.posted.created ? 'posted' : 'replay'} ${o.balancesAfter.get('available')}`,
      );
      assert.deepEqual(seen, ['posted 400', 'refused 600', 'replay 400', 'posted 0', 'refused 1']);
      const refused = outcomes[1] as { refused: ledger.InsufficientFundsError };
      assert.ok(refused.refused instanceof ledger.InsufficientFundsError);
      assert.equal(refused.refused.account, 'available');
      assert.deepEqual(await ledger.getAccounts(knex, m), { available: 0, in_transit: 1_000, adjustments: -1_000 });
      // The funding, the earlier debit and the two new ones: the refused references are free again.
      const refs = (await knex('ledger_transactions').where({ merchant_id: m }).pluck('reference')) as string[];
      assert.equal(refs.length, 4);
      for (const i of [1, 4]) assert.ok(!refs.includes(inputs[i]!.reference));
      await assertBooksBalance(knex, m);
    });

    it('two batches of one merchant racing with shared references post each reference once, never overdrawing', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 3_000);
      const inputs = Array.from({ length: 40 }, () => debit(m, 100));
      // Overlapping halves, in opposite orders, all at once.
      const a = inputs.slice(0, 30);
      const b = inputs.slice(10).reverse();
      const [ra, rb] = await Promise.all([ledger.postBatch(knex, m, a), ledger.postBatch(knex, m, b)]);
      const created = [...ra, ...rb].filter((o) => 'posted' in o && o.posted.created).length;
      assert.equal(created, 30, 'funds for 30 of the 40 distinct debits');
      const posted = (await knex('ledger_transactions')
        .where({ merchant_id: m, kind: 'withdrawal_debit' })
        .pluck('reference')) as string[];
      assert.equal(new Set(posted).size, posted.length);
      assert.equal(posted.length, 30);
      assert.deepEqual(await ledger.getAccounts(knex, m), { available: 0, in_transit: 3_000, adjustments: -3_000 });
      await assertBooksBalance(knex, m);
    });

    it("refuses a reference twice in one batch, or another merchant's movement, before writing anything", async () => {
      const m = await newMerchantId(knex);
      const other = await newMerchantId(knex);
      await fundMerchant(knex, m, 1_000);
      const twice = debit(m, 10);
      await assert.rejects(ledger.postBatch(knex, m, [twice, twice]), ledger.LedgerInvariantError);
      await assert.rejects(ledger.postBatch(knex, m, [debit(m, 10), debit(other, 10)]), ledger.LedgerInvariantError);
      assert.deepEqual(await ledger.getAccounts(knex, m), { available: 1_000, adjustments: -1_000 });
    });
  });

  describe('movements', () => {
    it('withdrawal: debit, then completed (money left) or failed (back to available), first outcome wins', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 3_000);
      const [w1, w2] = [newId('wd'), newId('wd')];
      await ledger.debitWithdrawal(knex, { withdrawalId: w1, merchantId: m, amount: 1_000 });
      await ledger.debitWithdrawal(knex, { withdrawalId: w2, merchantId: m, amount: 1_000 });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 1_000, pending: 0, blocked: 0, total: 1_000 });

      const done = await ledger.resolveWithdrawal(knex, {
        withdrawalId: w1,
        merchantId: m,
        amount: 1_000,
        outcome: 'completed',
      });
      const lateFailure = await ledger.resolveWithdrawal(knex, {
        withdrawalId: w1,
        merchantId: m,
        amount: 1_000,
        outcome: 'failed',
      });
      assert.equal(done.created, true);
      assert.deepEqual(lateFailure, {
        transactionId: done.transactionId,
        kind: 'withdrawal_completed',
        created: false,
      });

      await ledger.resolveWithdrawal(knex, { withdrawalId: w2, merchantId: m, amount: 1_000, outcome: 'failed' });
      assert.deepEqual(await ledger.getAccounts(knex, m), {
        available: 2_000,
        in_transit: 0,
        acquirer: 1_000,
        adjustments: -3_000,
      });

      // The destination bank returns w1's completed transfer.
      await ledger.creditReturnedTransfer(knex, { withdrawalId: w1, merchantId: m, amount: 1_000 });
      await ledger.creditReturnedTransfer(knex, { withdrawalId: w1, merchantId: m, amount: 1_000 });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 3_000, pending: 0, blocked: 0, total: 3_000 });
      await assertBooksBalance(knex, m);
    });

    it('concurrent contradicting withdrawal outcomes post exactly one', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 1_000);
      const withdrawalId = newId('wd');
      await ledger.debitWithdrawal(knex, { withdrawalId, merchantId: m, amount: 1_000 });
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          ledger.resolveWithdrawal(knex, {
            withdrawalId,
            merchantId: m,
            amount: 1_000,
            outcome: i % 2 ? 'completed' : 'failed',
          }),
        ),
      );
      assert.equal(results.filter((r) => r.created).length, 1);
      const winner = results.find((r) => r.created)?.kind;
      const accounts = await ledger.getAccounts(knex, m);
      assert.equal(accounts.in_transit, 0);
      assert.equal(accounts.available, winner === 'withdrawal_failed' ? 1_000 : 0);
      await assertBooksBalance(knex, m);
    });

    it('refund: available first, then pending; refused beyond both; confirmed or failed from transit', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 300);
      await ledger.creditChargePayment(knex, { chargeId: newId('ch'), merchantId: m, amount: 1_000, fee: 0 });
      const r1 = newId('rf');
      await knex.transaction((trx) => ledger.debitRefund(trx, { refundId: r1, merchantId: m, amount: 500 }));
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 0, pending: 800, blocked: 0, total: 800 });
      await assert.rejects(
        knex.transaction((trx) => ledger.debitRefund(trx, { refundId: newId('rf'), merchantId: m, amount: 801 })),
        ledger.InsufficientFundsError,
      );
      await ledger.resolveInTransit(knex, {
        reference: `refund:${r1}:confirmed`,
        kind: 'refund_confirmed',
        merchantId: m,
        amount: 500,
        outcome: 'left',
      });
      const r2 = newId('rf');
      await knex.transaction((trx) => ledger.debitRefund(trx, { refundId: r2, merchantId: m, amount: 200 }));
      await ledger.resolveInTransit(knex, {
        reference: `refund:${r2}:failed`,
        kind: 'refund_failed',
        merchantId: m,
        amount: 200,
        outcome: 'returned',
      });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 200, pending: 600, blocked: 0, total: 800 });
      assert.equal((await ledger.getAccounts(knex, m)).in_transit, 0);
      await assertBooksBalance(knex, m);
    });

    it('infraction: block, unblock, and a refund of blocked funds through transit', async () => {
      const m = await newMerchantId(knex);
      await fundMerchant(knex, m, 1_000);
      const inf = newId('inf');
      await ledger.moveBlocked(knex, {
        reference: `infraction:${inf}:block`,
        merchantId: m,
        amount: 700,
        direction: 'block',
      });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 300, pending: 0, blocked: 700, total: 1_000 });
      await assert.rejects(
        ledger.moveBlocked(knex, { reference: newId('blk'), merchantId: m, amount: 301, direction: 'block' }),
        ledger.InsufficientFundsError,
      );
      await ledger.moveBlocked(knex, {
        reference: `infraction:${inf}:unblock`,
        merchantId: m,
        amount: 200,
        direction: 'unblock',
      });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 500, pending: 0, blocked: 500, total: 1_000 });

      const refundId = newId('rf');
      await ledger.debitMedRefund(knex, { refundId, merchantId: m, fromBlocked: 500, fromFee: 0 });
      await ledger.resolveInTransit(knex, {
        reference: `refund:${refundId}:confirmed`,
        kind: 'refund_confirmed',
        merchantId: m,
        amount: 500,
        outcome: 'left',
      });
      assert.deepEqual(await ledger.getBalance(knex, m), { available: 500, pending: 0, blocked: 0, total: 500 });
      await assertBooksBalance(knex, m);
    });

    it('admin adjustment credits and debits available, and a debit below zero is a 400-kind AppError', async () => {
      const m = await newMerchantId(knex);
      const adjust = (amount: number): Promise<ledger.PostResult> =>
        knex.transaction((trx) =>
          ledger.postAdjustment(trx, { merchantId: m, amount, reason: 'ops', reference: `adjustment:${newId('adj')}` }),
        );
      await adjust(500);
      await adjust(-200);
      await assert.rejects(
        adjust(-301),
        (err: unknown) => err instanceof AppError && err.code === 'insufficient_balance',
      );
      assert.deepEqual(await ledger.getAccounts(knex, m), { available: 300, adjustments: -300 });
      await assertBooksBalance(knex, m);
    });

    it('balances of one merchant are untouched by another', async () => {
      const [a, b] = [await newMerchantId(knex), await newMerchantId(knex)];
      await fundMerchant(knex, a, 100);
      assert.deepEqual(await ledger.getBalance(knex, b), { available: 0, pending: 0, blocked: 0, total: 0 });
    });
  });
});
