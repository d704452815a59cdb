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

/** The workflow's state, one object shared by the signal handlers and every step (never copied). */
class ChargeRun {
  readonly payments: PaymentNotice[] = [];
  readonly refundRequests: string[] = [];
  readonly refundResults = new Map<string, RefundSettledNotice>();
  cancelRequested = false;
  /** An operator asked (`retry`) to ask the acquirer about the cob now. */
  askNow = false;
  /** Set while a due charge waits for the acquirer to answer; carried across continue-as-new. */
  expiryWait: ExpiryWait | undefined;
  asksThisRun = 0;
  // Deadlines on the workflow's clock, fixed the first time the workflow learns them. A run that
  // continues a wait for the acquirer is already past its expiry.
  expiryDeadline: number | undefined;
  settleDeadline: number | undefined;
  /** End-to-end ids this run has applied, so a payment the acquirer reports again is not re-queued. */
  readonly applied = new Set<string>();
  /** Payments of this charge parked for an operator: paid at the acquirer, so the charge never expires. */
  readonly parked = new Set<string>();
  snapshot!: ChargeSnapshot;
  phase: ChargeWorkflowState['phase'] = 'awaiting_payment';
  /** Refunds sent to the acquirer and waiting for the outcome, with the next poll time. */
  readonly openRefunds = new Map<string, number>();
  /** Polls made per refund, carried across continue-as-new. */
  readonly refundPolls: Map<string, number>;
  pollsThisRun = 0;

  constructor(readonly input: ChargeWorkflowInput) {
    this.expiryWait = input.expiryWait ? { ...input.expiryWait } : undefined;
    this.expiryDeadline = this.expiryWait ? Date.now() : undefined;
    this.refundPolls = new Map<string, number>(Object.entries(input.refundPolls ?? {}));
  }

  get chargeId(): string {
    return this.input.chargeId;
  }

  hasWork(): boolean {
    return (
      this.payments.length > 0 ||
      this.refundRequests.length > 0 ||
      this.refundResults.size > 0 ||
      this.cancelRequested ||
      this.askNow
    );
  }

  adopt(s: ChargeSnapshot): ChargeSnapshot {
    this.expiryDeadline ??= Date.now() + s.expiresInMs;
    if (s.settlesInMs !== null) this.settleDeadline ??= Date.now() + s.settlesInMs;
    return s;
  }

  async load(): Promise<ChargeSnapshot> {
    return this.adopt(await loadChargeSnapshot(this.chargeId));
  }

  pollDelay(refundId: string): number {
    return Math.min(REFUND_POLL_FIRST_MS * 2 ** (this.refundPolls.get(refundId) ?? 0), REFUND_POLL_MAX_MS);
  }

  dropRefund(refundId: string): void {
    this.openRefunds.delete(refundId);
    this.refundPolls.delete(refundId);
  }
}

export async function chargeWorkflow(input: ChargeWorkflowInput): Promise<ChargeWorkflowState> {
  const run = new ChargeRun(input);
  const startedByPayment = await start(run);
  registerHandlers(run);
  takeUpOpenRefunds(run, startedByPayment);
  for (;;) {
    run.phase = currentPhase(run.snapshot, run.openRefunds.size + run.refundRequests.length);
    while (run.payments.length > 0) run.snapshot = await takePayment(run, run.payments.shift() as PaymentNotice);
    await sendRefunds(run);
    await applyRefundOutcomes(run);
    await pollRefunds(run);
    if (await expireOrCancel(run)) continue;
    if (await settleWhenDue(run)) continue;
    if (nothingOwed(run)) {
      run.phase = 'done';
      return { phase: run.phase, chargeStatus: run.snapshot.status, openRefunds: [] };
    }
    if (run.hasWork()) continue;
    // A long refund wait continues as new (the next run reads the charge again from the database
    // and re-sends open refunds, idempotent at the acquirer), carrying the poll counts.
    // So does a long wait for the acquirer at expiry, carrying the wait.
    if (run.pollsThisRun >= REFUND_POLLS_PER_RUN || run.asksThisRun >= EXPIRY_ASKS_PER_RUN) {
      return continueAsNew<typeof chargeWorkflow>({
        chargeId: input.chargeId,
        refundPolls: Object.fromEntries(run.refundPolls),
        ...(run.expiryWait ? { expiryWait: run.expiryWait } : {}),
      });
    }
    await sleepUntilWork(run);
  }
}

/**
 * The payment handler is registered first: a payment that started this run (signal-with-start) is
 * delivered here at once, so it is recorded before anything else and answers with the charge, with
 * no read ahead of it (docs/performance.md "Payment to webhook: the timeline"). `patched`: runs
 * recorded before this read the charge first, and replay so.
 */
