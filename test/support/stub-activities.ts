/**
 * Fast workflow tests with stubbed activities (docs/testing.md "Workflow branches with stubbed activities"): the real workflow bundle on a real
 * worker in the run's time-skipping environment, with plain-object activities that record every call
 * (attempts included) and return or throw what the branch under test needs. This is the unit-test
 * style Temporal recommends (its money-transfer template's `src/mocha/workflows.test.ts`); the
 * end-to-end suites beside these run the real activities over PostgreSQL and the acquirer simulator.
 *
 * Example:
 *   const stub = recordCalls<PixKeyActivities>({ registerPixKey: async () => 'registered' });
 *   const result = await withStubWorker(stub.activities, ({ client, taskQueue, workflowId }) =>
 *     client.workflow.execute(pixKeyRegistrationWorkflow, { taskQueue, workflowId, args: [{ pixKeyId }] }));
 *   assert.deepEqual(stub.names(), ['registerPixKey']);
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { onRunEnd } from './lifecycle';
import { endRun, terminateRunning, testEnv, uniqueTaskQueue, workflowBundle, type WorkerContext } from './temporal';

type History = temporal.api.history.v1.IHistory;
/** A protobuf Duration as decoded (seconds may be a Long). */
interface Duration {
  seconds?: number | { toNumber(): number } | null;
  nanos?: number | null;
}

const durationMs = (d: Duration): number => {
  const s = d.seconds;
  const seconds = s === null || s === undefined ? 0 : typeof s === 'number' ? s : s.toNumber();
  return seconds * 1000 + Math.round((d.nanos ?? 0) / 1e6);
};

export interface RecordedCall {
  name: string;
  args: unknown[];
  /** Temporal's attempt number (1 for the first try, 2 for the first retry...). */
  attempt: number;
}

export interface Recorder<T> {
  /** The activities to register: each records its call, then runs the stub. */
  activities: T;
  calls: RecordedCall[];
  /** Names of the calls so far, in order (one entry per attempt). */
  names(): string[];
  /** The calls of one activity. */
  of(name: keyof T & string): RecordedCall[];
}

/** Wraps plain stub functions so every invocation (each retry too) is recorded in order. */
export function recordCalls<T extends object>(stubs: Partial<T>): Recorder<T> {
  const calls: RecordedCall[] = [];
  const activities: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(stubs as Record<string, (...args: unknown[]) => Promise<unknown>>)) {
    activities[name] = async (...args: unknown[]) => {
      calls.push({ name, args, attempt: Context.current().info.attempt });
      return fn(...args);
    };
  }
  return {
    activities: activities as T,
    calls,
    names: () => calls.map((c) => c.name),
    of: (name) => calls.filter((c) => c.name === name),
  };
}

/** A failure of the given type, as our services' errors reach Temporal; not marked non-retryable itself. */
export function failure(type: string, message = `${type} (stub)`): ApplicationFailure {
  return ApplicationFailure.create({ type, message });
}

export interface StubContext extends WorkerContext {
  /** The workflow id whose activity calls go to this test's stubs: start the workflow under it. */
  workflowId: string;
}

interface SharedWorker {
  ctx: WorkerContext;
  /** Stubs by workflow id: one worker serves every test, each test's workflow reaches its own stubs. */
  routes: Map<string, Record<string, (...args: unknown[]) => unknown>>;
}

/** One worker per set of activity names, for the whole run (creating and shutting down a worker per test is most of a test's time). */
const sharedWorkers = new Map<string, Promise<SharedWorker>>();

