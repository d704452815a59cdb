/**
 * MED infractions as the acquirer announces them (docs/operations.md "MED infractions"): one row per acquirer
 * infraction id, created by whichever comes first — its callback or the sandbox that raised it —
 * and the furthest status the acquirer has announced. What the infraction does to money is the
 * workflow's (src/services/med/lifecycle.ts).
 */
import type { Db } from '../db/types';
import type { z } from 'zod';
import type { infraction as infractionContract } from '../contracts/infractions';
import { newId } from '../lib/ids';
import { Charge } from '../models/charge';
import { Infraction } from '../models/infraction';

export { Infraction };

import type { InfractionStatus } from '../../workflows/infraction-types';
import { bindContext } from '../lib/bind-context';

/** How far along an acquirer status is: a late or duplicate callback never moves it back. */
const RANK: Record<InfractionStatus, number> = { OPEN: 0, ACCEPTED: 1, REJECTED: 1, REFUNDED: 2 };

export function furthestStatus(a: InfractionStatus, b: InfractionStatus): InfractionStatus {
  return RANK[b] > RANK[a] ? b : a;
}

export interface AcquirerInfraction {
  acquirerId: string;
  endToEndId: string;
  /** Integer cents disputed. */
  amount: number;
  reason: string;
  status: InfractionStatus;
  /** The report's free text, kept from the first sight that carries it. */
  reportDetails?: string;
}

/** What the API shows of an infraction (the sandbox's answers). */
export type InfractionView = z.infer<typeof infractionContract>;

export const infractionView = (i: Infraction): InfractionView => ({
  id: i.id,
  chargeId: i.chargeId,
  endToEndId: i.e2eId,
  amount: i.amount,
  reason: i.reason,
  status: i.status,
  blockedAmount: i.blockedAmount,
  createdAt: new Date(i.createdAt).toISOString(),
});

/**
 * The row of an acquirer infraction, created on first sight (unique acquirer id, so concurrent
 * deliveries create one), with the acquirer's status advanced. Undefined when the payment is not
 * one of our charges: there is no merchant to hold it against.
 */
async function recordFromAcquirer(knex: Db, a: AcquirerInfraction): Promise<Infraction | undefined> {
  const charge = await Charge.query(knex).findOne({ e2e_id: a.endToEndId });
  if (!charge) return undefined;
  await knex('infractions')
    .insert({
      id: newId('inf'),
      merchant_id: charge.merchantId,
      charge_id: charge.id,
      acquirer_infraction_id: a.acquirerId,
      e2e_id: a.endToEndId,
      amount: a.amount,
      reason: a.reason,
      report_details: a.reportDetails ?? null,
      status: 'OPEN',
      acquirer_status: a.status,
    })
    .onConflict('acquirer_infraction_id')
    .ignore();
  // Advance only: a stale status (e.g. OPEN delivered after ACCEPTED) changes nothing.
  const behind = (Object.keys(RANK) as InfractionStatus[]).filter((s) => RANK[s] < RANK[a.status]);
  if (behind.length > 0) {
    await knex('infractions')
      .where({ acquirer_infraction_id: a.acquirerId })
      .whereIn('acquirer_status', behind)
      .update({ acquirer_status: a.status, updated_at: knex.fn.now() });
  }
  return Infraction.query(knex).findOne({ acquirer_infraction_id: a.acquirerId });
}

/** Every query on `infractions`; `db` is the knex instance or the caller's transaction. */
export const infractionsStore = (db: Db) =>
  bindContext(db, {
    recordFromAcquirer,
    pageForMerchant,
    findForMerchant,
    withDevolucaoOnCharge,
    find,
    open,
    feeReturnedOnCharge,
    patch,
  });

/**
 * A page of one merchant's infractions, newest first, optionally of one status. A merchant has
 * few (one per disputed payment), so a count and an offset serve them.
 */
export async function pageForMerchant(
  db: Db,
  merchantId: string,
  opts: { status?: InfractionStatus; limit: number; offset: number },
): Promise<{ rows: Infraction[]; total: number }> {
  const where = { merchant_id: merchantId, ...(opts.status ? { status: opts.status } : {}) };
  const counted = (await db('infractions').where(where).count({ n: '*' }).first()) as { n: string | number };
  const total = Number(counted.n);
  if (opts.offset >= total) return { rows: [], total };
  const rows = await Infraction.query(db)
    .where(where)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(opts.limit)
    .offset(opts.offset);
  return { rows, total };
}

/** One merchant's infraction (another merchant's is undefined, hence 404 to the caller). */
export async function findForMerchant(db: Db, merchantId: string, id: string): Promise<Infraction | undefined> {
  return Infraction.query(db).findOne({ id, merchant_id: merchantId });
}

/**
 * The charge's infractions whose devolução was chosen (accepted, refunding or refunded). Not
 * locked: callers hold the charge row, and MED steps lock an infraction before its charge.
 */
export async function withDevolucaoOnCharge(db: Db, chargeId: string): Promise<Infraction[]> {
  return Infraction.query(db)
    .where({ charge_id: chargeId })
    .whereIn('status', ['ACCEPTED', 'REFUNDED'])
    .whereNotNull('refund_amount')
    .orderBy('id');
}

export async function find(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<Infraction | undefined> {
  const q = Infraction.query(db);
  if (opts.lock) q.forUpdate();
  return q.findById(id);
}

/**
 * Infractions not closed yet, oldest first, `limit` after `after` by (created_at, id) (keyset
 * pages for the reconciler; the partial index infractions_unclosed_idx serves them): each must
 * have its workflow. The cursor's time is PostgreSQL's own text, exact to the microsecond (a JS
 * Date would round it to the millisecond and repeat rows of that millisecond forever).
 */
export async function open(
  db: Db,
  after: { at: string; id: string } | null,
  limit: number,
): Promise<Array<{ id: string; merchant_id: string; at: string }>> {
  const q = db('infractions').whereNull('closed_at');
  if (after) q.whereRaw('(created_at, id) > (?::timestamptz, ?)', [after.at, after.id]);
  return (await q
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(limit)
    .select('id', 'merchant_id', db.raw('created_at::text as at'))) as Array<{
    id: string;
    merchant_id: string;
    at: string;
  }>;
}

/** What the platform's fee already paid toward other devoluções of this charge's infractions. */
export async function feeReturnedOnCharge(db: Db, chargeId: string, exceptInfractionId: string): Promise<number> {
  const row = (await db('infractions')
    .where({ charge_id: chargeId })
    .whereNot({ id: exceptInfractionId })
    .sum({ s: 'fee_returned' })
    .first()) as { s: number | string | null };
  return Number(row.s ?? 0);
}

export async function patch(db: Db, id: string, p: Partial<Infraction>): Promise<void> {
  await Infraction.query(db)
    .patch({ ...p, updatedAt: new Date() })
    .where({ id });
}
