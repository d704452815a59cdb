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

export async function infractionWorkflow(input: InfractionWorkflowInput): Promise<InfractionWorkflowResult> {
  const id = input.infractionId;
  let signalled: InfractionStatus = 'OPEN';
  /** Bumped by every signal: a wait that watches it wakes on any news. */
  let news = 0;
  let p: InfractionProgress | null = null;
  setHandler(acquirerUpdateSignal, ({ status }) => {
    if (RANK[status] > RANK[signalled]) signalled = status;
    news++;
  });
  setHandler(operatorDecidedSignal, () => void news++);
  /** Bumped by each defenseSubmitted signal; the defense itself is read from the database. */
  let defenseAsks = 0;
  let defenseSeen = 0;
  setHandler(defenseSubmittedSignal, () => void defenseAsks++);
  setHandler(infractionStateQuery, () => p);

  /** The acquirer's decision so far, from the signals and the database, whichever knows more. */
  const decision = (): InfractionStatus => {
    const stored = p?.acquirerStatus ?? 'OPEN';
    return RANK[signalled] > RANK[stored] ? signalled : stored;
  };
  const decided = (): boolean => decision() !== 'OPEN';
  /** The decision came, or a defense may be waiting to be sent. */
  const decidedOrDefense = (): boolean => decided() || defenseAsks !== defenseSeen;
  /** Waits until a signal arrives or `ms` pass. */
  const newsOrTimeout = async (ms: number): Promise<void> => {
    const seen = news;
    await condition(() => news !== seen, ms);
  };

  let overdueWait = OVERDUE_RETRY_MS;
  /** How long to sleep before the next top-up of the block; null when no money is coming. */
  const nextTopUpIn = (q: InfractionProgress): number | null => {
    if (q.nextSettlementInMs === null) return null;
    if (q.nextSettlementInMs > 0) {
      overdueWait = OVERDUE_RETRY_MS;
      return q.nextSettlementInMs + SETTLEMENT_GRACE_MS;
    }
    const wait = overdueWait;
    overdueWait = Math.min(overdueWait * 2, OVERDUE_RETRY_MAX_MS);
    return wait;
  };

  // A closed infraction never blocks again, whatever callback started this run (block() is a no-op).
  p = await db.blockInfractionFunds(id);
  if (p.closed || p.status === 'REJECTED' || p.status === 'REFUNDED') return { status: p.status };

  // 1. Open: wait for the decision, blocking what settles meanwhile. Deciding applies only what the
  //    database holds from the acquirer's signed callback (docs/architecture.md "Workflows carry
  //    intent; activities check facts"): a decision it does not hold leaves the infraction OPEN,
  //    the signal's claim is forgotten and the wait goes on. (`patched`: runs recorded before the
  //    decision was checked ended on the activity's answer.) A merchant's defense is sent while it
  //    waits, read from the database (a run recorded before defenses had neither the signal nor
  //    `defensePending`, so it replays unchanged).
  let rejecting = false;
  for (;;) {
    while (p.status === 'OPEN' && !decided()) {
      if (p.defensePending === true || defenseAsks !== defenseSeen) {
        defenseSeen = defenseAsks;
        p = await sendDefense(id, p, decided);
        continue;
      }
      const wait = nextTopUpIn(p);
      if (wait === null) await condition(decidedOrDefense);
      else if (!(await condition(decidedOrDefense, wait))) p = await db.blockInfractionFunds(id);
    }
    if (p.status !== 'OPEN') break;
    rejecting = decision() === 'REJECTED';
    p = rejecting ? await db.rejectInfraction(id) : await db.acceptInfraction(id);
    if (p.status !== 'OPEN' || !patched('infraction-decision-checked-against-the-row')) break;
    rejecting = false;
    signalled = 'OPEN';
  }
  if (rejecting) return { status: p.status };

  // 2. Accepted: until the payer has its money back through our own devolução, or the infraction
  //    is closed (nothing to return, or released by an operator).
  while (p.status === 'ACCEPTED' && !p.closed) {
    if (p.operatorAction === 'pending') {
      await newsOrTimeout(OPERATOR_RECHECK_MS);
      p = await db.applyOperatorAction(id);
      continue;
    }
    if (p.operatorAction) {
      p = await db.applyOperatorAction(id);
      continue;
    }
    if (!p.refundId) {
      // What is still missing may yet settle; then the devolução is chosen once.
      for (let wait = nextTopUpIn(p); wait !== null; wait = nextTopUpIn(p)) {
        await sleepFor(wait);
        p = await db.blockInfractionFunds(id);
      }
      p = await db.prepareInfractionRefund(id);
      if (!p.refundId) continue;
    }
    // 3. The devolução: asked once (idempotent on its id), then its own outcome, from the answer or
    //    by asking — a callback only wakes the wait. Refused or not completed: an operator's case.
    //    An outcome that cannot be learnt keeps the money in transit with an operator case, and
    //    the idempotent request is made again hourly until the acquirer answers: never refused by
    //    guess (docs/operations.md "Operator cases").
    let seen = news; // a callback that arrives while the send runs must not be missed
    let state: MedRefundState = await carried(() => acq.sendMedRefund(id), 'could not be asked');
    let pollWait = REFUND_POLL_FIRST_MS;
    let reported = false;
    while (state.status === 'EM_PROCESSAMENTO' || state.status === 'UNKNOWN') {
      const unknown = state.status === 'UNKNOWN';
      if (unknown && !reported) {
        await db.reportUnknownMedRefund(id, state.reason ?? 'outcome unknown');
        reported = true;
      }
      if (news === seen) await condition(() => news !== seen, pollWait);
      seen = news;
      pollWait = Math.min(pollWait * 2, REFUND_POLL_MAX_MS);
      state = unknown
        ? await carried(() => acq.sendMedRefund(id), 'could not be asked')
        : await carried(() => acq.checkMedRefund(id), 'its outcome could not be asked');
    }
    if (state.status === 'DEVOLVIDO') p = await db.completeMedRefund(id, state.rtrId ?? null);
    else p = await db.failMedRefund(id, state.reason ?? state.status);
  }
  return { status: p.status };
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
