/**
 * The charge lifecycle's payment side (bound in ./lifecycle.ts): a payment confirmed and applied
 * or returned to its payer, the cob removed on expiry, the net settled, and the operator case of an
 * expiry the acquirer cannot be asked about. Each step idempotent, so activities retry freely.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { newId } from '../../lib/ids';
import { chargePaymentsStore, type PaymentContext } from '../../stores/charge-payments';
import { chargesStore, type Charge } from '../../stores/charges';
import { callbackInboxStore } from '../../stores/callback-inbox';
import type { Acquirer, PixReceived } from '../../acquirer/types';
import type { ChargeType } from '../../contracts/statuses';
import { AcquirerError } from '../../acquirer/errors';
import { computeFee } from '../../domain/money';
import type { ExpireOutcome, ExpiryCaseNotice, PaymentNotice, RecordedPayment } from '../../../workflows/charge-types';
import * as ledger from '../ledger/ledger';
import { recordEvent } from '../platform/events';
import { startCommittedDeliveries } from '../webhooks/start';
import type { PendingDelivery } from '../../stores/webhooks';
import { markCallbackApplied, parkCallback } from '../inbox/callback-inbox';
import { noticeOf, noticeOfReceived, pixWireOf } from '../../acquirer/wire';
import { pix as pixSchema } from '../../acquirer/wire';
import { recordUnconfirmedSignal } from '../platform/signal-checks';
import { closeOperatorCase, openOperatorCase } from '../platform/operator-cases';
import { paidAmountOf, paidColumnsOf, paidEventAmounts, paymentTermsOf, type PaymentTerms } from './payment-terms';
import {
  asDataIntegrity,
  findCharge,
  loadSnapshot,
  lockCharge,
  NotFoundError,
  snapshotOf,
  type ChargeLifecycleCtx,
} from './lifecycle-shared';

/** The payments the acquirer holds on a charge's cob, cobv (DUE_DATE) or cobr (RECURRING). */
async function paymentsAt(acquirer: Acquirer, type: ChargeType, txid: string): Promise<PixReceived[]> {
  if (type === 'DUE_DATE') return (await acquirer.getCobv(txid)).pix;
  if (type === 'RECURRING') return (await acquirer.getCobR(txid)).pix;
  return (await acquirer.getCob(txid)).pix;
}

/** Removes (cancels) a charge's cob, cobv or cobr at the acquirer. */
async function removeAt(acquirer: Acquirer, type: ChargeType, txid: string): Promise<void> {
  if (type === 'DUE_DATE') await acquirer.removeCobv(txid);
  else if (type === 'RECURRING') await acquirer.cancelCobR(txid);
  else await acquirer.removeCob(txid);
}

/** The inbox row of this payment is APPLIED in the same transaction as its effect. */
const paymentApplied = (trx: Knex.Transaction, notice: PaymentNotice, resolution: string) =>
  markCallbackApplied(trx, { kind: 'pix', externalId: notice.endToEndId, payload: pixWireOf(notice), resolution });

/**
 * A `paid` signal only says "look again" (docs/architecture.md "Workflows carry intent;
 * activities check facts"): the payment applied is the one the signed callback row of its
 * end-to-end id holds, or else the one the acquirer reports on the cob; with neither, nothing
 * moves and the signal is recorded. One already applied to this charge needs no second look.
 */
export async function recordPayment(
  ctx: ChargeLifecycleCtx,
  chargeId: string,
  notice: PaymentNotice,
): Promise<RecordedPayment> {
  const { knex, logger } = ctx;
  const charge = await findCharge(knex, chargeId);
  const fact = charge.e2eId === notice.endToEndId ? notice : await confirmedPayment(ctx, charge, notice);
  if (!fact || !samePayment(fact, notice)) {
    await recordUnconfirmedSignal(knex, logger, {
      workflow: 'charge',
      signal: 'paid',
      verdict: fact ? 'disagrees' : 'no_source',
      subjectType: 'charge',
      subjectId: chargeId,
      merchantId: charge.merchantId,
      claimed: notice,
      source: fact,
    });
  }
  if (!fact) return { kind: 'unconfirmed', snapshot: await loadSnapshot(ctx, chargeId) };
  try {
    return await applyPayment(ctx, chargeId, fact);
  } catch (err) {
    throw asDataIntegrity(err);
  }
}

