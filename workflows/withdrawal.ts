/**
 * The withdrawal saga, `withdrawal-<withdrawalId>` (docs/architecture.md "Withdrawals: the saga"):
 *
 *   1. debit       available → in transit; posted by the endpoint with the withdrawal row and
 *                  confirmed here as the first activity, so the history shows it
 *   2. transfer    POST /transfers at the acquirer, idempotent on the withdrawal id
 *   3. wait        the transfer callback (a signal), polling the acquirer on a backoff; past the
 *                  overall deadline, one last question and then an operator alert — never a guess
 *   4. outcome     COMPLETED → in transit leaves the books, `withdraw.completed`
 *                  REJECTED  → compensation: available restored, FAILED, `withdraw.failed`
 *                  RETURNED  → compensation: available restored, REFUNDED, `withdraw.refunded`
 *
 * Every callback reaches the workflow by signal-with-start and the workflow starts from what
 * PostgreSQL says, so a return that arrives days after completion starts a fresh run that applies
 * it. Only orchestration lives here: every rule is in src/services/withdrawals/lifecycle.ts.
 */
import {
  ActivityFailure,
  condition,
  defineQuery,
  defineSignal,
  log,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { WithdrawalActivities } from '../activities/withdrawals';
import { contradictsApplied } from '../src/domain/transfer-outcomes';
import type {
  TransferNotice,
  WithdrawalStatus,
  WithdrawalWorkflowInput,
  WithdrawalWorkflowState,
} from './withdrawal-types';
import { ACQUIRER_RETRY, DB_RETRY } from './retry-policies';

export const transferSignal = defineSignal<[TransferNotice]>('transfer');
export const withdrawalStateQuery = defineQuery<WithdrawalWorkflowState>('state');

/*
 * Retry policies (as for charges):
 * - database steps: 10–15 s per attempt, from 0.5 s doubling up to every 30 s. The compensations
 *   (complete, fail, refund) have no overall limit: they are retried until they succeed, because
 *   giving up would leave the merchant's money in transit. Final at once only when the withdrawal
 *   does not exist (NotFoundError) or the ledger refuses a movement that breaks its rules.
 * - acquirer calls: 30 s per attempt, from 1 s doubling up to every 5 minutes, for 6 hours. Final
 *   at once: the acquirer refused the request (AcquirerRejectedError) or our data is missing.
 */
const { confirmWithdrawalDebit } = proxyActivities<WithdrawalActivities>({
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { ...DB_RETRY, nonRetryableErrorTypes: ['NotFoundError', 'InvariantViolation', 'InsufficientFundsError'] },
});
const { sendWithdrawalTransfer, checkWithdrawalTransfer } = proxyActivities<WithdrawalActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '6 hours',
  retry: { ...ACQUIRER_RETRY, nonRetryableErrorTypes: ['AcquirerRejectedError', 'NotFoundError'] },
});
const { completeWithdrawal, failWithdrawal, refundWithdrawal, raiseWithdrawalAlert, reportTransferContradiction } =
  proxyActivities<WithdrawalActivities>({
    startToCloseTimeout: '15 seconds',
    retry: { ...DB_RETRY, nonRetryableErrorTypes: ['NotFoundError', 'InvariantViolation'] },
  });

/** First poll of the acquirer when no callback came; doubles up to the maximum. */
export const FIRST_POLL_MS = 30_000;
export const MAX_POLL_MS = 30 * 60_000;
/** After this long without an outcome the saga asks once more and raises an operator alert. */
export const RESULT_DEADLINE_MS = 24 * 60 * 60_000;
/** How often an escalated saga still asks the acquirer while it waits for the operator. */
export const ESCALATED_POLL_MS = 6 * 60 * 60_000;

const isFinal = (n: TransferNotice): boolean => n.status !== 'PROCESSING';

/** Whether the withdrawal's status already accounts for this notice (nothing left to apply). */
function alreadyApplied(n: TransferNotice, status: WithdrawalStatus): boolean {
  if (n.status === 'PROCESSING') return true;
  if (n.status === 'RETURNED') return status === 'REFUNDED' || status === 'FAILED';
  return status !== 'PROCESSING';
}

/** The saga's state, one object shared by the signal handlers and every step (never copied). */
interface WithdrawalRun {
  readonly id: string;
  readonly input: WithdrawalWorkflowInput;
  readonly notices: TransferNotice[];
  phase: WithdrawalWorkflowState['phase'];
  status: WithdrawalStatus;
  transferId: string | null;
  polls: number;
  /** The overall deadline for an outcome, fixed the first time the saga waits. */
  deadline: number | undefined;
}

const stateOf = (run: WithdrawalRun): WithdrawalWorkflowState => ({
  phase: run.phase,
  status: run.status,
  transferId: run.transferId,
  polls: run.polls,
});

