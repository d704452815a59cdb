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

/** What one run knows: the signal handlers fill the queues, the steps below drain them. */
interface RunState {
  chargeId: string;
  payments: PaymentNotice[];
  refundRequests: string[];
  refundResults: Map<string, RefundSettledNotice>;
  cancelRequested: boolean;
  /** An operator asked (`retry`) to ask the acquirer about the cob now. */
  askNow: boolean;
  /** Set while a due charge waits for the acquirer to answer; carried across continue-as-new. */
  expiryWait: ExpiryWait | undefined;
  asksThisRun: number;
  /** Deadlines on the workflow's clock, fixed the first time the workflow learns them. */
  expiryDeadline: number | undefined;
  settleDeadline: number | undefined;
  /** End-to-end ids this run has applied, so a payment the acquirer reports again is not re-queued. */
  applied: Set<string>;
  /** Payments of this charge parked for an operator: paid at the acquirer, so the charge never expires. */
  parked: Set<string>;
  phase: ChargeWorkflowState['phase'];
  /** Refunds sent to the acquirer and waiting for the outcome, with the next poll time. */
  openRefunds: Map<string, number>;
  /** Polls made per refund, carried across continue-as-new. */
  refundPolls: Map<string, number>;
  pollsThisRun: number;
}

/** A run once it has read the charge: `snapshot` is the charge as the latest step left it. */
type ChargeRun = RunState & { snapshot: ChargeSnapshot };

export async function chargeWorkflow(input: ChargeWorkflowInput): Promise<ChargeWorkflowState> {
  const state = newRunState(input);
  // Registered first: a payment that started this run (signal-with-start) is delivered here at
  // once, so it is recorded before anything else and answers with the charge, with no read ahead
  // of it (docs/performance.md "Payment to webhook: the timeline"). `patched`: runs recorded
  // before this read the charge first, and replay so.
  setHandler(paymentReceivedSignal, (p) => void state.payments.push(p));
  const startedByPayment = state.payments.length > 0 && patched('charge-records-a-starting-payment-first');
  const first = startedByPayment
    ? await takePayment(state, state.payments.shift() as PaymentNotice)
    : await load(state);
  const run: ChargeRun = Object.assign(state, { snapshot: first });
  handleSignals(run);

  // The charge's open refunds are taken up; one the starting payment has just queued (it could not
  // be taken: its money goes back) is in the snapshot too and is queued once.
  for (const refundId of run.snapshot.openRefundIds)
    if (!startedByPayment || !run.refundRequests.includes(refundId)) run.refundRequests.push(refundId);

  for (;;) {
    run.phase = currentPhase(run.snapshot, run.openRefunds.size + run.refundRequests.length);
    // 1. Payments: the first valid one pays the charge; any other goes back to the payer. One that
    //    cannot be applied is parked with an operator alert, never dropped.
    while (run.payments.length > 0) run.snapshot = await takePayment(run, run.payments.shift() as PaymentNotice);
    // 2. Refunds: send each to the acquirer once, apply the outcomes signalled, poll the others.
    await sendRefunds(run);
    await applyRefundOutcomes(run);
    await pollRefunds(run);
    // 3. Expiry or cancellation of an unpaid charge; 4. settlement of a paid one.
    if (await expireOrCancel(run)) continue;
    if (await settle(run)) continue;
    // 5. Done when nothing is owed; 6. otherwise sleep until the next deadline or signal.
    const done = await finishOrWait(run);
    if (done) return done;
  }
}

function newRunState(input: ChargeWorkflowInput): RunState {
  const expiryWait = input.expiryWait ? { ...input.expiryWait } : undefined;
  return {
    chargeId: input.chargeId,
    payments: [],
    refundRequests: [],
    refundResults: new Map(),
    cancelRequested: false,
    askNow: false,
    expiryWait,
    asksThisRun: 0,
    // A run that continues a wait for the acquirer is already past its expiry.
    expiryDeadline: expiryWait ? Date.now() : undefined,
    settleDeadline: undefined,
    applied: new Set(),
    parked: new Set(),
    phase: 'awaiting_payment',
    openRefunds: new Map(),
    refundPolls: new Map(Object.entries(input.refundPolls ?? {})),
    pollsThisRun: 0,
  };
}