/** The payment of this end-to-end id on the charge's cob, as the signed inbox row or else the acquirer says it. */
async function confirmedPayment(
  ctx: ChargeLifecycleCtx,
  charge: Charge,
  notice: PaymentNotice,
): Promise<PaymentNotice | null> {
  if (!charge.txid) return null;
  const row = await callbackInboxStore(ctx.knex).findSigned('pix', notice.endToEndId);
  const signed = row ? pixSchema.safeParse(row.payload) : undefined;
  if (signed?.success && signed.data.txid === charge.txid) return noticeOf(signed.data, charge.txid);
  const atAcquirer = await paymentsAtAcquirer(ctx, charge.id);
  return atAcquirer.find((p) => p.endToEndId === notice.endToEndId) ?? null;
}

const samePayment = (a: PaymentNotice, b: PaymentNotice): boolean =>
  a.endToEndId === b.endToEndId &&
  a.txid === b.txid &&
  a.amount === b.amount &&
  new Date(a.paidAt).getTime() === new Date(b.paidAt).getTime() &&
  (a.payer?.document ?? null) === (b.payer?.document ?? null);

/** A payment's outcome, and the deliveries its transaction left for this process to start. */
interface Applied {
  recorded: RecordedPayment;
  deliveries: PendingDelivery[];
}

const alone = (recorded: RecordedPayment): Applied => ({ recorded, deliveries: [] });

/**
 * One transaction: the charge locked with what deciding needs (one statement), the ledger
 * movements posted as one batch, the charge updated once, the inbox row applied, the event and
 * its deliveries recorded; it answers with the charge as it leaves it, so the charge run reads
 * nothing back. The charge row is locked, and every change to its refunds locks it too, so the
 * snapshot is the committed state. With a delivery client, `charge.paid`'s deliveries are started
 * once it committed, never inside it, and whatever the starts do the payment stands
 * (docs/performance.md "Payment to webhook: the timeline").
 */
async function applyPayment(
  ctx: ChargeLifecycleCtx,
  chargeId: string,
  notice: PaymentNotice,
): Promise<RecordedPayment> {
  const { webhookDeliveries } = ctx;
  const startAfterCommit = webhookDeliveries !== undefined;
  const applied = await ctx.knex.transaction(async (trx): Promise<Applied> => {
    const locked = await chargePaymentsStore(trx).lockForPayment(chargeId, notice.endToEndId);
    if (!locked) throw new NotFoundError(`charge ${chargeId} not found`);
    const { charge, openRefundIds } = locked;
    if (charge.e2eId === notice.endToEndId) {
      await paymentApplied(trx, notice, 'paid');
      return alone({ kind: 'duplicate', snapshot: snapshotOf(charge, openRefundIds) });
    }
    if (locked.takenAsUnpayable) {
      await paymentApplied(trx, notice, 'returned_to_payer');
      return alone({ kind: 'duplicate', snapshot: snapshotOf(charge, openRefundIds) });
    }
    const due = paymentTermsOf(charge, notice);
    if (charge.status === 'PENDING' && due.payable)
      return takePayment(trx, { chargeId, locked, notice, due, startAfterCommit });
    return alone(await returnToPayer(ctx.logger, trx, chargeId, locked, notice));
  });
  if (webhookDeliveries && applied.deliveries.length > 0) {
    await startCommittedDeliveries(
      { knex: ctx.knex, workflows: webhookDeliveries, logger: ctx.logger },
      applied.deliveries,
    );
  }
  return applied.recorded;
}

