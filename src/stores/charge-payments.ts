/**
 * Queries of a charge's payment lifecycle (docs/architecture.md "Charges: how they work"): the
 * payment's lock and record, settlement, expiry, and the refunds' and MED devoluções' states.
 * `db` is the knex instance or the caller's transaction. Creation and listing: ./charges.ts.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/types';
import { bindContext } from '../lib/bind-context';
import type { ChargeStatus } from '../contracts/statuses';
import { Charge, ChargeRefund, parkedRefundRows } from './charges';

/** A charge's REQUESTED refunds not parked for an operator (a MED devolução is its infraction's). */
const openRefundRows = (db: Db, chargeId: string | Knex.Ref<string, Record<string, string>>) =>
  db('charge_refunds')
    .where('charge_refunds.charge_id', chargeId)
    .where('charge_refunds.status', 'REQUESTED')
    .whereNot('charge_refunds.kind', 'INFRACTION')
    .whereNotExists(parkedRefundRows(db));

/** Whether the charge (of the outer query) took this end-to-end id as a payment it could not accept, as `ctx_unpayable`. */
const unpayableTakenColumn = (db: Db, e2eId: string) =>
  db.raw(
    `exists (select 1 from charge_refunds u where u.charge_id = charges.id and u.e2e_id = ? and u.kind = 'UNPAYABLE_PAYMENT') as ctx_unpayable`,
    [e2eId],
  );

/** A charge locked for a payment, and what deciding the payment needs (`lockForPayment`). */
export interface PaymentContext {
  charge: Charge;
  terms: { feeBps: number; feeFixed: number; settlementDelaySeconds: number };
  /** This end-to-end id was taken before as a payment the charge could not accept. */
  takenAsUnpayable: boolean;
  openRefundIds: string[];
}

export const chargePaymentsStore = (db: Db) =>
  bindContext(db, {
    nextSettlementAt,
    findForPayment,
    lockForPayment,
    markPaid,
    expirePending,
    markSettled,
    pendingTakenByRefunds,
    openRefundIds,
    setRefunded,
    findRefund,
    setRefundRtrId,
    setRefundRtrIdIfUnset,
    setRefundRefusal,
    failRefund,
    confirmRefund,
    lockRefundRow,
    confirmRefundFromOpenOrFailed,
    addRefundedToPaid,
    insertInfractionRefund,
  });

/** When the merchant's next unsettled (PAID or REFUNDED) charge settles; null when none is waiting. */
export async function nextSettlementAt(db: Db, merchantId: string): Promise<Date | null> {
  const row = (await db('charges')
    .where({ merchant_id: merchantId })
    .whereIn('status', ['PAID', 'REFUNDED'] satisfies ChargeStatus[])
    .whereNull('settled_at')
    .whereNotNull('settle_at')
    .min({ at: 'settle_at' })
    .first()) as { at: Date | string | null } | undefined;
  return row?.at ? new Date(row.at) : null;
}

/** The charge a payment names by its txid, and whether it took this payment as unpayable already (one statement). */
export async function findForPayment(
  db: Db,
  txid: string,
  e2eId: string,
): Promise<{ charge: Charge; takenAsUnpayable: boolean } | undefined> {
  const row = (await db('charges').where({ txid }).select('charges.*', unpayableTakenColumn(db, e2eId)).first()) as
    (Record<string, unknown> & { ctx_unpayable: boolean }) | undefined;
  if (!row) return undefined;
  const { ctx_unpayable: taken, ...charge } = row;
  return { charge: Charge.fromDatabaseJson(charge), takenAsUnpayable: taken };
}

/** A refund of the charge for an accepted infraction, REQUESTED (its money in transit). */
export async function insertInfractionRefund(
  db: Db,
  r: {
    id: string;
    chargeId: string;
    merchantId: string;
    amount: number;
    reason: string;
    e2eId: string | null;
  },
): Promise<void> {
  await db('charge_refunds').insert({
    id: r.id,
    charge_id: r.chargeId,
    merchant_id: r.merchantId,
    amount: r.amount,
    reason: r.reason,
    kind: 'INFRACTION',
    status: 'REQUESTED',
    e2e_id: r.e2eId,
  });
}

