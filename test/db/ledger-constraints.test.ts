import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { newId } from '../../src/lib/ids';
import * as ledger from '../../src/services/ledger/ledger';
import { createMerchantFixture, fundMerchant, getTestDb, balancesAndPosted } from '../support/db';

/**
 * The ledger's rules that PostgreSQL holds by itself since migration 20261126100000
 * (docs/architecture.md "Money and the ledger"): whatever writes the tables — the ledger service, psql, a buggy script — a
 * balance agrees with its postings, a posting belongs to its transaction's merchant, and a
 * transaction has postings, at commit at the latest.
 */
describe('ledger rules enforced by PostgreSQL', () => {
  let knex: Knex;
  // The writes by hand go past the ledger's functions, so they run as the owner role (the service's
  // role may not write these tables at all: test/db/least-privilege.test.ts); even the owner is refused.
  let owner: Knex;
  before(async () => {
    ({ knex, ownerKnex: owner } = await getTestDb());
  });

  /**
   * A merchant whose books these tests try to break by hand. Every attempt is refused, so its books
   * stay whole and the run-wide ledger check covers it like any other.
   */
  async function merchantWithFunds(amount: number): Promise<string> {
    const m = (await createMerchantFixture(knex)).id;
    await fundMerchant(knex, m, amount);
    return m;
  }

  const account = async (
    merchantId: string,
    kind: ledger.LedgerAccountKind,
  ): Promise<{ id: string; balance: number; posted: number }> =>
    (await owner('ledger_accounts').where({ merchant_id: merchantId, kind }).first('id', 'balance', 'posted')) as {
      id: string;
      balance: number;
      posted: number;
    };

  describe('a balance equals the sum of its postings', () => {
    it('an UPDATE of a balance without postings is refused at commit', async () => {
      const m = await merchantWithFunds(1_000);
      await assert.rejects(
        owner('ledger_accounts').where({ merchant_id: m, kind: 'available' }).update({ balance: 1_001 }),
        /ledger account .* \(available of merchant .*\) has balance 1001 but its postings sum to 1000: a balance changes only with its postings/,
      );
      // Deferred: the statement itself is accepted, the commit is not.
      let updated = false;
      await assert.rejects(
        owner.transaction(async (trx) => {
          await trx('ledger_accounts').where({ merchant_id: m, kind: 'available' }).update({ balance: 0 });
          updated = true;
        }),
        /has balance 0 but its postings sum to 1000/,
      );
      assert.ok(updated);
      assert.deepEqual(await ledger.getAccounts(knex, m), { available: 1_000, adjustments: -1_000 });
    });

    it('a new account with a balance and no postings is refused at commit', async () => {
      const m = await merchantWithFunds(1);
      await assert.rejects(
        owner('ledger_accounts').insert({ id: newId('acc'), merchant_id: m, kind: 'pending', balance: 50 }),
        /has balance 50 but its postings sum to 0/,
      );
    });

    it('the running sum of postings cannot be written by hand, not even in step with the balance', async () => {
      const m = await merchantWithFunds(1_000);
      const { id } = await account(m, 'available');
      await assert.rejects(
        owner('ledger_accounts').where({ id }).update({ balance: 1_500, posted: 1_500 }),
        /posted is the running sum of its postings, written only by the posting trigger/,
      );
      await assert.rejects(
        owner('ledger_accounts').insert({ id: newId('acc'), merchant_id: m, kind: 'pending', balance: 5, posted: 5 }),
        /cannot start with posted = 5/,
      );
      assert.deepEqual(await account(m, 'available'), { id, balance: 1_000, posted: 1_000 });
    });

    it('an account keeps its merchant and kind', async () => {
      const m = await merchantWithFunds(10);
      const other = await merchantWithFunds(10);
      const { id } = await account(m, 'available');
      await assert.rejects(
        owner('ledger_accounts').where({ id }).update({ merchant_id: other }),
        /cannot change its merchant or kind/,
      );
      await assert.rejects(
        owner('ledger_accounts').where({ id }).update({ kind: 'pending' }),
        /cannot change its merchant or kind/,
      );
    });

    it('postings cannot be truncated away from their balances', async () => {
      const trx = await owner.transaction();
      try {
        await assert.rejects(
          trx.raw('truncate ledger_postings'),
          /ledger postings are append-only \(truncate refused\)/,
        );
      } finally {
        await trx.rollback();
      }
    });
  });

  describe("a posting belongs to its transaction's merchant", () => {
    it("a posting to another merchant's account is refused", async () => {
      const m = await merchantWithFunds(1_000);
      const other = await merchantWithFunds(1_000);
      const [mine, theirs] = [await account(m, 'available'), await account(other, 'available')];
      const txId = newId('ltx');
      await assert.rejects(
        owner.transaction(async (trx) => {
          // Balances moved with their postings and the postings sum to zero: only the owner is wrong.
          await trx('ledger_accounts')
            .where({ id: mine.id })
            .update({ balance: trx.raw('balance - 100') });
          await trx('ledger_accounts')
            .where({ id: theirs.id })
            .update({ balance: trx.raw('balance + 100') });
          await trx('ledger_transactions').insert({ id: txId, reference: txId, kind: 'raw', merchant_id: m });
          await trx('ledger_postings').insert([
            { transaction_id: txId, account_id: mine.id, amount: -100 },
            { transaction_id: txId, account_id: theirs.id, amount: 100 },
          ]);
        }),
        new RegExp(
          `ledger posting to another merchant's account: transaction ${txId} belongs to merchant ${m}, account ${theirs.id} to merchant ${other}`,
        ),
      );
      assert.equal(await owner('ledger_transactions').where({ id: txId }).first(), undefined);
      assert.equal((await ledger.getBalance(knex, m)).available, 1_000);
      assert.equal((await ledger.getBalance(knex, other)).available, 1_000);
    });

    it('a transaction is never updated, not even by the owner: merchant, reference, kind, metadata', async () => {
      const m = await merchantWithFunds(10);
      const other = await merchantWithFunds(10);
      for (const change of [
        { merchant_id: other },
        { reference: `rewritten:${newId('ref')}` },
        { kind: 'charge_paid' },
        { metadata: JSON.stringify({ fromPending: 10 }) },
      ]) {
        await assert.rejects(
          owner('ledger_transactions').where({ merchant_id: m }).update(change),
          /ledger transaction .* is history: it is never updated/,
          Object.keys(change).join(),
        );
      }
    });
  });

  describe('a transaction has postings', () => {
    it('a transaction without postings is refused at commit', async () => {
      const m = await merchantWithFunds(10);
      const txId = newId('ltx');
      await assert.rejects(
        owner('ledger_transactions').insert({ id: txId, reference: `empty:${txId}`, kind: 'raw', merchant_id: m }),
        new RegExp(`ledger transaction ${txId} \\(empty:${txId}\\) has no postings: every transaction moves money`),
      );
      assert.equal(await owner('ledger_transactions').where({ id: txId }).first(), undefined);
    });

    it('a transaction inserted and deleted again before commit leaves nothing to refuse', async () => {
      const m = await merchantWithFunds(10);
      const txId = newId('ltx');
      await owner.transaction(async (trx) => {
        await trx('ledger_transactions').insert({ id: txId, reference: txId, kind: 'raw', merchant_id: m });
        await trx('ledger_transactions').where({ id: txId }).delete();
      });
    });
  });

  describe('the ledger service still posts', () => {
    it('a payment, its settlement and a move commit; a replay of a reference posts nothing and commits', async () => {
      const m = (await createMerchantFixture(knex)).id;
      const chargeId = newId('ch');
      // The charge and its payment together, as the charge workflow books them.
      const paid = await knex.transaction(async (trx) => {
        await trx('charges').insert({
          id: chargeId,
          merchant_id: m,
          amount: 10_000,
          description: 'ledger constraints',
          status: 'PAID',
          expires_in: 3600,
          expires_at: new Date(Date.now() + 3_600_000),
          paid_at: new Date(),
          fee_amount: 99,
        });
        return ledger.creditChargePayment(trx, { chargeId, merchantId: m, amount: 10_000, fee: 99 });
      });
      const replay = await ledger.creditChargePayment(knex, { chargeId, merchantId: m, amount: 10_000, fee: 99 });
      assert.equal(paid.created, true);
      assert.deepEqual(replay, { transactionId: paid.transactionId, kind: 'charge_paid', created: false });
      // A replay inside a caller's transaction, too: its insert is skipped, nothing is queued.
      await knex.transaction(async (trx) => {
        const again = await ledger.creditChargePayment(trx, { chargeId, merchantId: m, amount: 10_000, fee: 99 });
        assert.equal(again.created, false);
      });
      await ledger.settleChargePayment(knex, { chargeId, merchantId: m, net: 9_901 });
      const reference = `test-move:${newId('mv')}`;
      const moved = await ledger.move(knex, {
        reference,
        kind: 'test_move',
        merchantId: m,
        amount: 901,
        from: 'available',
        to: 'blocked',
      });
      const movedAgain = await ledger.move(knex, {
        reference,
        kind: 'test_move',
        merchantId: m,
        amount: 901,
        from: 'available',
        to: 'blocked',
      });
      assert.equal(movedAgain.created, false);
      assert.equal(movedAgain.transactionId, moved.transactionId);
      await ledger.move(knex, {
        reference: `${reference}:back`,
        kind: 'test_move',
        merchantId: m,
        amount: 901,
        from: 'blocked',
        to: 'available',
      });
      assert.deepEqual(await balancesAndPosted(knex, m), [
        ['acquirer', -10_000, -10_000],
        ['available', 9_901, 9_901],
        ['blocked', 0, 0],
        ['fee_revenue', 99, 99],
        ['pending', 0, 0],
      ]);
    });

    it("a debit refused inside a caller's transaction leaves no empty transaction to refuse at commit", async () => {
      const m = await merchantWithFunds(100);
      const debit = (trx: Knex.Transaction, amount: number): Promise<ledger.PostResult> =>
        ledger.post(trx, {
          reference: `test-debit:${newId('dbt')}`,
          kind: 'test_debit',
          merchantId: m,
          postings: [
            { kind: 'available', amount: -amount },
            { kind: 'adjustments', amount },
          ],
        });
      await knex.transaction(async (trx) => {
        // The refused post had inserted its transaction row: its savepoint takes the row back.
        await assert.rejects(debit(trx, 101), ledger.InsufficientFundsError);
        await debit(trx, 60);
      });
      assert.deepEqual(await ledger.getAccounts(knex, m), { available: 40, adjustments: -40 });
    });
  });
});