function handleSignals(run: ChargeRun): void {
  setHandler(cancelRequestedSignal, () => void (run.cancelRequested = true));
  setHandler(refundRequestedSignal, ({ refundId }) => void run.refundRequests.push(refundId));
  setHandler(refundSettledSignal, (r) => void run.refundResults.set(r.refundId, r));
  setHandler(askAcquirerSignal, () => void (run.askNow = true));
  // The phase from the latest snapshot: the loop's own `phase` is only refreshed at the top of an
  // iteration, so a charge paid in this iteration would still read as awaiting payment while it sleeps.
  setHandler(chargeStateQuery, () => ({
    phase:
      run.phase === 'done' ? run.phase : currentPhase(run.snapshot, run.openRefunds.size + run.refundRequests.length),
    chargeStatus: run.snapshot.status,
    openRefunds: [...run.openRefunds.keys()],
    ...(run.expiryWait
      ? {
          acquirerUnreachable: {
            since: new Date(run.expiryWait.since).toISOString(),
            asks: run.expiryWait.asks,
            nextAskAt: run.expiryWait.nextAskAt === null ? null : new Date(run.expiryWait.nextAskAt).toISOString(),
          },
        }
      : {}),
  }));
}

const hasWork = (run: RunState): boolean =>
  run.payments.length > 0 ||
  run.refundRequests.length > 0 ||
  run.refundResults.size > 0 ||
  run.cancelRequested ||
  run.askNow;

const adopt = (run: RunState, s: ChargeSnapshot): ChargeSnapshot => {
  run.expiryDeadline ??= Date.now() + s.expiresInMs;
  if (s.settlesInMs !== null) run.settleDeadline ??= Date.now() + s.settlesInMs;
  return s;
};

const load = async (run: RunState): Promise<ChargeSnapshot> => adopt(run, await loadChargeSnapshot(run.chargeId));

/**
 * Records one payment (or parks it for an operator, never drops it) and answers with the charge
 * as the payment left it: it comes with the outcome, and is read only when it did not (a parked
 * payment, or a result recorded before outcomes carried it: such a history replays through the
 * read it recorded; the recorded result decides, so either way is deterministic).
 */
async function takePayment(run: RunState, notice: PaymentNotice): Promise<ChargeSnapshot> {
  run.applied.add(notice.endToEndId);
  let after: ChargeSnapshot | undefined;
  try {
    const outcome = await recordPayment(run.chargeId, notice);
    if (outcome.kind === 'not_payable') run.refundRequests.push(outcome.refundId);
    // Not a payment after all: should the acquirer report this id later, it is taken then.
    if (outcome.kind === 'unconfirmed') run.applied.delete(notice.endToEndId);
    after = outcome.snapshot;
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    await parkPayment(run.chargeId, notice, failureMessage(err));
    run.parked.add(notice.endToEndId);
  }
  return after ? adopt(run, after) : await load(run);
}

const pollDelay = (run: RunState, refundId: string): number =>
  Math.min(REFUND_POLL_FIRST_MS * 2 ** (run.refundPolls.get(refundId) ?? 0), REFUND_POLL_MAX_MS);

const dropRefund = (run: RunState, refundId: string): void => {
  run.openRefunds.delete(refundId);
  run.refundPolls.delete(refundId);
};

/** Sends each requested refund to the acquirer once (idempotent on the refund id), then awaits the outcome. */
async function sendRefunds(run: ChargeRun): Promise<void> {
  while (run.refundRequests.length > 0) {
    const refundId = run.refundRequests.shift() as string;
    if (run.openRefunds.has(refundId)) continue;
    try {
      const sent = await sendRefund(refundId);
      if (sent.settled) {
        await settleRefund(sent.settled);
        dropRefund(run, refundId);
      } else {
        run.openRefunds.set(refundId, Date.now() + pollDelay(run, refundId));
      }
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await parkRefund(refundId, `could not be carried: ${failureMessage(err)}`);
      dropRefund(run, refundId);
    }
    run.snapshot = await load(run);
  }
}

/** Applies the refund outcomes the acquirer's callbacks signalled. */
async function applyRefundOutcomes(run: ChargeRun): Promise<void> {
  for (const [refundId, result] of run.refundResults) {
    run.refundResults.delete(refundId);
    if (!run.openRefunds.has(refundId)) continue;
    let parked = false;
    try {
      await settleRefund(result);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await parkRefund(refundId, `outcome ${result.outcome} could not be applied: ${failureMessage(err)}`);
      parked = true;
    }
    run.snapshot = await load(run);
    // An outcome the acquirer did not bear out changed nothing: the refund stays open and is
    // polled (docs/architecture.md "Workflows carry intent; activities check facts"). (`patched`:
    // runs recorded before the check let every signalled outcome close it.)
    const stillOpen = !parked && run.snapshot.openRefundIds.includes(refundId);
    if (stillOpen && patched('charge-refund-outcome-checked'))
      run.openRefunds.set(refundId, Date.now() + pollDelay(run, refundId));
    else dropRefund(run, refundId);
  }
}

