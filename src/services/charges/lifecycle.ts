/**
 * Charges, workflow side: everything that happens to a charge after creation, each step
 * idempotent (locked rows, guarded updates, ledger references, event references) so the charge
 * workflow's activities can be retried freely.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { newId } from '../../lib/ids';
import { chargePaymentsStore } from '../../stores/charge-payments';
import { chargesStore, type Charge, type ChargeRefund } from '../../stores/charges';
import { callbackInboxStore } from '../../stores/callback-inbox';
import type { Acquirer, PixReceived, Refund } from '../../acquirer/types';
import type { ChargeType } from '../../contracts/statuses';
import { AcquirerError } from '../../acquirer/errors';
import { centsToDecimalString, computeFee } from '../../domain/money';
import type {
  ChargeSnapshot,
  ExpireOutcome,
  ExpiryCaseNotice,
  PaymentNotice,
  RecordedPayment,
  RefundSettledNotice,
} from '../../../workflows/charge-types';
import * as ledger from '../ledger/ledger';
import { recordEvent } from '../platform/events';
import { markCallbackApplied, parkCallback } from '../inbox/callback-inbox';
import { acquirerRefundId, noticeOf, noticeOfReceived, pixWireOf } from '../../acquirer/wire';
import { pix as pixSchema } from '../../acquirer/wire';
import { recordUnconfirmedSignal } from '../platform/signal-checks';
import { reportFailedRefundShortfall } from '../med/shortfall';
import { closeOperatorCase, openOperatorCase } from '../platform/operator-cases';
import { recordRefund } from '../../observability/metrics';
import { errorMessage } from '../../lib/error-message';
import { paidAmountOf, paidColumnsOf, paidEventAmounts, paymentTermsOf } from './payment-terms';

export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/**
 * The database refused the data itself (a constraint or a data exception, SQLSTATE classes 22 and
 * 23): retrying the same statement cannot succeed, so the workflow parks what it was applying
 * instead of retrying for a day (docs/operations.md "The callback inbox and reconciliation").
 */
export class DataIntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataIntegrityError';
  }
}

export { parkedRefundRows } from '../../stores/charges';

function asDataIntegrity(err: unknown): unknown {
  // pg puts the SQLSTATE on `code`; objection wraps it and keeps pg's error as `nativeError`.
  const e = err as { code?: unknown; nativeError?: { code?: unknown } } | null;
  const code = typeof e?.code === 'string' ? e.code : e?.nativeError?.code;
  if (typeof code === 'string' && /^2[23]/.test(code)) {
    return new DataIntegrityError(`database refused the change (${code}): ${errorMessage(err)}`);
  }
  return err;
}

/** The charge as its workflow sees it; the times left are counted from now. */
function snapshotOf(
  charge: Pick<Charge, 'id' | 'merchantId' | 'status' | 'txid' | 'amount' | 'expiresAt' | 'settleAt' | 'settledAt'>,
  openRefundIds: string[],
): ChargeSnapshot {
  return {
    id: charge.id,
    merchantId: charge.merchantId,
    status: charge.status,
    txid: charge.txid,
    amount: charge.amount,
    expiresInMs: charge.expiresAt.getTime() - Date.now(),
    settlesInMs: charge.settleAt ? charge.settleAt.getTime() - Date.now() : null,
    settled: charge.settledAt !== null,
    openRefundIds,
  };
}

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