export async function withdrawalWorkflow(input: WithdrawalWorkflowInput): Promise<WithdrawalWorkflowState> {
  const run: WithdrawalRun = {
    id: input.withdrawalId,
    input,
    notices: [],
    phase: 'sending',
    status: 'PROCESSING',
    transferId: null,
    polls: 0,
    deadline: undefined,
  };
  setHandler(transferSignal, (n) => void run.notices.push(n));
  setHandler(withdrawalStateQuery, () => stateOf(run));

  await confirmDebit(run);
  if (run.status === 'PROCESSING') {
    await sendTransfer(run);
    await awaitOutcome(run);
  }
  await applyNotices(run);
  // Nothing the source bore out (a forged signal): the saga waits for the real outcome again.
  // (`patched`: histories recorded before the steps checked facts ended here.)
  while (run.status === 'PROCESSING' && patched('withdrawal-waits-again-after-an-unconfirmed-outcome')) {
    await awaitOutcome(run);
    await applyNotices(run);
  }
  run.phase = 'done';
  return stateOf(run);
}

/**
 * 1. The debit: already in the ledger with the withdrawal; its transaction id goes into the
 * history — in the input when the endpoint started the run just after posting it (the withdrawal
 * is then PROCESSING with no transfer yet), else as the result of confirming it here.
 */
async function confirmDebit(run: WithdrawalRun): Promise<void> {
  if (run.input.debit) return;
  const debit = await confirmWithdrawalDebit(run.id);
  run.status = debit.snapshot.status;
  run.transferId = debit.snapshot.transferId;
}

/** 2. The transfer, idempotent on the withdrawal id. */
async function sendTransfer(run: WithdrawalRun): Promise<void> {
  try {
    const sent = await sendWithdrawalTransfer(run.id);
    run.transferId ??= sent.transferId;
    if (isFinal(sent)) run.notices.push(sent);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    // Not known to have reached the acquirer: the polls below repeat the idempotent send.
    log.warn('sending the transfer failed; polling will retry it', { withdrawalId: run.id, error: err.cause?.message });
  }
}

/** The acquirer's answer, or null when it cannot be asked now (the next poll asks again). */
async function ask(run: WithdrawalRun): Promise<TransferNotice | null> {
  try {
    const n = await checkWithdrawalTransfer(run.id);
    run.transferId ??= n.transferId;
    return n;
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn('asking the acquirer about the transfer failed', { withdrawalId: run.id, error: err.cause?.message });
    return null;
  }
}

/** Asks the acquirer and queues a final answer as a notice. */
async function poll(run: WithdrawalRun): Promise<void> {
  run.polls++;
  const polled = await ask(run);
  if (polled && isFinal(polled)) run.notices.push(polled);
}

/** 3. Wait for the outcome: the callback signal, or the poll on a backoff, up to the deadline. */
async function awaitOutcome(run: WithdrawalRun): Promise<void> {
  run.phase = 'awaiting_result';
  run.deadline ??= Date.now() + (run.input.resultDeadlineMs ?? RESULT_DEADLINE_MS);
  const hasOutcome = (): boolean => run.notices.some(isFinal);
  let delay = FIRST_POLL_MS;
  while (!hasOutcome()) {
    const left = run.deadline - Date.now();
    if (left <= 0) {
      await escalate(run, hasOutcome);
      break;
    }
    if (await condition(hasOutcome, Math.min(delay, left))) break;
    await poll(run);
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}

/** Past the deadline: one last question, then an operator alert — never a guess. */
async function escalate(run: WithdrawalRun, hasOutcome: () => boolean): Promise<void> {
  const last = await ask(run);
  if (last && isFinal(last)) {
    run.notices.push(last);
    return;
  }
  await raiseWithdrawalAlert(run.id, last ?? { status: 'PROCESSING', transferId: run.transferId });
  run.phase = 'escalated';
  // An operator settles it at the acquirer; its callback brings the outcome. A slow poll
  // still notices an outcome the acquirer reaches without calling back.
  while (!(await condition(hasOutcome, ESCALATED_POLL_MS))) await poll(run);
}

/**
 * 4. Apply every outcome in the order it came. Each step is idempotent; a notice the status already
 * reflects (a duplicate callback, a poll racing the callback) is skipped to keep the history plain.
 * One that contradicts the applied outcome (COMPLETED after FAILED, REJECTED after COMPLETED)
 * changes nothing either — the first applied outcome stays — but opens an operator case.
 * Each step applies only what the acquirer or its signed callback states (docs/architecture.md
 * "Workflows carry intent; activities check facts"): a notice they do not bear out changes nothing.
 */
async function applyNotices(run: WithdrawalRun): Promise<void> {
  const id = run.id;
  while (run.notices.length > 0) {
    const n = run.notices.shift() as TransferNotice;
    if (alreadyApplied(n, run.status)) {
      // (`patched`: histories recorded before contradictions were reported replay without it.)
      if (contradictsApplied(n.status, run.status) && patched('withdrawal-reports-contradicting-outcome')) {
        await reportTransferContradiction(id, n);
      }
      continue;
    }
    if (n.status === 'COMPLETED') run.status = (await completeWithdrawal(id, n)).status;
    else if (n.status === 'REJECTED')
      run.status = (await failWithdrawal(id, n.reason ?? 'rejected by the destination bank')).status;
    else if (n.status === 'RETURNED') run.status = (await refundWithdrawal(id, n)).status;
  }
}
