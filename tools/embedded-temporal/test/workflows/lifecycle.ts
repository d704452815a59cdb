import {
  ApplicationFailure,
  continueAsNew,
  executeChild,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { accumulator, addSignal, finishSignal } from './messages';

export async function childDoubler(n: number): Promise<number> {
  return n * 2;
}

export async function parentOfDoubler(n: number): Promise<number> {
  const a = await executeChild(childDoubler, { args: [n], workflowId: `${workflowInfo().workflowId}-child` });
  return a + 1;
}

export async function failingChild(): Promise<never> {
  throw ApplicationFailure.nonRetryable('child says no', 'ChildError');
}

export async function parentOfFailingChild(): Promise<string> {
  try {
    await executeChild(failingChild, { workflowId: `${workflowInfo().workflowId}-child` });
    return 'no failure';
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause;
    return `child failed: ${cause?.message ?? String(err)}`;
  }
}

/** Continues as new `n` times, carrying a running sum; the last run returns the sum and run count. */
export async function countdown(
  n: number,
  acc: number,
  runs: number,
): Promise<{ acc: number; runs: number; continued: boolean }> {
  if (n > 0) await continueAsNew<typeof countdown>(n - 1, acc + n, runs + 1);
  return { acc, runs: runs + 1, continued: workflowInfo().continuedFromExecutionRunId !== undefined };
}

/** Signals a sibling workflow through an external handle. */
export async function signalSibling(targetId: string): Promise<string> {
  const h = getExternalWorkflowHandle(targetId);
  await h.signal(addSignal, 5);
  await h.signal(finishSignal);
  return 'sent';
}

/** Starts an accumulator child with a given parent-close policy and returns at once. */
export async function abandonsOrTerminatesChild(policy: 'TERMINATE' | 'ABANDON'): Promise<string> {
  const child = await startChild(accumulator, {
    workflowId: `${workflowInfo().workflowId}-child`,
    parentClosePolicy: policy === 'ABANDON' ? ParentClosePolicy.ABANDON : ParentClosePolicy.TERMINATE,
  });
  return child.workflowId;
}

/** Fails its first runs; with a workflow retry policy the server starts new runs. */
export async function failsUntilAttempt(okAt: number): Promise<number> {
  const attempt = workflowInfo().attempt;
  if (attempt < okAt) throw ApplicationFailure.create({ message: `attempt ${attempt} fails` });
  return attempt;
}
