/**
 * The merchant's charge list without scanning its history (docs/performance.md "Where a charge's time goes"):
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
import type { ChargeListItem, ChargeRow } from './views';
import { chargesStore, type PageQuery } from '../../stores/charges';
import { turnBatcher } from '../../lib/batcher';

/**
 * The list reads of one event-loop turn, as one statement per kind of page
 * (docs/performance.md "Where a read's time goes", one statement per turn: one round trip and one wake-up of a PostgreSQL backend for many
 * requests). Sent after every read of the turn was asked for, so each page is read after its
 * request arrived, as a statement of its own would be; identical pages asked for in one turn are
 * read once. Nothing is kept between turns (the list's cache, when on, is the service's).
 */
export function listPageReader(knex: Knex): (q: PageQuery) => Promise<{ rows: ChargeRow[]; total: number }> {
  return turnBatcher<PageQuery, { rows: ChargeRow[]; total: number }>(async (queries) => {
    const keyOf = (q: PageQuery): string => `${q.merchantId}|${q.type ?? ''}|${q.status ?? ''}|${q.page}|${q.limit}`;
    const distinct = new Map<string, PageQuery>();
    for (const q of queries) if (!distinct.has(keyOf(q))) distinct.set(keyOf(q), q);
    const unique = [...distinct.values()];
    const pages = await chargesStore(knex).pagesWithTotals(unique);
    const byKey = new Map(unique.map((q, i) => [keyOf(q), pages[i] as { rows: ChargeRow[]; total: number }]));
    return queries.map((q) => byKey.get(keyOf(q)) as { rows: ChargeRow[]; total: number });
  });
}

/** A page of the merchant's charges and its total, in one statement. */
export async function listPage(
  knex: Knex,
  merchantId: string,
  q: { page: number; limit: number; status?: ChargeListItem['status'] },
): Promise<{ rows: ChargeRow[]; total: number }> {
  const [page] = await chargesStore(knex).pagesWithTotals([{ merchantId, ...q }]);
  return page ?? { rows: [], total: 0 };
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