async function start(run: ChargeRun): Promise<boolean> {
  setHandler(paymentReceivedSignal, (p) => void run.payments.push(p));
  const startedByPayment = run.payments.length > 0 && patched('charge-records-a-starting-payment-first');
  run.snapshot = startedByPayment ? await takePayment(run, run.payments.shift() as PaymentNotice) : await run.load();
  return startedByPayment;
}

function registerHandlers(run: ChargeRun): void {
  setHandler(cancelRequestedSignal, () => void (run.cancelRequested = true));
  setHandler(refundRequestedSignal, ({ refundId }) => void run.refundRequests.push(refundId));
  setHandler(refundSettledSignal, (r) => void run.refundResults.set(r.refundId, r));
  setHandler(askAcquirerSignal, () => void (run.askNow = true));
  setHandler(chargeStateQuery, () => stateOf(run));
}

/**
 * The phase from the latest snapshot: the loop's own `phase` is only refreshed at the top of an
 * iteration, so a charge paid in this iteration would still read as awaiting payment while it sleeps.
 */
function stateOf(run: ChargeRun): ChargeWorkflowState {
  const { expiryWait, snapshot } = run;
  return {
    phase: run.phase === 'done' ? run.phase : currentPhase(snapshot, run.openRefunds.size + run.refundRequests.length),
    chargeStatus: snapshot.status,
    openRefunds: [...run.openRefunds.keys()],
    ...(expiryWait
      ? {
          acquirerUnreachable: {
            since: new Date(expiryWait.since).toISOString(),
            asks: expiryWait.asks,
            nextAskAt: expiryWait.nextAskAt === null ? null : new Date(expiryWait.nextAskAt).toISOString(),
          },
        }
      : {}),
  };
}

/**
 * The charge's open refunds are taken up; one the starting payment has just queued (it could not
 * be taken: its money goes back) is in the snapshot too and is queued once.
 */
function takeUpOpenRefunds(run: ChargeRun, startedByPayment: boolean): void {
  for (const refundId of run.snapshot.openRefundIds)
    if (!startedByPayment || !run.refundRequests.includes(refundId)) run.refundRequests.push(refundId);
}

/**
 * Records one payment (or parks it for an operator, never drops it) and answers with the charge
 * as the payment left it: it comes with the outcome, and is read only when it did not (a parked
 * payment, or a result recorded before outcomes carried it: such a history replays through the
 * read it recorded; the recorded result decides, so either way is deterministic). The first valid
 * payment pays the charge; any other goes back to the payer.
 */
async function takePayment(run: ChargeRun, notice: PaymentNotice): Promise<ChargeSnapshot> {
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
  return after ? run.adopt(after) : await run.load();
}

/** Sends each requested refund to the acquirer once (idempotent on the refund id), then awaits the outcome. */
async function sendRefunds(run: ChargeRun): Promise<void> {
  while (run.refundRequests.length > 0) {
    const refundId = run.refundRequests.shift() as string;
    if (run.openRefunds.has(refundId)) continue;
    try {
      const sent = await sendRefund(refundId);
      if (sent.settled) {
        await settleRefund(sent.settled);
        run.dropRefund(refundId);
      } else {
        run.openRefunds.set(refundId, Date.now() + run.pollDelay(refundId));
      }
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await parkRefund(refundId, `could not be carried: ${failureMessage(err)}`);
      run.dropRefund(refundId);
    }
    run.snapshot = await run.load();
  }
}

/** Applies the refund outcomes signalled by the acquirer's callbacks. */
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
    run.snapshot = await run.load();
    // An outcome the acquirer did not bear out changed nothing: the refund stays open and is
    // polled (docs/architecture.md "Workflows carry intent; activities check facts"). (`patched`:
    // runs recorded before the check let every signalled outcome close it.)
    const stillOpen = !parked && run.snapshot.openRefundIds.includes(refundId);
    if (stillOpen && patched('charge-refund-outcome-checked'))
      run.openRefunds.set(refundId, Date.now() + run.pollDelay(refundId));
    else run.dropRefund(refundId);
  }
}

/** Asks the acquirer about each open refund whose poll time has come. */
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
        run.dropRefund(refundId);
        run.snapshot = await run.load();
      } else if (polls >= REFUND_MAX_POLLS) {
        await parkRefund(refundId, `no outcome from the acquirer after ${polls} polls`);
        run.dropRefund(refundId);
        run.snapshot = await run.load();
      } else {
        run.openRefunds.set(refundId, Date.now() + run.pollDelay(refundId));
      }
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await parkRefund(refundId, `could not be checked: ${failureMessage(err)}`);
      run.dropRefund(refundId);
      run.snapshot = await run.load();
    }
  }
}

/**
 * Expiry or cancellation of an unpaid charge; true when the loop goes round again. The cancel
 * endpoint may already have moved the charge to CANCELED; either way the cob is removed at the
 * acquirer (idempotent there), so nobody can pay a charge we no longer honour; a payment that beat
 * the removal comes back from removeCob and is applied (returned to the payer). A charge whose
 * payment is parked waits, unexpired, for that payment to be re-driven.
 */
