/**
 * The charge lifecycle's refund side (bound in ./lifecycle.ts): a devolução sent to the acquirer,
 * its outcome checked against the source and applied once (ledger, refund row, charge, event), or
 * parked for an operator. Each step idempotent, so activities retry freely.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { chargePaymentsStore } from '../../stores/charge-payments';
import { chargesStore, type Charge, type ChargeRefund } from '../../stores/charges';
import { callbackInboxStore } from '../../stores/callback-inbox';
import type { Refund } from '../../acquirer/types';
import { AcquirerError } from '../../acquirer/errors';
import { centsToDecimalString } from '../../domain/money';
import type { RefundSettledNotice } from '../../../workflows/charge-types';
import * as ledger from '../ledger/ledger';
import { recordEvent } from '../platform/events';
import { parkCallback } from '../inbox/callback-inbox';
import { acquirerRefundId } from '../../acquirer/wire';
import { recordUnconfirmedSignal } from '../platform/signal-checks';
import { reportFailedRefundShortfall } from '../med/shortfall';
import { recordRefund } from '../../observability/metrics';
import { paidAmountOf } from './payment-terms';
import { lockCharge, NotFoundError, type ChargeLifecycleCtx } from './lifecycle-shared';

async function refundTarget(
  ctx: ChargeLifecycleCtx,
  refundId: string,
): Promise<{ refund: ChargeRefund; e2eId: string }> {
  const charges = chargesStore(ctx.knex);
  const payments = chargePaymentsStore(ctx.knex);
  const refund = await payments.findRefund(refundId);
  if (!refund) throw new NotFoundError(`refund ${refundId} not found`);
  const e2eId = refund.e2eId ?? (await charges.find(refund.chargeId))?.e2eId;
  if (!e2eId) throw new NotFoundError(`refund ${refundId} has no payment to return`);
  return { refund, e2eId };
}

function outcomeOf(refundId: string, r: Refund): RefundSettledNotice | null {
  if (r.status === 'DEVOLVIDO') return { refundId, outcome: 'CONFIRMED' };
  if (r.status === 'NAO_REALIZADO') return { refundId, outcome: 'FAILED', reason: r.reason };
  return null;
}

export async function sendRefund(
  ctx: ChargeLifecycleCtx,
  refundId: string,
): Promise<{ settled: RefundSettledNotice | null }> {
  const { knex, acquirer, logger } = ctx;
  const { refund, e2eId } = await refundTarget(ctx, refundId);
  if (refund.status !== 'REQUESTED') return { settled: null };
  let r: Refund;
  try {
    r = await acquirer.requestRefund(e2eId, acquirerRefundId(refundId), refund.amount, refund.reason ?? undefined);
  } catch (err) {
    // The acquirer refused this devolução for good (e.g. more than the pix has left to return, or
    // an unknown end-to-end id): retrying cannot help, so it is an outcome, not a failure of the
    // workflow. FAILED gives a merchant's money back to available; a payer's stays for an operator.
    if (err instanceof AcquirerError && (err.code === 'REJECTED' || err.code === 'NOT_FOUND')) {
      logger.warn({ refundId, e2eId, err: err.message }, 'devolução refused by the acquirer');
      const reason = `refused by the acquirer: ${err.problem?.detail ?? err.code}`;
      // Kept on the row: the acquirer's own answer, which settling the refund then relies on.
      await chargePaymentsStore(knex).setRefundRefusal(refundId, reason);
      return { settled: { refundId, outcome: 'FAILED', reason } };
    }
    throw err;
  }
  await chargePaymentsStore(knex).setRefundRtrId(refundId, r.rtrId);
  return { settled: outcomeOf(refundId, r) };
}

export async function checkRefund(ctx: ChargeLifecycleCtx, refundId: string): Promise<RefundSettledNotice | null> {
  const { e2eId } = await refundTarget(ctx, refundId);
  return outcomeOf(refundId, await ctx.acquirer.getRefund(e2eId, acquirerRefundId(refundId)));
}

/**
 * A refund outcome handed to the workflow (a `refundSettled` signal, or its own question) as the
 * source states it (docs/architecture.md "Workflows carry intent; activities check facts"): the
 * signed callback of that outcome, the refusal the acquirer gave our request (kept on the row),
 * or else the acquirer's answer; null — recorded, nothing applied — when they do not bear it out.
 */
async function confirmedRefundOutcome(
  ctx: ChargeLifecycleCtx,
  result: RefundSettledNotice,
): Promise<RefundSettledNotice | null> {
  const { knex, acquirer, logger } = ctx;
  const payments = chargePaymentsStore(knex);
  const refund = await payments.findRefund(result.refundId);
  if (!refund || refund.status !== 'REQUESTED' || refund.kind === 'INFRACTION') return result;
  const status = result.outcome === 'CONFIRMED' ? 'DEVOLVIDO' : 'NAO_REALIZADO';
  if (await callbackInboxStore(knex).findSigned('refund', `${acquirerRefundId(refund.id)}:${status}`)) return result;
  if (result.outcome === 'FAILED' && refund.failureReason) return { ...result, reason: refund.failureReason };
  const { e2eId } = await refundTarget(ctx, refund.id);
  let fact: RefundSettledNotice | null = null;
  try {
    fact = outcomeOf(refund.id, await acquirer.getRefund(e2eId, acquirerRefundId(refund.id)));
  } catch (err) {
    if (!(err instanceof AcquirerError && err.code === 'NOT_FOUND')) throw err;
  }
  if (fact?.outcome === result.outcome) return fact;
  await recordUnconfirmedSignal(knex, logger, {
    workflow: 'charge',
    signal: 'refundSettled',
    verdict: fact ? 'disagrees' : 'no_source',
    subjectType: 'charge',
    subjectId: refund.chargeId,
    merchantId: refund.merchantId,
    claimed: result,
    source: fact,
  });
  return null;
}

