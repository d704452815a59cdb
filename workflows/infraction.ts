/**
 * One MED infraction, `infraction-<id>` (docs/operations.md "MED infractions"): block the disputed amount and
 * record `infraction.received`; while the acquirer decides, block what was missing as the
 * merchant's pending money settles; rejected → unblock; accepted → return the blocked funds to the
 * payer by a devolução and, once the acquirer confirms that devolução, mark the charge refunded. A
 * devolução refused waits for an operator's decision (docs/operations.md "Operator cases"), re-checked hourly.
 *
 * The acquirer's updates arrive by signal-with-start, and the callback handler also keeps the
 * furthest status on the infraction row, so a run restarted by the reconciler (or a fresh run after
 * a closed one) knows the decision from the database even without the signal. Only orchestration
 * lives here: every rule is in src/services/med/lifecycle.ts behind an activity.
 */
import {
  ActivityFailure,
  condition,
  defineQuery,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { InfractionActivities } from '../activities/infractions';
import type {
  AcquirerInfractionUpdate,
  InfractionProgress,
  InfractionStatus,
  InfractionWorkflowInput,
  InfractionWorkflowResult,
  MedRefundState,
} from './infraction-types';
import { ACQUIRER_RETRY, DB_RETRY } from './retry-policies';

export const acquirerUpdateSignal = defineSignal<[AcquirerInfractionUpdate]>('acquirerUpdate');
/** An operator decided a case of this infraction: the decision is in the database. */
export const operatorDecidedSignal = defineSignal<[]>('operatorDecided');
/** The merchant submitted a defense: it is in the database, to be sent (docs/api.md "Infractions"). */
export const defenseSubmittedSignal = defineSignal<[]>('defenseSubmitted');
export const infractionStateQuery = defineQuery<InfractionProgress | null>('state');

/*
 * Retry policies, as in the charge workflow: database steps retried quickly for a day (never a small
 * cap: giving up mid-way would leave money blocked for nobody); acquirer calls from 1 s up to every
 * 5 min for 6 hours. Final at once: the infraction or its charge does not exist (NotFoundError), the
 * ledger refused a movement that breaks its rules (InvariantViolation), the acquirer refused the
 * request for good (AcquirerRejectedError; a refused devolução is already an outcome of sendMedRefund).
 */
const db = proxyActivities<InfractionActivities>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { ...DB_RETRY, nonRetryableErrorTypes: ['NotFoundError', 'InvariantViolation'] },
});
const acq = proxyActivities<InfractionActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '6 hours',
  retry: { ...ACQUIRER_RETRY, nonRetryableErrorTypes: ['AcquirerRejectedError', 'NotFoundError'] },
});

/** After a charge's settlement time, how long to give its workflow to move the money first. */
const SETTLEMENT_GRACE_MS = 5_000;
/** When a settlement is overdue (its workflow has not run it yet), check again after this, doubling. */
const OVERDUE_RETRY_MS = 60_000;
const OVERDUE_RETRY_MAX_MS = 3_600_000;
/** How long to wait for the devolução's outcome before asking the acquirer, doubling up to an hour. */
const REFUND_POLL_FIRST_MS = 60_000;
const REFUND_POLL_MAX_MS = 3_600_000;
/** While a case waits for an operator, look at the database this often even without a signal. */
const OPERATOR_RECHECK_MS = 3_600_000;
/** A defense the acquirer could not take for the whole retry window is sent again after this. */
const DEFENSE_RETRY_MS = 3_600_000;

const RANK: Record<InfractionStatus, number> = { OPEN: 0, ACCEPTED: 1, REJECTED: 1, REFUNDED: 2 };

/** The workflow's state, one object shared by the signal handlers and every step (never copied). */
interface InfractionRun {
  readonly id: string;
  /** The furthest status the acquirer's signals claimed. */
  signalled: InfractionStatus;
  /** Bumped by every signal: a wait that watches it wakes on any news. */
  news: number;
  p: InfractionProgress | null;
  /** Bumped by each defenseSubmitted signal; the defense itself is read from the database. */
  defenseAsks: number;
  defenseSeen: number;
  overdueWait: number;
}