/** A payment that pays its PENDING charge: credited, the charge PAID, `charge.paid` recorded. */
async function takePayment(
  trx: Knex.Transaction,
  p: { chargeId: string; locked: PaymentContext; notice: PaymentNotice; due: PaymentTerms; startAfterCommit: boolean },
): Promise<Applied> {
  const { chargeId, notice, due } = p;
  const { charge, terms, openRefundIds } = p.locked;
  const fee = computeFee(due.paid, terms.feeBps, terms.feeFixed);
  const paidAt = new Date(notice.paidAt);
  const settleAt = new Date(paidAt.getTime() + terms.settlementDelaySeconds * 1000);
  // Settlement already due (a merchant that settles at once, or a callback later than the
  // delay): the net moves pending → available in the payment's own transaction and batch,
  // and the charge run, finding it settled, waits for no timer and runs no settling step
  // (docs/architecture.md "Charges: how they work"). Nothing can have taken from this net yet.
  const settledAt = settleAt.getTime() <= Date.now() ? new Date() : null;
  const movements = [
    ledger.chargePaymentCredit({ chargeId, merchantId: charge.merchantId, amount: due.paid, fee }),
    settledAt ? ledger.chargeSettlement({ chargeId, merchantId: charge.merchantId, net: due.paid - fee }) : null,
  ].filter((m) => m !== null);
  await ledger.postAll(trx, charge.merchantId, movements);
  const paid = {
    e2eId: notice.endToEndId,
    paidAt,
    payerName: notice.payer?.name ?? null,
    payerDocument: notice.payer?.document ?? null,
    feeAmount: fee,
    settleAt,
    ...(settledAt ? { settledAt } : {}),
  };
  // Guarded: the row is locked and PENDING, so this names the state it leaves.
  await chargePaymentsStore(trx).markPaid(chargeId, { ...paid, ...paidColumnsOf(due) });
  await paymentApplied(trx, notice, 'paid');
  const deliveries = await recordChargePaid(trx, { chargeId, charge, notice, due, paidAt }, p.startAfterCommit);
  const after = { ...charge, status: 'PAID' as const, settleAt, settledAt };
  return { recorded: { kind: 'paid', snapshot: snapshotOf(after, openRefundIds) }, deliveries };
}

/** The `charge.paid` event (docs/api.md "Events"), once per charge by its reference; its new deliveries. */
async function recordChargePaid(
  trx: Knex.Transaction,
  p: { chargeId: string; charge: Charge; notice: PaymentNotice; due: PaymentTerms; paidAt: Date },
  startAfterCommit: boolean,
): Promise<PendingDelivery[]> {
  const { chargeId, charge, notice } = p;
  const event = await recordEvent(
    trx,
    {
      merchantId: charge.merchantId,
      type: 'charge.paid',
      reference: `charge.paid:${chargeId}`,
      data: {
        chargeId,
        txid: charge.txid,
        ...paidEventAmounts(charge, p.due),
        paidAt: p.paidAt.toISOString(),
        payer: { name: notice.payer?.name ?? '', document: notice.payer?.document ?? '' },
      },
    },
    { startAfterCommit },
  );
  return event.deliveries;
}

/**
 * Not payable (expired, canceled, failed, paid by another payment, wrong amount): the money
 * is held in transit and goes back to the payer (docs/api.md "Charges").
 */
async function returnToPayer(
  logger: Logger,
  trx: Knex.Transaction,
  chargeId: string,
  { charge, openRefundIds }: PaymentContext,
  notice: PaymentNotice,
): Promise<RecordedPayment> {
  const refundId = newId('rf');
  await chargesStore(trx).insertRefund({
    id: refundId,
    chargeId,
    merchantId: charge.merchantId,
    amount: notice.amount,
    reason: `Payment not accepted: charge is ${charge.status}`,
    kind: 'UNPAYABLE_PAYMENT',
    status: 'REQUESTED',
    e2eId: notice.endToEndId,
  });
  await ledger.holdUnpayablePayment(trx, { refundId, merchantId: charge.merchantId, amount: notice.amount });
  await paymentApplied(trx, notice, 'returned_to_payer');
  logger.warn(
    { chargeId, e2eId: notice.endToEndId, status: charge.status },
    'payment for a charge that cannot take it: refunding',
  );
  return {
    kind: 'not_payable',
    refundId,
    snapshot: snapshotOf(charge, [...openRefundIds, refundId]),
  } as const;
}

/**
 * A payment the workflow could not apply (recordPayment failed for good): parked in the inbox
 * with an operator alert, never dropped. `ops callbacks redrive` hands it on again after the fix.
 */
export async function parkPayment(
  ctx: ChargeLifecycleCtx,
  chargeId: string,
  notice: PaymentNotice,
  reason: string,
): Promise<void> {
  const { knex, logger } = ctx;
  const charge = await chargesStore(knex).find(chargeId);
  await knex.transaction((trx) =>
    parkCallback(trx, logger, {
      kind: 'pix',
      externalId: notice.endToEndId,
      payload: pixWireOf(notice),
      reason: `charge ${chargeId}: ${reason}`,
      merchantId: charge?.merchantId ?? null,
    }),
  );
}

