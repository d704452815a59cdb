import { proxyActivities, sleep } from '@temporalio/workflow';

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
