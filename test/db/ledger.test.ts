import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { getTestDb } from '../support/db';
import { newId } from '../../src/lib/ids';
import * as ledger from '../../src/services/ledger';

async function newMerchant(knex: Knex): Promise<string> {
  const id = newId('mch');
  await knex('merchants').insert({
    id,
    name: 'Ledger Test',
    document: id.slice(-14),
    email: `${id.toLowerCase()}@example.com`,
    fee_bps: 99,
    fee_fixed: 0,
    settlement_delay_seconds: 0,
  });
  return id;
}

async function fund(knex: Knex, merchantId: string, amount: number): Promise<void> {
  await knex.transaction((trx) =>
    ledger.postAdjustment(trx, { merchantId, amount, reason: 'test funding', reference: `fund:${newId('x')}` }),
  );
}

async function sumOfAllPostings(knex: Knex, merchantId: string): Promise<number> {
  const row = (await knex('ledger_postings as p')
    .join('ledger_transactions as t', 't.id', 'p.transaction_id')
    .where('t.merchant_id', merchantId)
    .sum({ s: 'p.amount' })
    .first()) as { s: string | number | null };
  return Number(row.s ?? 0);
}

describe('ledger', () => {
  let knex: Knex;
  before(async () => {
    ({ knex } = await getTestDb());
  });

  it('credits a payment with the fee split and settles it, every transaction summing to zero', async () => {
    const m = await newMerchant(knex);
    await ledger.creditChargePayment(knex, { chargeId: 'ch_1', merchantId: m, amount: 10_000, fee: 99 });
    assert.deepEqual(await ledger.getBalance(knex, m), { available: 0, pending: 9_901, blocked: 0, total: 9_901 });
    await ledger.settleChargePayment(knex, { chargeId: 'ch_1', merchantId: m, net: 9_901 });
    assert.deepEqual(await ledger.getBalance(knex, m), { available: 9_901, pending: 0, blocked: 0, total: 9_901 });
    const accounts = await ledger.getAccounts(knex, m);
    assert.equal(accounts.fee_revenue, 99);
    assert.equal(accounts.acquirer, -10_000);
    assert.equal(await sumOfAllPostings(knex, m), 0);
  });

  it('is idempotent on the reference, also under 20 concurrent duplicates', async () => {
    const m = await newMerchant(knex);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        ledger.creditChargePayment(knex, { chargeId: `ch_dup_${m}`, merchantId: m, amount: 500, fee: 5 }),
      ),
    );
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.transactionId)).size, 1);
    assert.equal((await ledger.getBalance(knex, m)).pending, 495);
    const count = await knex('ledger_transactions').where({ merchant_id: m }).count({ n: '*' }).first();
    assert.equal(Number((count as { n: number }).n), 1);
  });

  it('never lets available go negative: 50 parallel withdrawals against a balance for 10', async () => {
    const m = await newMerchant(knex);
    await fund(knex, m, 10 * 1_000);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, () => ledger.debitWithdrawal(knex, { withdrawalId: newId('wd'), merchantId: m, amount: 1_000 })),
    );
    const ok = outcomes.filter((o) => o.status === 'fulfilled').length;
    const rejected = outcomes.filter((o) => o.status === 'rejected');
    assert.equal(ok, 10);
    for (const r of rejected) assert.ok((r as PromiseRejectedResult).reason instanceof ledger.InsufficientFundsError);
    const accounts = await ledger.getAccounts(knex, m);
    assert.equal(accounts.available, 0);
    assert.equal(accounts.in_transit, 10_000);
    assert.equal(await sumOfAllPostings(knex, m), 0);
  });

  it('takes refunds from available first, then pending, and refuses beyond both', async () => {
    const m = await newMerchant(knex);
    await fund(knex, m, 300);
    await ledger.creditChargePayment(knex, { chargeId: `ch_r_${m}`, merchantId: m, amount: 1_000, fee: 0 });
    await knex.transaction((trx) => ledger.debitRefund(trx, { refundId: newId('rf'), merchantId: m, amount: 500 }));
    assert.deepEqual(await ledger.getBalance(knex, m), { available: 0, pending: 800, blocked: 0, total: 800 });
    await assert.rejects(
      knex.transaction((trx) => ledger.debitRefund(trx, { refundId: newId('rf'), merchantId: m, amount: 801 })),
      ledger.InsufficientFundsError,
    );
  });

  it('rejects unbalanced postings in code and in the database', async () => {
    const m = await newMerchant(knex);
    await assert.rejects(
      ledger.post(knex, {
        reference: newId('bad'),
        kind: 'bad',
        merchantId: m,
        postings: [
          { kind: 'available', amount: 10 },
          { kind: 'adjustments', amount: -9 },
        ],
      }),
      ledger.LedgerInvariantError,
    );
    // Bypass the service: the deferred trigger refuses the commit.
    await assert.rejects(
      knex.transaction(async (trx) => {
        const txId = newId('ltx');
        const accId = newId('acc');
        await trx('ledger_accounts').insert({ id: accId, merchant_id: m, kind: 'adjustments', balance: 0 });
        await trx('ledger_transactions').insert({ id: txId, reference: txId, kind: 'raw', merchant_id: m });
        await trx('ledger_postings').insert({ transaction_id: txId, account_id: accId, amount: 5 });
      }),
      /does not sum to zero/,
    );
  });

  it('refuses a negative available balance at the database level too', async () => {
    const m = await newMerchant(knex);
    await assert.rejects(
      knex('ledger_accounts').insert({ id: newId('acc'), merchant_id: m, kind: 'available', balance: -1 }),
      /ledger_accounts_non_negative/,
    );
  });
});