/** The acquirer's decision so far, from the signals and the database, whichever knows more. */
function decision(run: InfractionRun): InfractionStatus {
  const stored = run.p?.acquirerStatus ?? 'OPEN';
  return RANK[run.signalled] > RANK[stored] ? run.signalled : stored;
}
const decided = (run: InfractionRun): boolean => decision(run) !== 'OPEN';

/** Waits until a signal arrives or `ms` pass. */
async function newsOrTimeout(run: InfractionRun, ms: number): Promise<void> {
  const seen = run.news;
  await condition(() => run.news !== seen, ms);
}

/** How long to sleep before the next top-up of the block; null when no money is coming. */
function nextTopUpIn(run: InfractionRun, q: InfractionProgress): number | null {
  if (q.nextSettlementInMs === null) return null;
  if (q.nextSettlementInMs > 0) {
    run.overdueWait = OVERDUE_RETRY_MS;
    return q.nextSettlementInMs + SETTLEMENT_GRACE_MS;
  }
  const wait = run.overdueWait;
  run.overdueWait = Math.min(run.overdueWait * 2, OVERDUE_RETRY_MAX_MS);
  return wait;
}

export async function infractionWorkflow(input: InfractionWorkflowInput): Promise<InfractionWorkflowResult> {
  const run: InfractionRun = {
    id: input.infractionId,
    signalled: 'OPEN',
    news: 0,
    p: null,
    defenseAsks: 0,
    defenseSeen: 0,
    overdueWait: OVERDUE_RETRY_MS,
  };
  registerHandlers(run);
  // A closed infraction never blocks again, whatever callback started this run (block() is a no-op).
  const p = await db.blockInfractionFunds(run.id);
  run.p = p;
  if (p.closed || p.status === 'REJECTED' || p.status === 'REFUNDED') return { status: p.status };
  if (await awaitDecision(run)) return { status: progress(run).status };
  return { status: (await returnFunds(run)).status };
}

function registerHandlers(run: InfractionRun): void {
  setHandler(acquirerUpdateSignal, ({ status }) => {
    if (RANK[status] > RANK[run.signalled]) run.signalled = status;
    run.news++;
  });
  setHandler(operatorDecidedSignal, () => void run.news++);
  setHandler(defenseSubmittedSignal, () => void run.defenseAsks++);
  setHandler(infractionStateQuery, () => run.p);
}

/** The progress once the first block has read it (never null after the start). */
function progress(run: InfractionRun): InfractionProgress {
  return run.p as InfractionProgress;
}

/**
 * 1. Open: wait for the decision, blocking what settles meanwhile. Deciding applies only what the
 * database holds from the acquirer's signed callback (docs/architecture.md "Workflows carry
 * intent; activities check facts"): a decision it does not hold leaves the infraction OPEN, the
 * signal's claim is forgotten and the wait goes on. (`patched`: runs recorded before the decision
 * was checked ended on the activity's answer.) True when the acquirer rejected it.
 */
async function awaitDecision(run: InfractionRun): Promise<boolean> {
  let rejecting = false;
  for (;;) {
    await waitOpen(run);
    if (progress(run).status !== 'OPEN') break;
    rejecting = decision(run) === 'REJECTED';
    run.p = rejecting ? await db.rejectInfraction(run.id) : await db.acceptInfraction(run.id);
    if (run.p.status !== 'OPEN' || !patched('infraction-decision-checked-against-the-row')) break;
    rejecting = false;
    run.signalled = 'OPEN';
  }
  return rejecting;
}

/**
 * While OPEN and undecided: a merchant's defense is sent, read from the database (a run recorded
 * before defenses had neither the signal nor `defensePending`, so it replays unchanged), and what
 * settles is blocked.
 */
async function waitOpen(run: InfractionRun): Promise<void> {
  const decidedOrDefense = (): boolean => decided(run) || run.defenseAsks !== run.defenseSeen;
  while (progress(run).status === 'OPEN' && !decided(run)) {
    const p = progress(run);
    if (p.defensePending === true || run.defenseAsks !== run.defenseSeen) {
      run.defenseSeen = run.defenseAsks;
      run.p = await sendDefense(run.id, p, () => decided(run));
      continue;
    }
    const wait = nextTopUpIn(run, p);
    if (wait === null) await condition(decidedOrDefense);
    else if (!(await condition(decidedOrDefense, wait))) run.p = await db.blockInfractionFunds(run.id);
  }
}

