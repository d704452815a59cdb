/**
 * The life of one subscription, `subscription-<id>` (docs/api.md "Subscriptions"): the first run
 * waits for the payer's approval of the rec; each later run is one cycle — its cobr created
 * CYCLE_LEAD_DAYS before the date, the debit awaited on the date, retried by policy, the paid
 * cycle booked as its RECURRING charge's payment — and continues as new with the next, so a long
 * subscription's history stays one cycle long. Callbacks only say "look again"; every fact is
 * read at the acquirer by an activity. Cancellation (merchant or payer) ends it at any wait.
 */
import {
  condition,
  continueAsNew,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { SubscriptionActivities } from '../activities/subscriptions';
import type { CyclePlan, SubscriptionOutcome, SubscriptionWorkflowInput } from './subscription-types';
import type { PaymentNotice } from './charge-types';
import { ACQUIRER_RETRY, DB_RETRY } from './retry-policies';

export const lookAgainSignal = defineSignal<[]>('lookAgain');
export const subscriptionCancelSignal = defineSignal<[]>('cancel');

const DAY_MS = 86_400_000;
/** Days before a cycle's date its cobr is created (BCB: 2 to 10); the same as the API's first-date rule. */
const CYCLE_LEAD_DAYS = 3;
/** While an answer is awaited, the acquirer is asked again this often even without a callback. */
const POLL_MS = 6 * 3_600_000;
/** A scheduled debit with no outcome after this many polls past its date fails the attempt. */
const MAX_POLLS = 8;

const acts = proxyActivities<SubscriptionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { ...ACQUIRER_RETRY, nonRetryableErrorTypes: ['NotFoundError', 'AcquirerRejectedError'] },
});
const db = proxyActivities<SubscriptionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { ...DB_RETRY, nonRetryableErrorTypes: ['NotFoundError'] },
});

/** A calendar date's instant on the workflow's clock: noon UTC (9:00 in São Paulo). */
const at = (date: string): number => Date.parse(`${date}T12:00:00Z`);

export async function subscriptionWorkflow(input: SubscriptionWorkflowInput): Promise<SubscriptionOutcome> {
  const id = input.subscriptionId;
  const flags = { look: false, cancel: false };
  setHandler(lookAgainSignal, () => void (flags.look = true));
  setHandler(subscriptionCancelSignal, () => void (flags.cancel = true));
  /**
   * Waits until `deadline` (workflow clock), a callback, or a cancellation; false when cancelled.
   * A callback that came while the last look at the acquirer ran asks for one more look: it is
   * consumed when a wait ends, not dropped when the next begins (the payer's approval landing
   * during the first rec read had waited out the 6-hour poll). `patched`: runs recorded before
   * dropped it, and replay so.
   */
  const waitUntil = async (deadline: number): Promise<boolean> => {
    const keepsCallbacks = patched('subscription-keeps-a-callback-during-a-look');
    if (!keepsCallbacks) flags.look = false;
    await condition(() => flags.look || flags.cancel, Math.max(0, deadline - Date.now()));
    if (keepsCallbacks) flags.look = false;
    return !flags.cancel;
  };
  const end = async (lastCycle: number): Promise<SubscriptionOutcome> => {
    await acts.subscriptionCloseAtAcquirer(id);
    return { status: await db.subscriptionStatus(id), lastCycle };
  };

  if (input.cycle === undefined) {
    const status = await awaitApproval(id, waitUntil);
    if (status !== 'ACTIVE') return status === 'CANCELED' ? end(0) : { status, lastCycle: 0 };
    return continueAsNew<typeof subscriptionWorkflow>({ subscriptionId: id, cycle: 1 });
  }
  const n = input.cycle;
  const plan = await db.subscriptionPlanCycle(id, n);
  if (!plan) return end(n - 1);
  if (!(await waitUntil(at(plan.dueDate) - CYCLE_LEAD_DAYS * DAY_MS)) || (await syncedEnded(id))) return end(n - 1);
  const lastRetry = at(plan.dueDate) + (plan.retryWindowDays + 1) * DAY_MS;
  const opened = await acts.subscriptionOpenCycle(id, plan, (lastRetry - Date.now()) / 1000);
  // A variable cycle with no amount set is skipped (an answer only a history of this code holds).
  if ('skipped' in opened) return continueAsNew<typeof subscriptionWorkflow>({ subscriptionId: id, cycle: n + 1 });
  const outcome = await runCycle(id, plan, opened.chargeId, waitUntil);
  if (outcome === 'ended') return end(n);
  return continueAsNew<typeof subscriptionWorkflow>({ subscriptionId: id, cycle: n + 1 });
}

