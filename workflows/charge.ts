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
import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
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

/** Database work: quick, retried often; rule violations are not retried. */
const db = proxyActivities<ChargeActivities>({
  startToCloseTimeout: '15 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 20,
    nonRetryableErrorTypes: ['NotFoundError', 'ValidationError', 'InvariantViolation'],
  },
});

/** Acquirer calls: slower, retried for hours (the acquirer may be down); 4xx answers are final. */
const acquirer = proxyActivities<ChargeActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '6 hours',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    nonRetryableErrorTypes: ['AcquirerRejectedError', 'NotFoundError', 'ValidationError'],
  },
});

/** How long to wait for a refund confirmation callback before asking the acquirer ourselves. */
const REFUND_POLL_INTERVAL_MS = 60_000;

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
    const s = await db.loadChargeSnapshot(input.chargeId);
    expiryDeadline ??= Date.now() + s.expiresInMs;
    if (s.settlesInMs !== null) settleDeadline ??= Date.now() + s.settlesInMs;
    return s;
  };
  let snapshot: ChargeSnapshot = await load();
  let phase: ChargeWorkflowState['phase'] = 'awaiting_payment';
  /** Refunds sent to the acquirer and waiting for the outcome, with the next poll time. */
  const openRefunds = new Map<string, number>();

  setHandler(paymentReceivedSignal, (p) => void payments.push(p));
  setHandler(cancelRequestedSignal, () => void (cancelRequested = true));
  setHandler(refundRequestedSignal, ({ refundId }) => void refundRequests.push(refundId));
  setHandler(refundSettledSignal, (r) => void refundResults.set(r.refundId, r));
  setHandler(chargeStateQuery, () => ({
    phase,
    chargeStatus: snapshot.status,
    openRefunds: [...openRefunds.keys()],
  }));

  for (const refundId of snapshot.openRefundIds) refundRequests.push(refundId);

  for (;;) {
    phase = currentPhase(snapshot, openRefunds.size + refundRequests.length);

    // 1. Payments: the first valid one pays the charge; any other goes back to the payer.
    while (payments.length > 0) {
      const notice = payments.shift() as PaymentNotice;
      const outcome = await db.recordPayment(input.chargeId, notice);
      if (outcome.kind === 'not_payable') refundRequests.push(outcome.refundId);
      snapshot = await load();
    }

    // 2. Refunds: send each to the acquirer once (idempotent on the refund id), then await the outcome.
    while (refundRequests.length > 0) {
      const refundId = refundRequests.shift() as string;
      if (openRefunds.has(refundId)) continue;
      const sent = await acquirer.sendRefund(refundId);
      if (sent.settled) {
        await db.settleRefund(sent.settled);
      } else {
        openRefunds.set(refundId, Date.now() + REFUND_POLL_INTERVAL_MS);
      }
      snapshot = await load();
    }
    for (const [refundId, result] of refundResults) {
      refundResults.delete(refundId);
      if (!openRefunds.has(refundId)) continue;
      await db.settleRefund(result);
      openRefunds.delete(refundId);
      snapshot = await load();
    }
    for (const [refundId, pollAt] of openRefunds) {
      if (Date.now() < pollAt) continue;
      const status = await acquirer.checkRefund(refundId);
      if (status) {
        await db.settleRefund(status);
        openRefunds.delete(refundId);
        snapshot = await load();
      } else {
        openRefunds.set(refundId, Date.now() + REFUND_POLL_INTERVAL_MS);
      }
    }

    // 3. Expiry or cancellation of an unpaid charge. The cancel endpoint may already have moved the
    //    charge to CANCELED in the database; either way the cob is removed at the acquirer
    //    (idempotent there), so nobody can pay a charge we no longer honour.
    const expired = snapshot.status === 'PENDING' && Date.now() >= (expiryDeadline ?? 0);
    if (expired || (cancelRequested && (snapshot.status === 'PENDING' || snapshot.status === 'CANCELED'))) {
      cancelRequested = false;
      if (snapshot.status === 'PENDING') await db.expireCharge(input.chargeId);
      snapshot = await load();
      if (snapshot.status === 'CANCELED' && snapshot.txid) await acquirer.removeCob(input.chargeId);
      continue;
    }
    cancelRequested = false;

    // 4. Settlement of a paid charge: pending → available once the delay has passed.
    if (settleDeadline !== undefined && !snapshot.settled && Date.now() >= settleDeadline) {
      await db.settleCharge(input.chargeId);
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
    if (waitingForPayment) deadlines.push(expiryDeadline ?? 0);
    if (waitingForSettlement && settleDeadline !== undefined) deadlines.push(settleDeadline);
    if (hasWork()) continue;
    if (deadlines.length === 0) await condition(hasWork);
    else await condition(hasWork, Math.max(Math.min(...deadlines) - Date.now(), 1));
  }
}

function currentPhase(s: ChargeSnapshot, openRefunds: number): ChargeWorkflowState['phase'] {
  if (openRefunds > 0) return 'refunding';
  if (s.status === 'PENDING') return 'awaiting_payment';
  if (s.settlesInMs !== null && !s.settled) return 'awaiting_settlement';
  return 'done';
}