/**
 * 2. Accepted: until the payer has its money back through our own devolução, or the infraction
 * is closed (nothing to return, or released by an operator).
 */
async function returnFunds(run: InfractionRun): Promise<InfractionProgress> {
  const id = run.id;
  while (progress(run).status === 'ACCEPTED' && !progress(run).closed) {
    const p = progress(run);
    if (p.operatorAction === 'pending') {
      await newsOrTimeout(run, OPERATOR_RECHECK_MS);
      run.p = await db.applyOperatorAction(id);
      continue;
    }
    if (p.operatorAction) {
      run.p = await db.applyOperatorAction(id);
      continue;
    }
    if (!p.refundId) {
      // What is still missing may yet settle; then the devolução is chosen once.
      for (let wait = nextTopUpIn(run, p); wait !== null; wait = nextTopUpIn(run, progress(run))) {
        await sleepFor(wait);
        run.p = await db.blockInfractionFunds(id);
      }
      run.p = await db.prepareInfractionRefund(id);
      if (!run.p.refundId) continue;
    }
    const state = await devolucao(run);
    if (state.status === 'DEVOLVIDO') run.p = await db.completeMedRefund(id, state.rtrId ?? null);
    else run.p = await db.failMedRefund(id, state.reason ?? state.status);
  }
  return progress(run);
}

/**
 * 3. The devolução: asked once (idempotent on its id), then its own outcome, from the answer or
 * by asking — a callback only wakes the wait. Refused or not completed: an operator's case.
 * An outcome that cannot be learnt keeps the money in transit with an operator case, and the
 * idempotent request is made again hourly until the acquirer answers: never refused by guess
 * (docs/operations.md "Operator cases").
 */
async function devolucao(run: InfractionRun): Promise<MedRefundState> {
  const id = run.id;
  let seen = run.news; // a callback that arrives while the send runs must not be missed
  let state: MedRefundState = await carried(() => acq.sendMedRefund(id), 'could not be asked');
  let pollWait = REFUND_POLL_FIRST_MS;
  let reported = false;
  while (state.status === 'EM_PROCESSAMENTO' || state.status === 'UNKNOWN') {
    const unknown = state.status === 'UNKNOWN';
    if (unknown && !reported) {
      await db.reportUnknownMedRefund(id, state.reason ?? 'outcome unknown');
      reported = true;
    }
    if (run.news === seen) await condition(() => run.news !== seen, pollWait);
    seen = run.news;
    pollWait = Math.min(pollWait * 2, REFUND_POLL_MAX_MS);
    state = unknown
      ? await carried(() => acq.sendMedRefund(id), 'could not be asked')
      : await carried(() => acq.checkMedRefund(id), 'its outcome could not be asked');
  }
  return state;
}

/**
 * An acquirer call that failed for good (refused credentials, an off-protocol answer, six hours of
 * outage) says nothing of the devolução: its outcome is UNKNOWN, the money stays in transit with an
 * operator case and the workflow asks again, never a failed run nor a refusal by guess.
 * (`patched`: runs recorded before took it as REFUSED and replay so.)
 */
async function carried(call: () => Promise<MedRefundState>, what: string): Promise<MedRefundState> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = `${what}: ${err.cause?.message ?? err.message}`;
    return patched('med-unknown-outcome-stays-in-transit')
      ? { status: 'UNKNOWN', reason }
      : { status: 'REFUSED', reason };
  }
}

/**
 * Sends the stored defense (a no-op when none is pending). Still failing after the activity's retry
 * window: waits an hour, or until the decision comes, and the loop tries again.
 */
async function sendDefense(id: string, p: InfractionProgress, decided: () => boolean): Promise<InfractionProgress> {
  try {
    return await acq.forwardInfractionDefense(id);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    await condition(decided, DEFENSE_RETRY_MS);
    return { ...p, defensePending: true };
  }
}

/** A durable sleep that no signal cuts short. */
async function sleepFor(ms: number): Promise<void> {
  await condition(() => false, ms);
}