async function expireOrCancel(run: ChargeRun): Promise<boolean> {
  const s = run.snapshot;
  if (run.expiryWait && s.status !== 'PENDING') await endExpiryWait(run, `the charge became ${s.status} meanwhile`);
  let expired = s.status === 'PENDING' && run.parked.size === 0 && Date.now() >= (run.expiryDeadline ?? 0);
  // (`patched`: histories recorded before this step existed replay without it.)
  if (expired && !run.cancelRequested && s.txid && patched('charge-asks-acquirer-before-expiry')) {
    const asked = await askBeforeExpiry(run);
    if (asked === 'paid') return true;
    if (asked === 'wait') expired = false;
  }
  run.askNow = false;
  const cancel = run.cancelRequested && (s.status === 'PENDING' || s.status === 'CANCELED');
  if (!expired && !cancel) {
    run.cancelRequested = false;
    return false;
  }
  run.cancelRequested = false;
  if (s.status === 'PENDING') await expireCharge(run.chargeId);
  run.snapshot = await run.load();
  if (run.snapshot.status === 'CANCELED' && run.snapshot.txid) {
    // `?? []`: histories recorded when removeCob returned nothing.
    const paidMeanwhile = ((await removeCob(run.chargeId)) ?? []).filter((p) => !run.applied.has(p.endToEndId));
    if (paidMeanwhile.length > 0) run.payments.push(...paidMeanwhile);
  }
  return true;
}

/**
 * Before expiring, the acquirer is asked what happened to the cob: a cob found paid is a payment
 * (its callback may never come), never a cancellation. If the acquirer cannot be asked, the charge
 * is not expired by guess: it waits, PENDING, with an operator case open, and the question is
 * asked again on a backoff (see EXPIRY_MAX_WAIT_MS).
 */
async function askBeforeExpiry(run: ChargeRun): Promise<'paid' | 'expire' | 'wait'> {
  // An operator's retry ends the wait it resolved: should this question (a short probe, like
  // every question asked again) fail too, a new outage (a new case, a new maximum wait) begins.
  const probe = run.askNow || run.expiryWait !== undefined;
  if (run.askNow) run.expiryWait = undefined;
  const wait = run.expiryWait;
  if (wait && (wait.nextAskAt === null || Date.now() < wait.nextAskAt)) return 'wait';
  const answer = await askAcquirer(run.chargeId, probe);
  if (probe) run.asksThisRun++;
  if (answer.ok) {
    const paid = answer.payments.length > 0 ? 'the cob was paid' : 'nothing paid, the charge expires';
    await endExpiryWait(run, `the acquirer answered: ${paid}`);
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

/** The acquirer answered, or the charge left PENDING: the wait is over and its case closed. */
async function endExpiryWait(run: ChargeRun, resolution: string): Promise<void> {
  if (!run.expiryWait) return;
  const reference = expiryCaseReference(run.chargeId, run.expiryWait);
  run.expiryWait = undefined;
  await closeExpiryCase(run.chargeId, reference, resolution);
}

/** The question failed: opens the outage's case on the first failure, then schedules the next one. */
async function awaitAcquirer(run: ChargeRun, error: string): Promise<void> {
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

/** Settlement of a paid charge: pending → available once the delay has passed; true when it ran. */
async function settleWhenDue(run: ChargeRun): Promise<boolean> {
  if (run.settleDeadline === undefined || run.snapshot.settled || Date.now() < run.settleDeadline) return false;
  await settleCharge(run.chargeId);
  run.snapshot = await run.load();
  return true;
}

/** Done when nothing is owed: no open refund, settled if paid, and not awaiting payment. */
function nothingOwed(run: ChargeRun): boolean {
  const waitingForSettlement = run.settleDeadline !== undefined && !run.snapshot.settled;
  return run.snapshot.status !== 'PENDING' && !waitingForSettlement && run.openRefunds.size === 0 && !run.hasWork();
}

/** Sleeps until the next deadline or until a signal brings work. */
async function sleepUntilWork(run: ChargeRun): Promise<void> {
  const deadlines: number[] = [...run.openRefunds.values()];
  if (run.snapshot.status === 'PENDING' && run.parked.size === 0) {
    // While waiting for the acquirer the next question is the deadline (none once it stopped asking).
    if (!run.expiryWait) deadlines.push(run.expiryDeadline ?? 0);
    else if (run.expiryWait.nextAskAt !== null) deadlines.push(run.expiryWait.nextAskAt);
  }
  if (run.settleDeadline !== undefined && !run.snapshot.settled) deadlines.push(run.settleDeadline);
  const hasWork = (): boolean => run.hasWork();
  if (deadlines.length === 0) await condition(hasWork);
  else await condition(hasWork, Math.max(Math.min(...deadlines) - Date.now(), 1));
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
