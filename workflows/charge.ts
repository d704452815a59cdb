/**
 * The life of one charge, `charge-<chargeId>`: wait for the payment or the expiry; on payment post
 * the ledger credit with the fee split and `charge.paid`, then move the net amount pending →
 * available after the merchant's settlement delay; on expiry cancel and remove the cob; carry refunds
 * to the acquirer and back.
 *
 * Every outside event reaches the workflow by signal-with-start, and the workflow starts from what
 * PostgreSQL says, so a signal that arrives after a run has closed (a late payment, a refund asked a
 * week later) starts a fresh run that picks up where the data stands. Only orchestration lives
 * here: every rule is in a service behind an activity.
 */
import {
  ActivityFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { ChargeActivities } from '../activities/charges';
import type {
  ChargeSnapshot,
  ChargeWorkflowInput,
  ChargeWorkflowState,
  PaymentNotice,
  RefundSettledNotice,
} from './charge-types';

export const paymentReceivedSignal = defineSignal<[PaymentNotice]>('paid');
export const cancelRequestedSignal = defineSignal<[]>('cancel');
export const refundRequestedSignal = defineSignal<[{ refundId: string }]>('refund');
export const refundSettledSignal = defineSignal<[RefundSettledNotice]>('refundSettled');
export const chargeStateQuery = defineQuery<ChargeWorkflowState>('state');

/*
 * Retry policy per activity. Two families:
 * - database steps: quick (10–15 s per attempt), retried from 0.5 s up to every 30 s for a day. Never
 *   a small attempt cap: giving up on `recordPayment` while PostgreSQL is down would drop a payment
 *   the payer has made. Final at once: the charge does not exist (NotFoundError) or the ledger
 *   refused a movement that breaks its rules (InvariantViolation) — an operator's case, not a retry's.
 * - acquirer calls: 30 s per attempt, from 1 s up to every 5 min for 6 hours (the acquirer may be
 *   down for a while). Final at once: the acquirer refused the request (AcquirerRejectedError:
 *   4xx, bad credentials, off-protocol answer) or our own data is missing (NotFoundError).
 * Every activity is idempotent (guarded updates, ledger and event references, acquirer ids), so a
 * retry after an attempt that did commit changes nothing.
 */
const DB_RETRY = { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' } as const;
const ACQUIRER_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' } as const;

const { loadChargeSnapshot } = proxyActivities<ChargeActivities>({
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { ...DB_RETRY, nonRetryableErrorTypes: ['NotFoundError'] },
});
const { recordPayment, settleCharge, settleRefund } = proxyActivities<ChargeActivities>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { ...DB_RETRY, nonRetryableErrorTypes: ['NotFoundError', 'InvariantViolation', 'DataIntegrityError'] },
});
/** Parking is how nothing is dropped: it must succeed, so it retries like any database step. */
const { expireCharge, parkPayment, parkRefund } = proxyActivities<ChargeActivities>({
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { ...DB_RETRY, nonRetryableErrorTypes: [] },
});
/** removeCob already treats "already removed" and "paid meanwhile" as done; anything else refused is final. */
const { removeCob, paymentsAtAcquirer } = proxyActivities<ChargeActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '6 hours',
  retry: { ...ACQUIRER_RETRY, nonRetryableErrorTypes: ['AcquirerRejectedError'] },
});
/** sendRefund turns a refused devolução into a FAILED outcome itself; what still throws final is credentials or protocol. */
const { sendRefund, checkRefund } = proxyActivities<ChargeActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '6 hours',
  retry: { ...ACQUIRER_RETRY, nonRetryableErrorTypes: ['AcquirerRejectedError', 'NotFoundError'] },
});

/**
 * Refund outcome polling, when no callback comes: first after 1 minute, doubling up to every hour,
 * at most REFUND_MAX_POLLS times (about two and a half days); then the refund is parked for an
 * operator (README "The callback inbox and reconciliation"). Every REFUND_POLLS_PER_RUN polls the
 * run continues as new, so a long wait never grows one history without bound.
 */
const REFUND_POLL_FIRST_MS = 60_000;
const REFUND_POLL_MAX_MS = 3_600_000;
const REFUND_MAX_POLLS = 60;
const REFUND_POLLS_PER_RUN = 20;

const failureMessage = (err: unknown): string => {
  if (err instanceof ActivityFailure) return err.cause?.message ?? err.message;
  return err instanceof Error ? err.message : String(err);
};