/** The acquirer's return id, unless one is recorded already. */
export async function setRefundRtrIdIfUnset(db: Db, id: string, rtrId: string): Promise<void> {
  await db('charge_refunds').where({ id }).whereNull('rtr_id').update({ rtr_id: rtrId });
}

/** Locks the refund row FOR UPDATE (inside a transaction). */
export async function lockRefundRow(db: Db, id: string): Promise<void> {
  await db('charge_refunds').where({ id }).forUpdate().first('id');
}

/** REQUESTED or FAILED → CONFIRMED, keeping a recorded return id over `rtrId`. */
export async function confirmRefundFromOpenOrFailed(
  db: Db,
  id: string,
  confirmedAt: Date,
  rtrId: string | null,
): Promise<void> {
  await db('charge_refunds')
    .where({ id })
    .whereIn('status', ['REQUESTED', 'FAILED'])
    .update({
      status: 'CONFIRMED',
      confirmed_at: confirmedAt,
      failure_reason: null,
      rtr_id: db.raw('coalesce(rtr_id, ?)', [rtrId]),
    });
}

/**
 * Adds `amount` to a PAID charge's refunded amount (REFUNDED once fully refunded) in one
 * guarded statement; false when the charge is no longer PAID or it would exceed what was paid
 * (`amount_paid`, which differs from `amount` on a due-date charge: `paidAmountOf`).
 */
export async function addRefundedToPaid(db: Db, id: string, amount: number): Promise<boolean> {
  const n = await db('charges')
    .where({ id, status: 'PAID' })
    .andWhereRaw('refunded_amount + ? <= coalesce(amount_paid, amount)', [amount])
    .update({
      refunded_amount: db.raw('refunded_amount + ?', [amount]),
      status: db.raw(`case when refunded_amount + ? >= coalesce(amount_paid, amount) then 'REFUNDED' else status end`, [
        amount,
      ]),
      updated_at: db.fn.now(),
    });
  return n > 0;
}

/** The charge's REQUESTED refunds not parked for an operator (a MED devolução is its infraction's). */
export async function openRefundIds(db: Db, chargeId: string): Promise<string[]> {
  return (await openRefundRows(db, chargeId).pluck('charge_refunds.id')) as string[];
}

/**
 * What applying a payment needs, in one statement (docs/performance.md "Payment to webhook: the
 * timeline"): the charge locked FOR UPDATE (its merchant's row is read, not locked), whether
 * this end-to-end id was already taken as unpayable, the merchant's fee and settlement terms,
 * and the charge's open refunds as the lock sees them.
 */
export async function lockForPayment(db: Db, chargeId: string, e2eId: string): Promise<PaymentContext | undefined> {
  const row = (await db('charges')
    .join('merchants as m', 'm.id', 'charges.merchant_id')
    .where('charges.id', chargeId)
    .select('charges.*')
    .select({
      ctx_fee_bps: 'm.fee_bps',
      ctx_fee_fixed: 'm.fee_fixed',
      ctx_settlement_delay_seconds: 'm.settlement_delay_seconds',
    })
    .select(unpayableTakenColumn(db, e2eId))
    .select(
      openRefundRows(db, db.ref('charges.id'))
        .select(db.raw(`coalesce(array_agg(charge_refunds.id), '{}'::text[])`))
        .as('ctx_open_refund_ids'),
    )
    .forUpdate('charges')
    .first()) as
    | (Record<string, unknown> & {
        ctx_fee_bps: number;
        ctx_fee_fixed: number;
        ctx_settlement_delay_seconds: number;
        ctx_unpayable: boolean;
        ctx_open_refund_ids: string[];
      })
    | undefined;
  if (!row) return undefined;
  const {
    ctx_fee_bps: feeBps,
    ctx_fee_fixed: feeFixed,
    ctx_settlement_delay_seconds: settlementDelaySeconds,
    ctx_unpayable: takenAsUnpayable,
    ctx_open_refund_ids: openRefundIds,
    ...charge
  } = row;
  return {
    charge: Charge.fromDatabaseJson(charge),
    terms: { feeBps, feeFixed, settlementDelaySeconds },
    takenAsUnpayable,
    openRefundIds,
  };
}