/** The payments the acquirer holds for this charge's cob (`GET /cob/{txid}`). */
export async function paymentsAtAcquirer(ctx: ChargeLifecycleCtx, chargeId: string): Promise<PaymentNotice[]> {
  const charge = await chargesStore(ctx.knex).find(chargeId);
  if (!charge?.txid) return [];
  const { txid } = charge;
  try {
    return (await paymentsAt(ctx.acquirer, charge.type, txid)).map((p) => noticeOfReceived(p, txid));
  } catch (err) {
    // No cob at the acquirer: nothing was paid.
    if (err instanceof AcquirerError && err.code === 'NOT_FOUND') return [];
    throw err;
  }
}

export async function expire(ctx: ChargeLifecycleCtx, chargeId: string): Promise<ExpireOutcome> {
  const expired = await chargePaymentsStore(ctx.knex).expirePending(chargeId);
  return expired ? { kind: 'canceled' } : { kind: 'not_pending' };
}

/** Removes the cob; returns the payments found when it was paid meanwhile (they must be applied). */
export async function removeCob(ctx: ChargeLifecycleCtx, chargeId: string): Promise<PaymentNotice[]> {
  const charge = await chargesStore(ctx.knex).find(chargeId);
  if (!charge?.txid) return [];
  try {
    await removeAt(ctx.acquirer, charge.type, charge.txid);
    return [];
  } catch (err) {
    // 404: nothing to remove. 400: the cob was concluded (paid) at the acquirer meanwhile: that
    // payment is returned to the workflow, which takes it (here: back to the payer, the charge
    // being CANCELED) whether or not its callback ever arrives.
    if (err instanceof AcquirerError && err.status === 404) return [];
    if (err instanceof AcquirerError && err.status === 400) {
      ctx.logger.warn({ chargeId }, 'cob paid at the acquirer before it could be removed');
      return paymentsAtAcquirer(ctx, chargeId);
    }
    throw err;
  }
}

export async function settle(ctx: ChargeLifecycleCtx, chargeId: string): Promise<void> {
  await ctx.knex.transaction(async (trx) => {
    const charge = await lockCharge(trx, chargeId);
    if (charge.settledAt || charge.feeAmount === null) return;
    const net = paidAmountOf(charge) - charge.feeAmount;
    // Refunds of this charge asked before settlement may have taken part of its net from pending
    // (available first, then pending): only what they left of it is still this charge's to move.
    // Pending is a pool shared by the merchant's charges, so the total pending cannot tell; the
    // split each refund debit recorded can. Bounded by pending as a last guard.
    const takenFromPending = await chargePaymentsStore(trx).pendingTakenByRefunds(chargeId);
    const { pending } = await ledger.getBalance(trx, charge.merchantId);
    const toMove = Math.max(0, Math.min(net - takenFromPending, pending));
    await ledger.settleChargePayment(trx, { chargeId, merchantId: charge.merchantId, net: toMove });
    await chargePaymentsStore(trx).markSettled(chargeId);
  });
}

/**
 * A due charge whose cob the acquirer cannot be asked about (docs/architecture.md "Charges: how they work",
 * Expiry): the charge stays PENDING and an operator is told, once per charge and outage.
 */
export async function openExpiryCase(
  ctx: ChargeLifecycleCtx,
  chargeId: string,
  notice: ExpiryCaseNotice,
): Promise<void> {
  const charge = await findCharge(ctx.knex, chargeId);
  await ctx.knex.transaction((trx) =>
    openOperatorCase(trx, ctx.logger, {
      reference: notice.reference,
      kind: 'EXPIRY_ACQUIRER_UNREACHABLE',
      merchantId: charge.merchantId,
      subjectType: 'charge',
      subjectId: chargeId,
      reason: `charge due to expire, but the acquirer cannot be asked whether its cob was paid (${notice.error}): kept PENDING, asked again until ${notice.askUntil}`,
      details: {
        txid: charge.txid,
        amount: charge.amount,
        error: notice.error,
        since: notice.since,
        askUntil: notice.askUntil,
      },
    }),
  );
}

/** The wait ended on its own: the case (if an operator has not resolved it) is resolved by the system. */
export async function closeExpiryCase(
  ctx: ChargeLifecycleCtx,
  chargeId: string,
  reference: string,
  resolution: string,
): Promise<void> {
  const { knex, logger } = ctx;
  await knex.transaction((trx) => closeOperatorCase(trx, logger, reference, resolution));
  logger.info({ chargeId, reference, resolution }, 'expiry wait for the acquirer ended');
}