export async function chargeWorkflow(input: ChargeWorkflowInput): Promise<ChargeWorkflowState> {
  const payments: PaymentNotice[] = [];
  const refundRequests: string[] = [];
  const refundResults = new Map<string, RefundSettledNotice>();
  let cancelRequested = false;
  const hasWork = (): boolean =>
    payments.length > 0 || refundRequests.length > 0 || refundResults.size > 0 || cancelRequested;

  // Deadlines on the workflow's clock, fixed the first time the workflow learns them.
  let expiryDeadline: number | undefined;
  let settleDeadline: number | undefined;
  const load = async (): Promise<ChargeSnapshot> => {
    const s = await loadChargeSnapshot(input.chargeId);
    expiryDeadline ??= Date.now() + s.expiresInMs;
    if (s.settlesInMs !== null) settleDeadline ??= Date.now() + s.settlesInMs;
    return s;
  };
  let snapshot: ChargeSnapshot = await load();
  let phase: ChargeWorkflowState['phase'] = 'awaiting_payment';
  /** Refunds sent to the acquirer and waiting for the outcome, with the next poll time. */
  const openRefunds = new Map<string, number>();
  /** Polls made per refund, carried across continue-as-new. */
  const refundPolls = new Map<string, number>(Object.entries(input.refundPolls ?? {}));
  let pollsThisRun = 0;
  /** End-to-end ids this run has applied, so a payment the acquirer reports again is not re-queued. */
  const applied = new Set<string>();
  /** Payments of this charge parked for an operator: paid at the acquirer, so the charge never expires. */
  const parked = new Set<string>();
  const pollDelay = (refundId: string): number =>
    Math.min(REFUND_POLL_FIRST_MS * 2 ** (refundPolls.get(refundId) ?? 0), REFUND_POLL_MAX_MS);
  const dropRefund = (refundId: string): void => {
    openRefunds.delete(refundId);
    refundPolls.delete(refundId);
  };

  setHandler(paymentReceivedSignal, (p) => void payments.push(p));
  setHandler(cancelRequestedSignal, () => void (cancelRequested = true));
  setHandler(refundRequestedSignal, ({ refundId }) => void refundRequests.push(refundId));
  setHandler(refundSettledSignal, (r) => void refundResults.set(r.refundId, r));
  // The phase from the latest snapshot: the loop's own `phase` is only refreshed at the top of an
  // iteration, so a charge paid in this iteration would still read as awaiting payment while it sleeps.
  setHandler(chargeStateQuery, () => ({
    phase: phase === 'done' ? phase : currentPhase(snapshot, openRefunds.size + refundRequests.length),
    chargeStatus: snapshot.status,
    openRefunds: [...openRefunds.keys()],
  }));

  for (const refundId of snapshot.openRefundIds) refundRequests.push(refundId);

  for (;;) {
    phase = currentPhase(snapshot, openRefunds.size + refundRequests.length);

    // 1. Payments: the first valid one pays the charge; any other goes back to the payer. One that
    //    cannot be applied is parked with an operator alert, never dropped.
    while (payments.length > 0) {
      const notice = payments.shift() as PaymentNotice;
      applied.add(notice.endToEndId);
      try {
        const outcome = await recordPayment(input.chargeId, notice);
        if (outcome.kind === 'not_payable') refundRequests.push(outcome.refundId);
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        await parkPayment(input.chargeId, notice, failureMessage(err));
        parked.add(notice.endToEndId);
      }
      snapshot = await load();
    }

    // 2. Refunds: send each to the acquirer once (idempotent on the refund id), then await the outcome.
    while (refundRequests.length > 0) {
      const refundId = refundRequests.shift() as string;
      if (openRefunds.has(refundId)) continue;
      try {
        const sent = await sendRefund(refundId);
        if (sent.settled) {
          await settleRefund(sent.settled);
          dropRefund(refundId);
        } else {
          openRefunds.set(refundId, Date.now() + pollDelay(refundId));
        }
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        await parkRefund(refundId, `could not be carried: ${failureMessage(err)}`);
        dropRefund(refundId);
      }
      snapshot = await load();
    }
    for (const [refundId, result] of refundResults) {
      refundResults.delete(refundId);
      if (!openRefunds.has(refundId)) continue;
      try {
        await settleRefund(result);
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        await parkRefund(refundId, `outcome ${result.outcome} could not be applied: ${failureMessage(err)}`);
      }
      dropRefund(refundId);
      snapshot = await load();
    }
    for (const [refundId, pollAt] of openRefunds) {
      if (Date.now() < pollAt) continue;
      const polls = (refundPolls.get(refundId) ?? 0) + 1;
      refundPolls.set(refundId, polls);
      pollsThisRun++;
      try {
        const status = await checkRefund(refundId);
        if (status) {
          await settleRefund(status);
          dropRefund(refundId);
          snapshot = await load();
        } else if (polls >= REFUND_MAX_POLLS) {
          await parkRefund(refundId, `no outcome from the acquirer after ${polls} polls`);
          dropRefund(refundId);
          snapshot = await load();
        } else {
          openRefunds.set(refundId, Date.now() + pollDelay(refundId));
        }
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        await parkRefund(refundId, `could not be checked: ${failureMessage(err)}`);
        dropRefund(refundId);
        snapshot = await load();
      }
    }

    // 3. Expiry or cancellation of an unpaid charge. Before expiring, the acquirer is asked what
    //    happened to the cob: a cob found paid is a payment (its callback may never come), never a
    //    cancellation. The cancel endpoint may already have moved the charge to CANCELED; either
    //    way the cob is removed at the acquirer (idempotent there), so nobody can pay a charge we
    //    no longer honour; a payment that beat the removal comes back from removeCob and is applied
    //    (returned to the payer).
    //    A charge whose payment is parked waits, unexpired, for that payment to be re-driven.
    const expired = snapshot.status === 'PENDING' && parked.size === 0 && Date.now() >= (expiryDeadline ?? 0);
    // (`patched`: histories recorded before this step existed replay without it.)
    if (expired && !cancelRequested && snapshot.txid && patched('charge-asks-acquirer-before-expiry')) {
      const found = (await askAcquirer(input.chargeId)).filter((p) => !applied.has(p.endToEndId));
      if (found.length > 0) {
        payments.push(...found);
        continue;
      }
    }
    if (expired || (cancelRequested && (snapshot.status === 'PENDING' || snapshot.status === 'CANCELED'))) {
      cancelRequested = false;
      if (snapshot.status === 'PENDING') await expireCharge(input.chargeId);
      snapshot = await load();
      if (snapshot.status === 'CANCELED' && snapshot.txid) {
        // `?? []`: histories recorded when removeCob returned nothing.
        const paidMeanwhile = ((await removeCob(input.chargeId)) ?? []).filter((p) => !applied.has(p.endToEndId));
        if (paidMeanwhile.length > 0) payments.push(...paidMeanwhile);
      }
      continue;
    }
    cancelRequested = false;

    // 4. Settlement of a paid charge: pending → available once the delay has passed.
    if (settleDeadline !== undefined && !snapshot.settled && Date.now() >= settleDeadline) {
      await settleCharge(input.chargeId);
      snapshot = await load();
      continue;
    }

    // 5. Done when nothing is owed: no open refund, settled if paid, and not awaiting payment.
    const waitingForPayment = snapshot.status === 'PENDING';
    const waitingForSettlement = settleDeadline !== undefined && !snapshot.settled;
    if (!waitingForPayment && !waitingForSettlement && openRefunds.size === 0 && !hasWork()) {
      phase = 'done';
      return { phase, chargeStatus: snapshot.status, openRefunds: [] };
    }

    // 6. Sleep until the next deadline or until a signal brings work.
    const deadlines: number[] = [...openRefunds.values()];
    if (waitingForPayment && parked.size === 0) deadlines.push(expiryDeadline ?? 0);
    if (waitingForSettlement && settleDeadline !== undefined) deadlines.push(settleDeadline);
    if (hasWork()) continue;
    // A long refund wait continues as new (the next run reads the charge again from the database
    // and re-sends open refunds, idempotent at the acquirer), carrying the poll counts.
    if (pollsThisRun >= REFUND_POLLS_PER_RUN) {
      return continueAsNew<typeof chargeWorkflow>({ chargeId: input.chargeId, refundPolls: Object.fromEntries(refundPolls) });
    }
    if (deadlines.length === 0) await condition(hasWork);
    else await condition(hasWork, Math.max(Math.min(...deadlines) - Date.now(), 1));
  }
}

/** The payments the acquirer reports on the cob; if it cannot be asked, none (the expiry goes on and removeCob catches a paid cob). */
async function askAcquirer(chargeId: string): Promise<PaymentNotice[]> {
  try {
    return await paymentsAtAcquirer(chargeId);
  } catch (err) {
    if (err instanceof ActivityFailure) return [];
    throw err;
  }
}

function currentPhase(s: ChargeSnapshot, openRefunds: number): ChargeWorkflowState['phase'] {
  if (openRefunds > 0) return 'refunding';
  if (s.status === 'PENDING') return 'awaiting_payment';
  if (s.settlesInMs !== null && !s.settled) return 'awaiting_settlement';
  return 'done';
}
