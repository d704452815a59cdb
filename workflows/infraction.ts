/**
 * One MED infraction, `infraction-<id>` (README "MED infractions"): block the disputed amount and
 * record `infraction.received`; while the acquirer decides, block what was missing as the
 * merchant's pending money settles; rejected → unblock; accepted → return the blocked funds to the
 * payer by a devolução and, once the acquirer confirms it, mark the charge refunded.
 *
 * The acquirer's updates arrive by signal-with-start, and the callback handler also keeps the
 * furthest status on the infraction row, so a run restarted by the reconciler (or a fresh run after
 * a closed one) knows the decision from the database even without the signal. Only orchestration
 * lives here: every rule is in src/services/infraction-lifecycle.ts behind an activity.
 */
import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { InfractionActivities } from '../activities/infractions';
import type {
  AcquirerInfractionUpdate,
  InfractionProgress,
  InfractionStatus,
  InfractionWorkflowInput,
  InfractionWorkflowResult,
  MedRefundState,
} from './infraction-types';

export const acquirerUpdateSignal = defineSignal<[AcquirerInfractionUpdate]>('acquirerUpdate');
export const infractionStateQuery = defineQuery<InfractionProgress | null>('state');

/*
 * Retry policies, as in the charge workflow: database steps retried quickly for a day (never a small
 * cap: giving up mid-way would leave money blocked for nobody); acquirer calls from 1 s up to every
 * 5 min for 6 hours. Final at once: the infraction or its charge does not exist (NotFoundError), the
 * ledger refused a movement that breaks its rules (InvariantViolation), the acquirer refused the
 * request for good (AcquirerRejectedError; a refused devolução is already an outcome of sendMedRefund).
 */
const DB_RETRY = { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' } as const;
const ACQUIRER_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' } as const;

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
/** How long to wait for the devolução's confirmation before asking the acquirer ourselves. */
const REFUND_POLL_INTERVAL_MS = 60_000;

const RANK: Record<InfractionStatus, number> = { OPEN: 0, ACCEPTED: 1, REJECTED: 1, REFUNDED: 2 };

export async function infractionWorkflow(input: InfractionWorkflowInput): Promise<InfractionWorkflowResult> {
  const id = input.infractionId;
  let signalled: InfractionStatus = 'OPEN';
  let p: InfractionProgress | null = null;
  setHandler(acquirerUpdateSignal, ({ status }) => {
    if (RANK[status] > RANK[signalled]) signalled = status;
  });
  setHandler(infractionStateQuery, () => p);

  /** The acquirer's decision so far, from the signals and the database, whichever knows more. */
  const decision = (): InfractionStatus => {
    const stored = p?.acquirerStatus ?? 'OPEN';
    return RANK[signalled] > RANK[stored] ? signalled : stored;
  };
  const decided = (): boolean => decision() !== 'OPEN';
  const refundedByAcquirer = (): boolean => decision() === 'REFUNDED';

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

  p = await db.blockInfractionFunds(id);
  if (p.closed || p.status === 'REJECTED' || p.status === 'REFUNDED') return { status: p.status };

  // 1. Open: wait for the decision, blocking what settles meanwhile.
  while (p.status === 'OPEN' && !decided()) {
    const wait = nextTopUpIn(p);
    if (wait === null) await condition(decided);
    else if (!(await condition(decided, wait))) p = await db.blockInfractionFunds(id);
  }
  if (p.status === 'OPEN') {
    if (decision() === 'REJECTED') {
      p = await db.rejectInfraction(id);
      return { status: p.status };
    }
    p = await db.acceptInfraction(id);
  }

  // 2. Accepted: what is still missing may yet settle; the acquirer refunding on its own ends that.
  while (p.status === 'ACCEPTED' && !p.refundId && !p.closed && !refundedByAcquirer()) {
    const wait = nextTopUpIn(p);
    if (wait === null) break;
    await condition(refundedByAcquirer, wait);
    p = await db.blockInfractionFunds(id);
  }
  if (p.status === 'ACCEPTED' && !p.refundId) p = await db.prepareInfractionRefund(id);
  if (p.status !== 'ACCEPTED' || !p.refundId) return { status: p.status };

  // 3. The devolução: asked once (idempotent), then confirmed by the acquirer's REFUNDED callback or,
  //    failing that, by asking. A refused or failed devolução waits for the acquirer's own REFUNDED.
  let state: MedRefundState = await acq.sendMedRefund(id);
  while (state.status !== 'DEVOLVIDO' && !refundedByAcquirer()) {
    if (state.status === 'REFUSED' || state.status === 'NAO_REALIZADO') {
      await db.noteMedRefundStuck(id, state.reason ?? state.status);
      await condition(refundedByAcquirer);
      break;
    }
    if (await condition(refundedByAcquirer, REFUND_POLL_INTERVAL_MS)) break;
    state = await acq.checkMedRefund(id);
  }
  p = await db.completeMedRefund(id, state.rtrId ?? null);
  return { status: p.status };
}
