/**
 * The merchant's charge list without scanning its history (README "Where a charge's time goes"):
 *
 * - `total` is a sum over `charge_counts` (at most eight rows per status), which a trigger keeps in
 *   the same transaction as every insert, status change and delete of a charge, so it is exactly
 *   what a count would say at the same snapshot;
 * - a page is found in the (merchant[, status], created_at desc, id desc) index first — only the
 *   ids, skipping `offset` index entries — and only that page's rows are read and joined to their
 *   customers, so page 500 costs an index walk, not 10,000 row fetches; from offset 1,000 on
 *   (`DEEP_PAGE_OFFSET`) the walk starts at the hour the page begins in, which per-hour counts
 *   kept like `charge_counts` tell (`charge_hour_counts`), so it skips at most one hour's charges;
 * - both in one prepared statement: one round trip, one pooled connection, no planning per call.
 */
import type { Knex } from 'knex';
import type { ChargeListItem, ChargeRow } from './charge-views';
import { chargesStore } from '../stores/charges';

/** A page of the merchant's charges and its total, in one statement. */
export async function listPage(
  knex: Knex,
  merchantId: string,
  q: { page: number; limit: number; status?: ChargeListItem['status'] },
): Promise<{ rows: ChargeRow[]; total: number }> {
  return chargesStore(knex).pageWithTotal(merchantId, q);
}

export async function chargeTotal(knex: Knex, merchantId: string, status?: ChargeListItem['status']): Promise<number> {
  return (await listPage(knex, merchantId, { page: 1, limit: 1, status })).total;
}

export async function pageOfCharges(
  knex: Knex,
  merchantId: string,
  q: { page: number; limit: number; status?: ChargeListItem['status'] },
): Promise<ChargeRow[]> {
  return (await listPage(knex, merchantId, q)).rows;
}