/** Asks the acquirer about each open refund whose poll time has come; parks it after REFUND_MAX_POLLS. */
async function pollRefunds(run: ChargeRun): Promise<void> {
  for (const [refundId, pollAt] of run.openRefunds) {
    if (Date.now() < pollAt) continue;
    const polls = (run.refundPolls.get(refundId) ?? 0) + 1;
    run.refundPolls.set(refundId, polls);
    run.pollsThisRun++;
    try {
      const status = await checkRefund(refundId);
      if (status) {
        await settleRefund(status);
        dropRefund(run, refundId);
        run.snapshot = await load(run);
      } else if (polls >= REFUND_MAX_POLLS) {
        await parkRefund(refundId, `no outcome from the acquirer after ${polls} polls`);
        dropRefund(run, refundId);
        run.snapshot = await load(run);
      } else {
        run.openRefunds.set(refundId, Date.now() + pollDelay(run, refundId));
      }
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await parkRefund(refundId, `could not be checked: ${failureMessage(err)}`);
      dropRefund(run, refundId);
      run.snapshot = await load(run);
    }
  }
}

/**
 * Expiry or cancellation of an unpaid charge; true when the loop must go round again. Before
 * expiring, the acquirer is asked what happened to the cob: a cob found paid is a payment (its
 * callback may never come), never a cancellation. A charge whose payment is parked waits, unexpired,
 * for that payment to be re-driven. If the acquirer cannot be asked, the charge is not expired by
 * guess: it waits, PENDING, with an operator case open, and the question is asked again on a backoff
 * (see EXPIRY_MAX_WAIT_MS).
 */
async function expireOrCancel(run: ChargeRun): Promise<boolean> {
  if (run.expiryWait && run.snapshot.status !== 'PENDING')
    await endExpiryWait(run, `the charge became ${run.snapshot.status} meanwhile`);
  let expired = run.snapshot.status === 'PENDING' && run.parked.size === 0 && Date.now() >= (run.expiryDeadline ?? 0);
  // (`patched`: histories recorded before this step existed replay without it.)
  if (expired && !run.cancelRequested && run.snapshot.txid && patched('charge-asks-acquirer-before-expiry')) {
    const verdict = await askBeforeExpiry(run);
    if (verdict === 'paid') return true;
    expired = verdict === 'expire';
  }
  run.askNow = false;
  const cancelable = run.snapshot.status === 'PENDING' || run.snapshot.status === 'CANCELED';
  if (expired || (run.cancelRequested && cancelable)) {
    run.cancelRequested = false;
    await closeCharge(run);
    return true;
  }
  run.cancelRequested = false;
  return false;
}

/**
 * Asks the acquirer about the cob of a due charge, or waits for the next question: `paid` when it
 * reports payments this run has not applied (queued), `wait` while it cannot be asked, else `expire`.
 */
async function askBeforeExpiry(run: ChargeRun): Promise<'paid' | 'wait' | 'expire'> {
  // An operator's retry ends the wait it resolved: should this question (a short probe, like
  // every question asked again) fail too, a new outage (a new case, a new maximum wait) begins.
  const probe = run.askNow || run.expiryWait !== undefined;
  if (run.askNow) run.expiryWait = undefined;
  if (run.expiryWait && (run.expiryWait.nextAskAt === null || Date.now() < run.expiryWait.nextAskAt)) return 'wait';
  const answer = await askAcquirer(run.chargeId, probe);
  if (probe) run.asksThisRun++;
  if (answer.ok) {
    await endExpiryWait(
      run,
      `the acquirer answered: ${answer.payments.length > 0 ? 'the cob was paid' : 'nothing paid, the charge expires'}`,
    );
    const found = answer.payments.filter((p) => !run.applied.has(p.endToEndId));
    if (found.length === 0) return 'expire';
    run.askNow = false;
    run.payments.push(...found);
    return 'paid';
  }
  // (Histories recorded before this step expired the charge here.)
  if (!run.expiryWait && !patched('charge-waits-while-the-acquirer-cannot-be-asked')) return 'expire';
  await awaitAcquirer(run, answer.error);
  return 'wait';
}

/**
 * Expires a PENDING charge (the cancel endpoint may already have moved it to CANCELED); either way
 * the cob is removed at the acquirer (idempotent there), so nobody can pay a charge we no longer
 * honour; a payment that beat the removal comes back from removeCob and is applied (returned to the payer).
 */
