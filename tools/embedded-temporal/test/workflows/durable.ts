/** Workflows of the durability (crash and restart) tests: each does one side effect after waiting. */
import {
  condition,
  continueAsNew,
  defineSignal,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';

export interface DurableActivities {
  /** Counted by the test: must run exactly once per workflow. */
  sideEffect(tag: string): Promise<string>;
  /** Fails until `okAt`, counting every attempt. */
  flaky(tag: string, okAt: number): Promise<string>;
  /** Takes `ms` of real time (in flight while the server is killed). */
  slow(tag: string, ms: number): Promise<string>;
}

const acts = proxyActivities<DurableActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 10 },
});

export const durableAddSignal = defineSignal<[string]>('durable-add');

export async function timerThenEffect(tag: string, ms: number): Promise<string> {
  await sleep(ms);
  return await acts.sideEffect(tag);
}

/** Waits for `n` signals, then does its side effect with what they carried. */
export async function collectsSignals(tag: string, n: number): Promise<string> {
  const got: string[] = [];
  setHandler(durableAddSignal, (v) => void got.push(v));
  await condition(() => got.length >= n);
  return await acts.sideEffect(`${tag}:${got.join(',')}`);
}

export async function retryingEffect(tag: string, okAt: number): Promise<string> {
  return await acts.flaky(tag, okAt);
}

export async function slowEffect(tag: string, ms: number): Promise<string> {
  return await acts.slow(tag, ms);
}

/** A child that sleeps (the crash hits while it waits), then the parent reports its result. */
export async function parentOfSleeper(tag: string, ms: number): Promise<string> {
  const child = await startChild(timerThenEffect, {
    workflowId: `${workflowInfo().workflowId}-child`,
    args: [tag, ms],
  });
  return `parent got: ${await child.result()}`;
}

/** Continues as new `runs` times, sleeping `ms` in each run, then does its side effect. */
export async function sleepsAndContinues(tag: string, runs: number, ms: number): Promise<string> {
  await sleep(ms);
  if (runs > 0) await continueAsNew<typeof sleepsAndContinues>(tag, runs - 1, ms);
  return await acts.sideEffect(`${tag}:${workflowInfo().continuedFromExecutionRunId ? 'continued' : 'first'}`);
}

/**
 * An activity, then waits for a signal or `ms` (a paid charge waiting out its settlement delay),
 * then another activity with what ended the wait.
 */
export async function effectThenWaits(tag: string, ms: number): Promise<string> {
  const got: string[] = [];
  setHandler(durableAddSignal, (v) => void got.push(v));
  await acts.sideEffect(`${tag}:first`);
  const signalled = await condition(() => got.length > 0, ms);
  return await acts.sideEffect(`${tag}:${signalled ? got.join(',') : 'timer'}`);
}
