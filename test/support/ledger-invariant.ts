/**
 * The whole ledger is consistent: every transaction's postings sum to zero, and every account's
 * materialised balance equals the sum of its postings. Asserted at the end of the money suites.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';

export async function assertLedgerInvariant(knex: Knex): Promise<void> {
  const unbalanced = (await knex('ledger_postings')
    .select('transaction_id')
    .sum({ s: 'amount' })
    .groupBy('transaction_id')
    .havingRaw('sum(amount) <> 0')) as unknown[];
  assert.deepEqual(unbalanced, [], 'every ledger transaction sums to zero');
  const drifted = (await knex('ledger_accounts as a')
    .leftJoin('ledger_postings as p', 'p.account_id', 'a.id')
    .select('a.id', 'a.balance')
    .sum({ s: 'p.amount' })
    .groupBy('a.id', 'a.balance')
    .havingRaw('a.balance <> coalesce(sum(p.amount), 0)')) as unknown[];
  assert.deepEqual(drifted, [], 'every account balance equals the sum of its postings');
}