async function closeCharge(run: ChargeRun): Promise<void> {
  if (run.snapshot.status === 'PENDING') await expireCharge(run.chargeId);
  run.snapshot = await load(run);
  if (run.snapshot.status === 'CANCELED' && run.snapshot.txid) {
    // `?? []`: histories recorded when removeCob returned nothing.
    const paidMeanwhile = ((await removeCob(run.chargeId)) ?? []).filter((p) => !run.applied.has(p.endToEndId));
    if (paidMeanwhile.length > 0) run.payments.push(...paidMeanwhile);
  }
}

/** The acquirer answered, or the charge left PENDING: the wait is over and its case closed. */
async function endExpiryWait(run: RunState, resolution: string): Promise<void> {
  if (!run.expiryWait) return;
  const reference = expiryCaseReference(run.chargeId, run.expiryWait);
  run.expiryWait = undefined;
  await closeExpiryCase(run.chargeId, reference, resolution);
}

/** The question failed: opens the outage's case on the first failure, then schedules the next one. */
async function awaitAcquirer(run: RunState, error: string): Promise<void> {
  const now = Date.now();
  if (!run.expiryWait) {
    run.expiryWait = { since: now, asks: 1, nextAskAt: now + EXPIRY_ASK_FIRST_MS };
    await openExpiryCase(run.chargeId, {
      reference: expiryCaseReference(run.chargeId, run.expiryWait),
      error,
      since: new Date(now).toISOString(),
      askUntil: new Date(now + EXPIRY_MAX_WAIT_MS).toISOString(),
    });
    return;
  }
  const wait = run.expiryWait;
  wait.asks++;
  const until = wait.since + EXPIRY_MAX_WAIT_MS;
  const delay = Math.min(EXPIRY_ASK_FIRST_MS * 2 ** (wait.asks - 1), EXPIRY_ASK_MAX_MS);
  wait.nextAskAt = now >= until ? null : Math.min(now + delay, until);
  if (wait.nextAskAt === null) {
    log.error('the acquirer still cannot be asked about the cob: stopped asking, the charge waits for an operator', {
      chargeId: run.chargeId,
      asks: wait.asks,
      error,
    });
  }
}

/** Settlement of a paid charge: pending → available once the delay has passed; true when it settled. */
async function settle(run: ChargeRun): Promise<boolean> {
  if (run.settleDeadline === undefined || run.snapshot.settled || Date.now() < run.settleDeadline) return false;
  await settleCharge(run.chargeId);
  run.snapshot = await load(run);
  return true;
}

/**
 * The run's end when nothing is owed (no open refund, settled if paid, not awaiting payment);
 * otherwise sleeps until the next deadline or until a signal brings work, and answers undefined.
 */
async function finishOrWait(run: ChargeRun): Promise<ChargeWorkflowState | undefined> {
  const waitingForPayment = run.snapshot.status === 'PENDING';
  const waitingForSettlement = run.settleDeadline !== undefined && !run.snapshot.settled;
  if (!waitingForPayment && !waitingForSettlement && run.openRefunds.size === 0 && !hasWork(run)) {
    run.phase = 'done';
    return { phase: run.phase, chargeStatus: run.snapshot.status, openRefunds: [] };
  }
  const deadlines: number[] = [...run.openRefunds.values()];
  if (waitingForPayment && run.parked.size === 0) {
    // While waiting for the acquirer the next question is the deadline (none once it stopped asking).
    if (!run.expiryWait) deadlines.push(run.expiryDeadline ?? 0);
    else if (run.expiryWait.nextAskAt !== null) deadlines.push(run.expiryWait.nextAskAt);
  }
  if (waitingForSettlement && run.settleDeadline !== undefined) deadlines.push(run.settleDeadline);
  if (hasWork(run)) return undefined;
  // A long refund wait continues as new (the next run reads the charge again from the database
  // and re-sends open refunds, idempotent at the acquirer), carrying the poll counts.
  // So does a long wait for the acquirer at expiry, carrying the wait.
  if (run.pollsThisRun >= REFUND_POLLS_PER_RUN || run.asksThisRun >= EXPIRY_ASKS_PER_RUN) {
    return continueAsNew<typeof chargeWorkflow>({
      chargeId: run.chargeId,
      refundPolls: Object.fromEntries(run.refundPolls),
      ...(run.expiryWait ? { expiryWait: run.expiryWait } : {}),
    });
  }
  if (deadlines.length === 0) await condition(() => hasWork(run));
  else await condition(() => hasWork(run), Math.max(Math.min(...deadlines) - Date.now(), 1));
  return undefined;
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