/** Polls the rec (and wakes on its callback) until it is decided, or expires it when the first cycle is due. */
async function awaitApproval(id: string, waitUntil: (deadline: number) => Promise<boolean>) {
  for (;;) {
    const { status, firstDate } = await acts.subscriptionSyncWithRec(id);
    if (status !== 'PENDING_APPROVAL') return status;
    const deadline = at(firstDate) - CYCLE_LEAD_DAYS * DAY_MS;
    if (Date.now() >= deadline) {
      await acts.subscriptionExpireApproval(id);
      return db.subscriptionStatus(id);
    }
    if (!(await waitUntil(Math.min(deadline, Date.now() + POLL_MS)))) return db.subscriptionStatus(id);
  }
}

/** The merchant or the payer ended the subscription meanwhile (a callback about the rec, or our own cancel). */
async function syncedEnded(id: string): Promise<boolean> {
  return (await acts.subscriptionSyncWithRec(id)).status !== 'ACTIVE';
}

/** Debit on the date, retries by policy; 'done' when the cycle is PAID or FAILED, 'ended' on cancellation. */
async function runCycle(
  id: string,
  plan: CyclePlan,
  chargeId: string,
  waitUntil: (deadline: number) => Promise<boolean>,
): Promise<'done' | 'ended'> {
  let attemptDate = plan.dueDate;
  let polls = 0;
  for (;;) {
    const settled = Date.now() >= at(attemptDate);
    if (!settled && !(await waitUntil(at(attemptDate)))) return 'ended';
    if (!settled && (await syncedEnded(id))) return 'ended';
    const check = await acts.subscriptionCheckCycle(id, plan.number);
    if (check.kind === 'paid') return book(id, plan.number, chargeId, check.notice);
    if (check.kind === 'closed' || (check.kind === 'waiting' && ++polls > MAX_POLLS)) {
      // A cobr cancelled with its rec (the payer cancelled) ends the subscription, not just the cycle.
      if (await syncedEnded(id)) return 'ended';
      const reason = check.kind === 'closed' ? check.reason : 'no answer from the acquirer';
      await acts.subscriptionRecordCycleFailure(id, plan.number, { attempt: 1, reason, retryDate: null });
      return 'done';
    }
    if (check.kind === 'waiting') {
      if (!(await waitUntil(Date.now() + POLL_MS))) return 'ended';
      continue;
    }
    const { attempts, reason, retryDate } = check;
    await acts.subscriptionRecordCycleFailure(id, plan.number, { attempt: attempts, reason, retryDate });
    if (retryDate === null) return 'done';
    await acts.subscriptionRetryCycle(id, plan.number, retryDate);
    attemptDate = retryDate;
    polls = 0;
  }
}

/**
 * Books the debit (the charge lifecycle's payment recording: ledger, fee, PAID, `charge.paid`),
 * then settles it after the merchant's delay, as a charge's own run does (the charge lifecycle's
 * `settle`). A refund or MED later reaches the charge's own `charge-<id>` run by signal-with-start.
 */
async function book(id: string, n: number, chargeId: string, notice: PaymentNotice): Promise<'done'> {
  const { settlesInMs } = await acts.subscriptionBookCycle(id, n, notice);
  if (settlesInMs !== null) {
    await sleep(Math.max(0, settlesInMs));
    await db.subscriptionSettleCycle(chargeId);
  }
  return 'done';
}