function sharedWorker(names: string[]): Promise<SharedWorker> {
  const key = [...names].sort().join(',');
  let w = sharedWorkers.get(key);
  if (!w) {
    w = (async () => {
      const env = await testEnv();
      const routes: SharedWorker['routes'] = new Map();
      const activities: Record<string, (...args: unknown[]) => unknown> = {};
      for (const name of names) {
        activities[name] = (...args: unknown[]) => {
          const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
          const impl = routes.get(workflowId)?.[name];
          // A workflow left over from a finished test: fail it for good rather than run someone else's stub.
          if (!impl) throw ApplicationFailure.nonRetryable(`no stub for ${name} of ${workflowId}`, 'NoStub');
          return impl(...args);
        };
      }
      const taskQueue = uniqueTaskQueue('stubs');
      const worker = await Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue,
        workflowBundle: await workflowBundle(require.resolve('../../workflows')),
        activities,
      });
      const running = worker.run();
      onRunEnd(async () => {
        await terminateRunning(env.client, taskQueue);
        worker.shutdown();
        await running;
      });
      return { ctx: { env, client: env.client, taskQueue, worker }, routes };
    })();
    sharedWorkers.set(key, w);
  }
  return w;
}

/**
 * Runs `fn` with a worker of the run's one workflow bundle whose activities, for the workflow id
 * `ctx.workflowId`, are these stubs. The workflow is terminated if `fn` leaves it running.
 */
export async function withStubWorker<R>(
  activities: object,
  fn: (ctx: StubContext) => Promise<R>,
  workflowId = uniqueWorkflowId('stubbed'),
): Promise<R> {
  const shared = await sharedWorker(Object.keys(activities));
  shared.routes.set(workflowId, activities as Record<string, (...args: unknown[]) => unknown>);
  try {
    return await fn({ ...shared.ctx, workflowId });
  } finally {
    await endRun(shared.ctx.client, workflowId, undefined, 'left running at the end of a test');
    shared.routes.delete(workflowId);
  }
}

export const uniqueWorkflowId = (prefix: string): string => `${prefix}-${randomUUID()}`;

/** Activity types scheduled, in order (one per scheduling: retries are not new events). */
export function scheduledActivities(history: History): string[] {
  return (history.events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((n): n is string => typeof n === 'string');
}

/** Durations of the timers the workflow started, in ms, in order. */
export function timersStarted(history: History): number[] {
  return (history.events ?? [])
    .map((e) => e.timerStartedEventAttributes?.startToFireTimeout)
    .filter((d): d is NonNullable<typeof d> => d !== undefined && d !== null)
    .map(durationMs);
}

/** The attempt each scheduled activity's recorded start carries (the attempt that closed it), in order. */
export function activityAttempts(history: History): number[] {
  return (history.events ?? [])
    .map((e) => e.activityTaskStartedEventAttributes?.attempt)
    .filter((n): n is number => typeof n === 'number');
}

/** Whether the run ended by continuing as new, and with what first argument. */
export function continuedAsNew(history: History): boolean {
  return (history.events ?? []).some((e) => e.workflowExecutionContinuedAsNewEventAttributes);
}

/** Retry policies of scheduled activities, by activity type (the last scheduling of each). */
export function retryPolicies(history: History): Map<string, temporal.api.common.v1.IRetryPolicy> {
  const out = new Map<string, temporal.api.common.v1.IRetryPolicy>();
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name && a.retryPolicy) out.set(a.activityType.name, a.retryPolicy);
  }
  return out;
}

/** Replays a recorded history on a fresh replay worker of the same bundle: throws on any non-determinism. */
export async function replay(history: History, workflowId: string): Promise<void> {
  await Worker.runReplayHistory(
    { workflowBundle: await workflowBundle(require.resolve('../../workflows')) },
    history,
    workflowId,
  );
}

/** Activity timeouts as scheduled, in ms, by activity type. */
export function activityTimeouts(history: History): Map<string, { startToClose: number; scheduleToClose: number }> {
  const ms = (d: Duration | null | undefined): number => (d ? durationMs(d) : 0);
  const out = new Map<string, { startToClose: number; scheduleToClose: number }>();
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name)
      out.set(a.activityType.name, {
        startToClose: ms(a.startToCloseTimeout),
        scheduleToClose: ms(a.scheduleToCloseTimeout),
      });
  }
  return out;
}
