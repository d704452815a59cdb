import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  startChild,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { ConformanceActivities } from './activities';
import { accumulator } from './messages';

export const stageKey = defineSearchAttributeKey('Stage', SearchAttributeType.KEYWORD);

/** Markers (patch, local activity), search-attribute upsert and memo update in one workflow. */
export async function markersAndProperties(n: number): Promise<number> {
  const { double } = proxyLocalActivities<ConformanceActivities>({ startToCloseTimeout: '5 seconds' });
  const base = patched('double-twice') ? await double(await double(n)) : n;
  upsertSearchAttributes([{ key: stageKey, value: 'done' }]);
  upsertMemo({ stage: 'done' });
  return base;
}

/** An activity nobody polls for: schedule-to-start timeout. */
export async function unpolledActivity(): Promise<string> {
  const { double } = proxyActivities<ConformanceActivities>({
    taskQueue: `${workflowInfo().taskQueue}-nobody`,
    scheduleToStartTimeout: '1 second',
    startToCloseTimeout: '10 seconds',
  });
  try {
    await double(1);
    return 'ran';
  } catch (err) {
    const cause = (err as { cause?: { timeoutType?: unknown } }).cause;
    return `timeout ${String(cause?.timeoutType)}`;
  }
}

/** A stalled activity bounded by schedule-to-close. */
export async function scheduleToClose(): Promise<string> {
  const { heartbeatsOnceThenStalls } = proxyActivities<ConformanceActivities>({
    startToCloseTimeout: '1 minute',
    scheduleToCloseTimeout: '1 second',
  });
  try {
    await heartbeatsOnceThenStalls();
    return 'ran';
  } catch (err) {
    const cause = (err as { cause?: { timeoutType?: unknown } }).cause;
    return `timeout ${String(cause?.timeoutType)}`;
  }
}

export interface AsyncActivities {
  completesAsync(): Promise<string>;
}

export async function asyncCompletion(): Promise<string> {
  const { completesAsync } = proxyActivities<AsyncActivities>({ startToCloseTimeout: '1 minute' });
  return await completesAsync();
}

/** Starts a child and cancels it; reports how the child ended. */
export async function cancelsChild(): Promise<string> {
  const scope = new CancellationScope();
  const child = await scope.run(() => startChild(accumulator, { workflowId: `${workflowInfo().workflowId}-child` }));
  await sleep(10);
  scope.cancel();
  try {
    await child.result();
    return 'child completed';
  } catch (err) {
    return isCancellation(err) ? 'child cancelled' : `other: ${String(err)}`;
  }
}

/** Never finishes by itself (run timeout test). */
export async function forever(): Promise<void> {
  await sleep('3650 days');
  throw ApplicationFailure.nonRetryable('unreachable');
}