export function createChargeLifecycle(deps: { knex: Knex; acquirer: Acquirer; logger: Logger }) {
  const { knex, acquirer, logger } = deps;

  async function lockCharge(trx: Knex.Transaction, chargeId: string): Promise<Charge> {
    const charge = await chargesStore(trx).find(chargeId, { lock: true });
    if (!charge) throw new NotFoundError(`charge ${chargeId} not found`);
    return charge;
  }

  async function loadSnapshot(chargeId: string): Promise<ChargeSnapshot> {
    const charges = chargesStore(knex);
    const payments = chargePaymentsStore(knex);
    const charge = await charges.find(chargeId);
    if (!charge) throw new NotFoundError(`charge ${chargeId} not found`);
    // Refunds parked for an operator are not taken up again until they are re-driven.
    return snapshotOf(charge, await payments.openRefundIds(chargeId));
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
  async function recordPayment(chargeId: string, notice: PaymentNotice): Promise<RecordedPayment> {
    const charge = await chargesStore(knex).find(chargeId);
    if (!charge) throw new NotFoundError(`charge ${chargeId} not found`);
    const fact = charge.e2eId === notice.endToEndId ? notice : await confirmedPayment(charge, notice);
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
    if (!fact) return { kind: 'unconfirmed', snapshot: await loadSnapshot(chargeId) };
    try {
      return await applyPayment(chargeId, fact);
    } catch (err) {
      throw asDataIntegrity(err);
    }
  }

  /** The payment of this end-to-end id on the charge's cob, as the signed inbox row or else the acquirer says it. */
  async function confirmedPayment(charge: Charge, notice: PaymentNotice): Promise<PaymentNotice | null> {
    if (!charge.txid) return null;
    const row = await callbackInboxStore(knex).findSigned('pix', notice.endToEndId);
    const signed = row ? pixSchema.safeParse(row.payload) : undefined;
    if (signed?.success && signed.data.txid === charge.txid) return noticeOf(signed.data, charge.txid);
    const atAcquirer = await paymentsAtAcquirer(charge.id);
    return atAcquirer.find((p) => p.endToEndId === notice.endToEndId) ?? null;
  }

  const samePayment = (a: PaymentNotice, b: PaymentNotice): boolean =>
    a.endToEndId === b.endToEndId &&
    a.txid === b.txid &&
    a.amount === b.amount &&
    new Date(a.paidAt).getTime() === new Date(b.paidAt).getTime() &&
    (a.payer?.document ?? null) === (b.payer?.document ?? null);

  /**
   * One transaction: the charge locked with what deciding needs (one statement), the ledger
   * movements posted as one batch, the charge updated once, the inbox row applied, the event and
   * its deliveries recorded; it answers with the charge as it leaves it, so the charge run reads
   * nothing back (docs/performance.md "Payment to webhook: the timeline"). The charge row is
   * locked, and every change to its refunds locks it too, so the snapshot is the committed state.
   */
  async function applyPayment(chargeId: string, notice: PaymentNotice): Promise<RecordedPayment> {
    return knex.transaction(async (trx) => {
      const locked = await chargePaymentsStore(trx).lockForPayment(chargeId, notice.endToEndId);
      if (!locked) throw new NotFoundError(`charge ${chargeId} not found`);
      const { charge, terms, openRefundIds } = locked;
      if (charge.e2eId === notice.endToEndId) {
        await paymentApplied(trx, notice, 'paid');
        return { kind: 'duplicate', snapshot: snapshotOf(charge, openRefundIds) } as const;
      }
      if (locked.takenAsUnpayable) {
        await paymentApplied(trx, notice, 'returned_to_payer');
        return { kind: 'duplicate', snapshot: snapshotOf(charge, openRefundIds) } as const;
      }

      const due = paymentTermsOf(charge, notice);
      if (charge.status === 'PENDING' && due.payable) {
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
        await recordEvent(trx, {
          merchantId: charge.merchantId,
          type: 'charge.paid',
          reference: `charge.paid:${chargeId}`,
          data: {
            chargeId,
            txid: charge.txid,
            ...paidEventAmounts(charge, due),
            paidAt: paidAt.toISOString(),
            payer: { name: notice.payer?.name ?? '', document: notice.payer?.document ?? '' },
          },
        });
        const after = { ...charge, status: 'PAID' as const, settleAt, settledAt };
        return { kind: 'paid', snapshot: snapshotOf(after, openRefundIds) } as const;
      }

      // Not payable (expired, canceled, failed, paid by another payment, wrong amount): the money
      // is held in transit and goes back to the payer (docs/api.md "Charges").
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
    });
  }

  /**
   * A payment the workflow could not apply (recordPayment failed for good): parked in the inbox
   * with an operator alert, never dropped. `ops callbacks redrive` hands it on again after the fix.
   */
  async function parkPayment(chargeId: string, notice: PaymentNotice, reason: string): Promise<void> {
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
  async function paymentsAtAcquirer(chargeId: string): Promise<PaymentNotice[]> {
    const charge = await chargesStore(knex).find(chargeId);
    if (!charge?.txid) return [];
    const { txid } = charge;
    try {
      return (await paymentsAt(acquirer, charge.type, txid)).map((p) => noticeOfReceived(p, txid));
    } catch (err) {
      // No cob at the acquirer: nothing was paid.
      if (err instanceof AcquirerError && err.code === 'NOT_FOUND') return [];
      throw err;
    }
  }

  async function expire(chargeId: string): Promise<ExpireOutcome> {
    const expired = await chargePaymentsStore(knex).expirePending(chargeId);
    return expired ? { kind: 'canceled' } : { kind: 'not_pending' };
  }

  /** Removes the cob; returns the payments found when it was paid meanwhile (they must be applied). */
  async function removeCob(chargeId: string): Promise<PaymentNotice[]> {
    const charge = await chargesStore(knex).find(chargeId);
    if (!charge?.txid) return [];
    try {
      await removeAt(acquirer, charge.type, charge.txid);
      return [];
    } catch (err) {
      // 404: nothing to remove. 400: the cob was concluded (paid) at the acquirer meanwhile: that
      // payment is returned to the workflow, which takes it (here: back to the payer, the charge
      // being CANCELED) whether or not its callback ever arrives.
      if (err instanceof AcquirerError && err.status === 404) return [];
      if (err instanceof AcquirerError && err.status === 400) {
        logger.warn({ chargeId }, 'cob paid at the acquirer before it could be removed');
        return paymentsAtAcquirer(chargeId);
      }
      throw err;
    }
  }

  async function settle(chargeId: string): Promise<void> {
    await knex.transaction(async (trx) => {
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

  async function refundTarget(refundId: string): Promise<{ refund: ChargeRefund; e2eId: string }> {
    const charges = chargesStore(knex);
    const payments = chargePaymentsStore(knex);
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

  async function sendRefund(refundId: string): Promise<{ settled: RefundSettledNotice | null }> {
    const { refund, e2eId } = await refundTarget(refundId);
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

  async function checkRefund(refundId: string): Promise<RefundSettledNotice | null> {
    const { e2eId } = await refundTarget(refundId);
    return outcomeOf(refundId, await acquirer.getRefund(e2eId, acquirerRefundId(refundId)));
  }

  /**
   * A refund outcome handed to the workflow (a `refundSettled` signal, or its own question) as the
   * source states it (docs/architecture.md "Workflows carry intent; activities check facts"): the
   * signed callback of that outcome, the refusal the acquirer gave our request (kept on the row),
   * or else the acquirer's answer; null — recorded, nothing applied — when they do not bear it out.
   */
  async function confirmedRefundOutcome(result: RefundSettledNotice): Promise<RefundSettledNotice | null> {
    const payments = chargePaymentsStore(knex);
    const refund = await payments.findRefund(result.refundId);
    if (!refund || refund.status !== 'REQUESTED' || refund.kind === 'INFRACTION') return result;
    const status = result.outcome === 'CONFIRMED' ? 'DEVOLVIDO' : 'NAO_REALIZADO';
    if (await callbackInboxStore(knex).findSigned('refund', `${acquirerRefundId(refund.id)}:${status}`)) return result;
    if (result.outcome === 'FAILED' && refund.failureReason) return { ...result, reason: refund.failureReason };
    const { e2eId } = await refundTarget(refund.id);
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

  async function settleRefund(claimed: RefundSettledNotice): Promise<void> {
    const result = await confirmedRefundOutcome(claimed);
    if (!result) return;
    const applied = await knex.transaction(async (trx): Promise<{ kind: string } | undefined> => {
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
        await payments.failRefund(refund.id, result.reason ?? 'refund not completed');
        if (refund.kind === 'MERCHANT') await reportFailedRefundShortfall(trx, logger, refund);
        if (refund.kind !== 'MERCHANT') {
          logger.error(
            { refundId: refund.id, chargeId: charge.id },
            'refund of an unpayable payment failed: needs an operator',
          );
        }
        return { kind: refund.kind };
      }
      await payments.confirmRefund(refund.id);
      if (refund.kind !== 'MERCHANT') return { kind: refund.kind };
      const refundedAmount = charge.refundedAmount + refund.amount;
      await payments.setRefunded(
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
      return { kind: refund.kind };
    });
    if (applied) recordRefund(result.outcome === 'CONFIRMED' ? 'confirmed' : 'failed', applied.kind);
  }

  /**
   * A refund the workflow could not carry (refused credentials, its outcome unappliable, or no
   * outcome after the polling budget): it stays REQUESTED (the money stays in transit, nothing is
   * lost) and operators are alerted once, through the inbox's parked list.
   */
  async function parkRefund(refundId: string, reason: string): Promise<void> {
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

  /**
   * A due charge whose cob the acquirer cannot be asked about (docs/architecture.md "Charges: how they work",
   * Expiry): the charge stays PENDING and an operator is told, once per charge and outage.
   */
  async function openExpiryCase(chargeId: string, notice: ExpiryCaseNotice): Promise<void> {
    const charge = await chargesStore(knex).find(chargeId);
    if (!charge) throw new NotFoundError(`charge ${chargeId} not found`);
    await knex.transaction((trx) =>
      openOperatorCase(trx, logger, {
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
  async function closeExpiryCase(chargeId: string, reference: string, resolution: string): Promise<void> {
    await knex.transaction((trx) => closeOperatorCase(trx, logger, reference, resolution));
    logger.info({ chargeId, reference, resolution }, 'expiry wait for the acquirer ended');
  }

  return {
    openExpiryCase,
    closeExpiryCase,
    loadSnapshot,
    recordPayment,
    parkPayment,
    paymentsAtAcquirer,
    expire,
    removeCob,
    settle,
    sendRefund,
    checkRefund,
    settleRefund,
    parkRefund,
  };
}

export type ChargeLifecycle = ReturnType<typeof createChargeLifecycle>;