export async function settleRefund(ctx: ChargeLifecycleCtx, claimed: RefundSettledNotice): Promise<void> {
  const result = await confirmedRefundOutcome(ctx, claimed);
  if (!result) return;
  const applied = await ctx.knex.transaction((trx) => applyRefundOutcome(ctx.logger, trx, result));
  if (applied) recordRefund(result.outcome === 'CONFIRMED' ? 'confirmed' : 'failed', applied.kind);
}

/** The confirmed outcome applied in one transaction, refund row then charge locked; undefined when not this workflow's. */
async function applyRefundOutcome(
  logger: Logger,
  trx: Knex.Transaction,
  result: RefundSettledNotice,
): Promise<{ kind: string } | undefined> {
  const payments = chargePaymentsStore(trx);
  const refund = await payments.findRefund(result.refundId, { lock: true });
  // A MED devolução's outcome is its infraction workflow's (docs/operations.md "MED infractions").
  if (!refund || refund.status !== 'REQUESTED' || refund.kind === 'INFRACTION') return undefined;
  // The outcome's inbox row (if it came by callback) is applied with it.
  await callbackInboxStore(trx).markAppliedIfKept(
    'refund',
    `${acquirerRefundId(refund.id)}:${result.outcome === 'CONFIRMED' ? 'DEVOLVIDO' : 'NAO_REALIZADO'}`,
    `refund ${result.outcome}`,
  );
  const charge = await lockCharge(trx, refund.chargeId);
  const confirmed = result.outcome === 'CONFIRMED';
  // One reference for both outcomes: whichever is applied first wins, enforced by the database.
  // A failed refund returns the merchant's money; a payer's money stays in transit for an operator.
  if (confirmed || refund.kind === 'MERCHANT') {
    await ledger.resolveInTransit(trx, {
      reference: `refund:${refund.id}:resolved`,
      kind: confirmed ? 'refund_confirmed' : 'refund_failed',
      merchantId: refund.merchantId,
      amount: refund.amount,
      outcome: confirmed ? 'left' : 'returned',
    });
  }
  if (!confirmed) {
    await refundFailed(logger, trx, refund, charge, result.reason);
    return { kind: refund.kind };
  }
  await payments.confirmRefund(refund.id);
  if (refund.kind === 'MERCHANT') await chargeRefunded(trx, refund, charge);
  return { kind: refund.kind };
}

/** A failed refund: a merchant's shortfall reported, a payer's left to an operator. */
async function refundFailed(
  logger: Logger,
  trx: Knex.Transaction,
  refund: ChargeRefund,
  charge: Charge,
  reason: string | undefined,
): Promise<void> {
  await chargePaymentsStore(trx).failRefund(refund.id, reason ?? 'refund not completed');
  if (refund.kind === 'MERCHANT') await reportFailedRefundShortfall(trx, logger, refund);
  if (refund.kind !== 'MERCHANT') {
    logger.error(
      { refundId: refund.id, chargeId: charge.id },
      'refund of an unpayable payment failed: needs an operator',
    );
  }
}

/** A merchant's refund confirmed: the charge's refunded amount (REFUNDED when all of it) and `charge.refunded`. */
async function chargeRefunded(trx: Knex.Transaction, refund: ChargeRefund, charge: Charge): Promise<void> {
  const refundedAmount = charge.refundedAmount + refund.amount;
  await chargePaymentsStore(trx).setRefunded(
    charge.id,
    charge.status,
    refundedAmount,
    refundedAmount >= paidAmountOf(charge) ? 'REFUNDED' : charge.status,
  );
  await recordEvent(trx, {
    merchantId: refund.merchantId,
    type: 'charge.refunded',
    reference: `charge.refunded:${refund.id}`,
    data: {
      refundId: refund.id,
      txid: charge.txid,
      chargeId: charge.id,
      amount: centsToDecimalString(refund.amount),
      status: 'closed',
      reason: refund.reason ?? '',
      end2endId: charge.e2eId,
    },
  });
}

/**
 * A refund the workflow could not carry (refused credentials, its outcome unappliable, or no
 * outcome after the polling budget): it stays REQUESTED (the money stays in transit, nothing is
 * lost) and operators are alerted once, through the inbox's parked list.
 */
export async function parkRefund(ctx: ChargeLifecycleCtx, refundId: string, reason: string): Promise<void> {
  const { knex, logger } = ctx;
  const refund = await chargePaymentsStore(knex).findRefund(refundId);
  await knex.transaction((trx) =>
    parkCallback(trx, logger, {
      kind: 'refund',
      externalId: `${acquirerRefundId(refundId)}:PARKED`,
      payload: { refundId, chargeId: refund?.chargeId ?? null, amount: refund?.amount ?? null },
      reason,
      merchantId: refund?.merchantId ?? null,
    }),
  );
}
