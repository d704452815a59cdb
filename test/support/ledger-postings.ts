/**
 * What the ledger moved, read from the postings by account kind — never by transaction reference.
 * The database makes references unique, so counting by reference cannot see money posted twice
 * under two references; counting what reached an account can (docs/architecture.md "Money and the ledger").
 */
import type { Knex } from 'knex';

/**
 * Amounts posted to the merchant's account of `accountKind` (positive: into it), oldest first;
 * `direction` keeps only credits (> 0) or debits (< 0) of that account.
 */
export async function postingsTo(
  knex: Knex,
  merchantId: string,
  accountKind: string,
  direction: 'in' | 'out' | 'both' = 'both',
): Promise<number[]> {
  const q = knex('ledger_postings as p')
    .join('ledger_accounts as a', 'a.id', 'p.account_id')
    .where({ 'a.merchant_id': merchantId, 'a.kind': accountKind });
  if (direction === 'in') q.where('p.amount', '>', 0);
  if (direction === 'out') q.where('p.amount', '<', 0);
  const rows = (await q.orderBy('p.id').select('p.amount')) as Array<{ amount: string | number }>;
  return rows.map((r) => Number(r.amount));
}

/** Payments credited to the merchant: every payment's net enters `pending` exactly once. */
export function paymentCredits(knex: Knex, merchantId: string): Promise<number[]> {
  return postingsTo(knex, merchantId, 'pending', 'in');
}
