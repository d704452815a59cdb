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
  log,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { ChargeActivities } from '../activities/charges';
import type {
  ChargeSnapshot,
  ChargeWorkflowInput,
  ChargeWorkflowState,
  ExpiryWait,
  PaymentNotice,
  RefundSettledNotice,
} from './charge-types';
import { ACQUIRER_RETRY, DB_RETRY } from './retry-policies';
import { errorMessage } from '../src/lib/error-message';

export const paymentReceivedSignal = defineSignal<[PaymentNotice]>('paid');
export const cancelRequestedSignal = defineSignal<[]>('cancel');
export const refundRequestedSignal = defineSignal<[{ refundId: string }]>('refund');
export const refundSettledSignal = defineSignal<[RefundSettledNotice]>('refundSettled');
/** An operator's `retry` of an EXPIRY_ACQUIRER_UNREACHABLE case: ask the acquirer about the cob now. */
export const askAcquirerSignal = defineSignal<[]>('askAcquirer');
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
 * The backoffs are shared with the other workflows (./retry-policies.ts).
 */
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
/** Parking (and opening or closing an operator case) is how nothing is dropped: it must succeed, so it retries like any database step. */
const { expireCharge, parkPayment, parkRefund, openExpiryCase, closeExpiryCase } = proxyActivities<ChargeActivities>({
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
/**
 * The questions asked again while the acquirer could not be asked at expiry: one short probe each
 * (a few attempts within 2 minutes), since the workflow's own backoff spaces them.
 */
const { paymentsAtAcquirer: probeAcquirer } = proxyActivities<ChargeActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '2 minutes',
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
 * operator (docs/operations.md "The callback inbox and reconciliation"). Every REFUND_POLLS_PER_RUN polls the
 * run continues as new, so a long wait never grows one history without bound.
 */
const REFUND_POLL_FIRST_MS = 60_000;
const REFUND_POLL_MAX_MS = 3_600_000;
const REFUND_MAX_POLLS = 60;
const REFUND_POLLS_PER_RUN = 20;

/**
 * A due charge whose cob the acquirer cannot be asked about is never canceled by guess
 * (docs/architecture.md "Charges: how they work", Expiry): it stays PENDING with an operator case open, and the question
 * is asked again after 5 minutes, doubling up to every hour, for at most EXPIRY_MAX_WAIT_MS (7 days)
 * from the first failure; then the workflow stops asking and the charge waits, PENDING, for the
 * operator (`cases resolve … --action retry` asks again at once). Every EXPIRY_ASKS_PER_RUN
 * questions the run continues as new, carrying the wait.
 */
export const EXPIRY_ASK_FIRST_MS = 5 * 60_000;
export const EXPIRY_ASK_MAX_MS = 3_600_000;
export const EXPIRY_MAX_WAIT_MS = 7 * 24 * 3_600_000;
export const EXPIRY_ASKS_PER_RUN = 24;

/** The operator case of one charge's outage: opened once per charge and outage. */
const expiryCaseReference = (chargeId: string, wait: ExpiryWait): string =>
  `charge:${chargeId}:expiry-unreachable:${new Date(wait.since).toISOString()}`;

const failureMessage = (err: unknown): string => {
  if (err instanceof ActivityFailure) return err.cause?.message ?? err.message;
  return errorMessage(err);
};

export async function chargeWorkflow(input: ChargeWorkflowInput): Promise<ChargeWorkflowState> {
  const payments: PaymentNotice[] = [];
  const refundRequests: string[] = [];
  const refundResults = new Map<string, RefundSettledNotice>();
  let cancelRequested = false;
  /** An operator asked (`retry`) to ask the acquirer about the cob now. */
  let askNow = false;
  const hasWork = (): boolean =>
    payments.length > 0 || refundRequests.length > 0 || refundResults.size > 0 || cancelRequested || askNow;

  /** Set while a due charge waits for the acquirer to answer; carried across continue-as-new. */
  let expiryWait: ExpiryWait | undefined = input.expiryWait ? { ...input.expiryWait } : undefined;
  let asksThisRun = 0;

  // Deadlines on the workflow's clock, fixed the first time the workflow learns them. A run that
  // continues a wait for the acquirer is already past its expiry.
  let expiryDeadline: number | undefined = expiryWait ? Date.now() : undefined;
  let settleDeadline: number | undefined;
  const adopt = (s: ChargeSnapshot): ChargeSnapshot => {
    expiryDeadline ??= Date.now() + s.expiresInMs;
    if (s.settlesInMs !== null) settleDeadline ??= Date.now() + s.settlesInMs;
    return s;
  };
  const load = async (): Promise<ChargeSnapshot> => adopt(await loadChargeSnapshot(input.chargeId));
  /** End-to-end ids this run has applied, so a payment the acquirer reports again is not re-queued. */
  const applied = new Set<string>();
  /** Payments of this charge parked for an operator: paid at the acquirer, so the charge never expires. */
  const parked = new Set<string>();

  /**
   * Records one payment (or parks it for an operator, never drops it) and answers with the charge
   * as the payment left it: it comes with the outcome, and is read only when it did not (a parked
   * payment, or a result recorded before outcomes carried it: such a history replays through the
   * read it recorded; the recorded result decides, so either way is deterministic).
   */
  const takePayment = async (notice: PaymentNotice): Promise<ChargeSnapshot> => {
    applied.add(notice.endToEndId);
    let after: ChargeSnapshot | undefined;
    try {
      const outcome = await recordPayment(input.chargeId, notice);
      if (outcome.kind === 'not_payable') refundRequests.push(outcome.refundId);
      // Not a payment after all: should the acquirer report this id later, it is taken then.
      if (outcome.kind === 'unconfirmed') applied.delete(notice.endToEndId);
      after = outcome.snapshot;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await parkPayment(input.chargeId, notice, failureMessage(err));
      parked.add(notice.endToEndId);
    }
    return after ? adopt(after) : await load();
  };

  // Registered first: a payment that started this run (signal-with-start) is delivered here at
  // once, so it is recorded before anything else and answers with the charge, with no read ahead
  // of it (docs/performance.md "Payment to webhook: the timeline"). `patched`: runs recorded
  // before this read the charge first, and replay so.
  setHandler(paymentReceivedSignal, (p) => void payments.push(p));
  const startedByPayment = payments.length > 0 && patched('charge-records-a-starting-payment-first');
  let snapshot: ChargeSnapshot = startedByPayment ? await takePayment(payments.shift() as PaymentNotice) : await load();
  let phase: ChargeWorkflowState['phase'] = 'awaiting_payment';
  /** Refunds sent to the acquirer and waiting for the outcome, with the next poll time. */
  const openRefunds = new Map<string, number>();
  /** Polls made per refund, carried across continue-as-new. */
  const refundPolls = new Map<string, number>(Object.entries(input.refundPolls ?? {}));
  let pollsThisRun = 0;
  const pollDelay = (refundId: string): number =>
    Math.min(REFUND_POLL_FIRST_MS * 2 ** (refundPolls.get(refundId) ?? 0), REFUND_POLL_MAX_MS);
  const dropRefund = (refundId: string): void => {
    openRefunds.delete(refundId);
    refundPolls.delete(refundId);
  };

  setHandler(cancelRequestedSignal, () => void (cancelRequested = true));
  setHandler(refundRequestedSignal, ({ refundId }) => void refundRequests.push(refundId));
  setHandler(refundSettledSignal, (r) => void refundResults.set(r.refundId, r));
  setHandler(askAcquirerSignal, () => void (askNow = true));
  // The phase from the latest snapshot: the loop's own `phase` is only refreshed at the top of an
  // iteration, so a charge paid in this iteration would still read as awaiting payment while it sleeps.
  setHandler(chargeStateQuery, () => ({
    phase: phase === 'done' ? phase : currentPhase(snapshot, openRefunds.size + refundRequests.length),
    chargeStatus: snapshot.status,
    openRefunds: [...openRefunds.keys()],
    ...(expiryWait
      ? {
          acquirerUnreachable: {
            since: new Date(expiryWait.since).toISOString(),
            asks: expiryWait.asks,
            nextAskAt: expiryWait.nextAskAt === null ? null : new Date(expiryWait.nextAskAt).toISOString(),
          },
        }
      : {}),
  }));

  /** The acquirer answered, or the charge left PENDING: the wait is over and its case closed. */
  const endExpiryWait = async (resolution: string): Promise<void> => {
    if (!expiryWait) return;
    const reference = expiryCaseReference(input.chargeId, expiryWait);
    expiryWait = undefined;
    await closeExpiryCase(input.chargeId, reference, resolution);
  };

  /** The question failed: opens the outage's case on the first failure, then schedules the next one. */
  const awaitAcquirer = async (error: string): Promise<void> => {
    const now = Date.now();
    if (!expiryWait) {
      expiryWait = { since: now, asks: 1, nextAskAt: now + EXPIRY_ASK_FIRST_MS };
      await openExpiryCase(input.chargeId, {
        reference: expiryCaseReference(input.chargeId, expiryWait),
        error,
        since: new Date(now).toISOString(),
        askUntil: new Date(now + EXPIRY_MAX_WAIT_MS).toISOString(),
      });
      return;
    }
    expiryWait.asks++;
    const until = expiryWait.since + EXPIRY_MAX_WAIT_MS;
    const delay = Math.min(EXPIRY_ASK_FIRST_MS * 2 ** (expiryWait.asks - 1), EXPIRY_ASK_MAX_MS);
    expiryWait.nextAskAt = now >= until ? null : Math.min(now + delay, until);
    if (expiryWait.nextAskAt === null) {
      log.error('the acquirer still cannot be asked about the cob: stopped asking, the charge waits for an operator', {
        chargeId: input.chargeId,
        asks: expiryWait.asks,
        error,
      });
    }
  };

  // The charge's open refunds are taken up; one the starting payment has just queued (it could not
  // be taken: its money goes back) is in the snapshot too and is queued once.
  for (const refundId of snapshot.openRefundIds)
    if (!startedByPayment || !refundRequests.includes(refundId)) refundRequests.push(refundId);

  for (;;) {
    phase = currentPhase(snapshot, openRefunds.size + refundRequests.length);

    // 1. Payments: the first valid one pays the charge; any other goes back to the payer. One that
    //    cannot be applied is parked with an operator alert, never dropped.
    while (payments.length > 0) snapshot = await takePayment(payments.shift() as PaymentNotice);

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
      let parked = false;
      try {
        await settleRefund(result);
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        await parkRefund(refundId, `outcome ${result.outcome} could not be applied: ${failureMessage(err)}`);
        parked = true;
      }
      snapshot = await load();
      // An outcome the acquirer did not bear out changed nothing: the refund stays open and is
      // polled (docs/architecture.md "Workflows carry intent; activities check facts"). (`patched`:
      // runs recorded before the check let every signalled outcome close it.)
      const stillOpen = !parked && snapshot.openRefundIds.includes(refundId);
      if (stillOpen && patched('charge-refund-outcome-checked'))
        openRefunds.set(refundId, Date.now() + pollDelay(refundId));
      else dropRefund(refundId);
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
    //    If the acquirer cannot be asked, the charge is not expired by guess: it waits, PENDING, with
    //    an operator case open, and the question is asked again on a backoff (see EXPIRY_MAX_WAIT_MS).
    if (expiryWait && snapshot.status !== 'PENDING')
      await endExpiryWait(`the charge became ${snapshot.status} meanwhile`);
    let expired = snapshot.status === 'PENDING' && parked.size === 0 && Date.now() >= (expiryDeadline ?? 0);
    // (`patched`: histories recorded before this step existed replay without it.)
    if (expired && !cancelRequested && snapshot.txid && patched('charge-asks-acquirer-before-expiry')) {
      // An operator's retry ends the wait it resolved: should this question (a short probe, like
      // every question asked again) fail too, a new outage (a new case, a new maximum wait) begins.
      const probe = askNow || expiryWait !== undefined;
      if (askNow) expiryWait = undefined;
      if (expiryWait && (expiryWait.nextAskAt === null || Date.now() < expiryWait.nextAskAt)) {
        expired = false;
      } else {
        const answer = await askAcquirer(input.chargeId, probe);
        if (probe) asksThisRun++;
        if (answer.ok) {
          await endExpiryWait(
            `the acquirer answered: ${answer.payments.length > 0 ? 'the cob was paid' : 'nothing paid, the charge expires'}`,
          );
          const found = answer.payments.filter((p) => !applied.has(p.endToEndId));
          if (found.length > 0) {
            askNow = false;
            payments.push(...found);
            continue;
          }
        } else if (expiryWait || patched('charge-waits-while-the-acquirer-cannot-be-asked')) {
          // (Histories recorded before this step expired the charge here.)
          await awaitAcquirer(answer.error);
          expired = false;
        }
      }
    }
    askNow = false;
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
    if (waitingForPayment && parked.size === 0) {
      // While waiting for the acquirer the next question is the deadline (none once it stopped asking).
      if (!expiryWait) deadlines.push(expiryDeadline ?? 0);
      else if (expiryWait.nextAskAt !== null) deadlines.push(expiryWait.nextAskAt);
    }
    if (waitingForSettlement && settleDeadline !== undefined) deadlines.push(settleDeadline);
    if (hasWork()) continue;
    // A long refund wait continues as new (the next run reads the charge again from the database
    // and re-sends open refunds, idempotent at the acquirer), carrying the poll counts.
    // So does a long wait for the acquirer at expiry, carrying the wait.
    if (pollsThisRun >= REFUND_POLLS_PER_RUN || asksThisRun >= EXPIRY_ASKS_PER_RUN) {
      return continueAsNew<typeof chargeWorkflow>({
        chargeId: input.chargeId,
        refundPolls: Object.fromEntries(refundPolls),
        ...(expiryWait ? { expiryWait } : {}),
      });
    }
    if (deadlines.length === 0) await condition(hasWork);
    else await condition(hasWork, Math.max(Math.min(...deadlines) - Date.now(), 1));
  }
}

type AcquirerAnswer = { ok: true; payments: PaymentNotice[] } | { ok: false; error: string };

/**
 * The payments the acquirer reports on the cob, or why it could not be asked (refused, or no answer
 * within the activity's schedule-to-close). `probe`: a question asked again while waiting.
 */
async function askAcquirer(chargeId: string, probe: boolean): Promise<AcquirerAnswer> {
  try {
    return { ok: true, payments: await (probe ? probeAcquirer : paymentsAtAcquirer)(chargeId) };
  } catch (err) {
    if (err instanceof ActivityFailure) return { ok: false, error: failureMessage(err) };
    throw err;
  }
}

function currentPhase(s: ChargeSnapshot, openRefunds: number): ChargeWorkflowState['phase'] {
  if (openRefunds > 0) return 'refunding';
  if (s.status === 'PENDING') return 'awaiting_payment';
  if (s.settlesInMs !== null && !s.settled) return 'awaiting_settlement';
  return 'done';
}