/** PENDING → PAID with the payment's facts, settled too when `settledAt` is given (guarded: only from PENDING). */
export async function markPaid(
  db: Db,
  id: string,
  p: Pick<Charge, 'e2eId' | 'paidAt' | 'payerName' | 'payerDocument' | 'feeAmount' | 'settleAt'> &
    Partial<Pick<Charge, 'settledAt' | 'amountPaid' | 'paymentBreakdown'>>,
): Promise<void> {
  await Charge.query(db)
    .patch({ status: 'PAID', ...p, updatedAt: new Date() })
    .where({ id, status: 'PENDING' });
}

/** PENDING → CANCELED as expired; false when it was not PENDING. */
export async function expirePending(db: Db, id: string): Promise<boolean> {
  const n = await Charge.query(db)
    .patch({ status: 'CANCELED', failureReason: 'expired', updatedAt: new Date() })
    .where({ id, status: 'PENDING' });
  return n > 0;
}

/** How much of pending this charge's merchant refunds took (the split each refund debit recorded). */
export async function pendingTakenByRefunds(db: Db, chargeId: string): Promise<number> {
  const refundIds = (await db('charge_refunds')
    .where({ charge_id: chargeId, kind: 'MERCHANT' })
    .pluck('id')) as string[];
  if (refundIds.length === 0) return 0;
  const rows = (await db('ledger_transactions')
    .whereIn(
      'reference',
      refundIds.map((id) => `refund:${id}:debit`),
    )
    .select('metadata')) as Array<{ metadata: { fromPending?: number } | null }>;
  return rows.reduce((sum, r) => sum + Number(r.metadata?.fromPending ?? 0), 0);
}

export async function markSettled(db: Db, id: string): Promise<void> {
  await Charge.query(db).patch({ settledAt: new Date(), updatedAt: new Date() }).where({ id }).whereNull('settled_at');
}

/** Refunded amount and status, only if the charge is still in `fromStatus`. */
export async function setRefunded(
  db: Db,
  id: string,
  fromStatus: Charge['status'],
  refundedAmount: number,
  status: Charge['status'],
): Promise<void> {
  await Charge.query(db).patch({ refundedAmount, status, updatedAt: new Date() }).where({ id, status: fromStatus });
}

/** A refund, optionally locked FOR UPDATE (inside a transaction). */
export async function findRefund(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<ChargeRefund | undefined> {
  const q = ChargeRefund.query(db);
  if (opts.lock) q.forUpdate();
  return q.findById(id);
}

export async function setRefundRtrId(db: Db, id: string, rtrId: string): Promise<void> {
  await ChargeRefund.query(db).patch({ rtrId }).where({ id });
}

/** The acquirer refused the devolução request outright: its reason, while the refund is REQUESTED. */
export async function setRefundRefusal(db: Db, id: string, reason: string): Promise<void> {
  await ChargeRefund.query(db).patch({ failureReason: reason }).where({ id, status: 'REQUESTED' });
}

/** REQUESTED → FAILED (guarded). */
export async function failRefund(db: Db, id: string, reason: string): Promise<void> {
  await ChargeRefund.query(db).patch({ status: 'FAILED', failureReason: reason }).where({ id, status: 'REQUESTED' });
}

/** REQUESTED → CONFIRMED (guarded). */
export async function confirmRefund(db: Db, id: string): Promise<void> {
  await ChargeRefund.query(db)
    .patch({ status: 'CONFIRMED', confirmedAt: new Date() })
    .where({ id, status: 'REQUESTED' });
}
