import { proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';

export interface BasicActivities {
  greet(name: string): Promise<string>;
}

const { greet } = proxyActivities<BasicActivities>({ startToCloseTimeout: '10 seconds' });

/** One activity, then a durable timer, then the result. */
export async function activityThenTimer(name: string, sleepMs: number): Promise<string> {
  const greeting = await greet(name);
  await sleep(sleepMs);
  return `${greeting}!`;
}

export async function returnsInput(x: string): Promise<string> {
  return x;
}

/**
 * Fails its first workflow task on purpose (a plain Error fails the task, not the workflow); the
 * retried task sees a longer history (Failed/Scheduled/Started appended) and succeeds.
 */
export async function failsFirstTask(): Promise<string> {
  if (workflowInfo().historyLength <= 3) throw new TypeError('first workflow task fails');
  return 'recovered';
}

/** Sleeps, then reports the workflow clock. */
export async function sleepThenNow(ms: number): Promise<number> {
  await sleep(ms);
  return Date.now();
}
