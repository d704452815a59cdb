/**
 * Test helpers for suites that run workflows against this server (its own conformance suite and the
 * app's tests): one time-skipping environment per test run, each workflows path bundled once, a
 * worker per test on a fresh task queue. README "Testing with it".
 *
 * - `testEnv()`: one `TestWorkflowEnvironment.createTimeSkipping()` per process, created on first
 *   use on this server (with `TEMPORAL_TEST_SERVER=download`, the official test server that
 *   @temporalio/testing downloads, which needs internet); `teardownTestEnv()` ends it.
 * - `workflowBundle(path)`: `bundleWorkflowCode` once per workflows path (webpack is slow).
 * - `withWorker(opts, fn)`: runs a Worker on a fresh task queue while `fn` runs, then shuts it down.
 *
 * Time skipping is global to the environment, so tests that await workflow results should not run
 * concurrently with each other (mocha runs them serially).
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from './proto';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  Worker,
  type WorkerOptions,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';

/** Path of the launcher of our offline server (spawned by @temporalio/testing as `<port> ...`). */
export const TEST_SERVER_LAUNCHER = path.resolve(__dirname, '../bin/embedded-temporal');

let envPromise: Promise<TestWorkflowEnvironment> | undefined;
const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();
const interceptorModulesByPath = new Map<string, readonly string[]>();
let runtimeConfigured = false;

/**
 * Keep the SDK's chatter out of test output: activity failures that tests provoke on purpose are
 * logged at WARN by the worker. TEMPORAL_LOG_LEVEL=DEBUG|INFO|WARN shows more.
 */
function configureRuntime(): void {
  if (runtimeConfigured) return;
  runtimeConfigured = true;
  const wanted = (process.env.TEMPORAL_LOG_LEVEL ?? 'ERROR').toUpperCase();
  const level = wanted === 'DEBUG' || wanted === 'INFO' || wanted === 'WARN' ? wanted : 'ERROR';
  try {
    Runtime.install({
      logger: new DefaultLogger(level),
      telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } },
    });
  } catch {
    // Already installed by someone else in this process: keep theirs.
  }
}

/** The run-wide time-skipping environment (created on first use). */
export function testEnv(): Promise<TestWorkflowEnvironment> {
  if (!envPromise) {
    configureRuntime();
    const useDownload = process.env.TEMPORAL_TEST_SERVER === 'download';
    envPromise = TestWorkflowEnvironment.createTimeSkipping(
      useDownload ? undefined : { server: { executable: { type: 'existing-path', path: TEST_SERVER_LAUNCHER } } },
    );
  }
  return envPromise;
}

/**
 * Workflow interceptor modules to bundle with every bundle of `workflowsPath` (as the app's worker
 * does), so a path still has one bundle per run whoever asks for it. Call before its first bundle.
 */
export function setWorkflowInterceptorModules(workflowsPath: string, modules: readonly string[]): void {
  const key = path.resolve(workflowsPath);
  if (bundles.has(key)) throw new Error(`${key} is bundled already: set its interceptor modules before`);
  interceptorModulesByPath.set(key, modules);
}

/** Webpack bundle of a workflows module (file or directory), made once per path per run. */
export function workflowBundle(workflowsPath: string): Promise<WorkflowBundleWithSourceMap> {
  const key = path.resolve(workflowsPath);
  let b = bundles.get(key);
  if (!b) {
    configureRuntime();
    b = bundleWorkflowCode({
      workflowsPath: key,
      workflowInterceptorModules: [...(interceptorModulesByPath.get(key) ?? [])],
      logger: new DefaultLogger('WARN'),
    });
    bundles.set(key, b);
  }
  return b;
}

/** A task queue name no other test uses, so leftovers of one test never reach another's worker. */
export function uniqueTaskQueue(prefix = 'test'): string {
  return `${prefix}-${randomUUID()}`;
}

export interface WithWorkerOptions {
  /** Module (or directory with index.ts) exporting the workflow functions. */
  workflowsPath: string;
  /** Activity implementations, by name. */
  activities?: object;
  /** Defaults to a fresh unique queue. */
  taskQueue?: string;
  /**
   * Terminate workflows still running on the task queue when `fn` settles. Default: true when the
   * queue was generated here (nobody will ever poll it again), false for a queue you passed in.
   * A leftover workflow whose timer fires later would hold the global time-skipping lock.
   */
  cleanup?: boolean;
  /** Anything else for Worker.create (connection, namespace, bundle and queue are set here). */
  workerOptions?: Partial<
    Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'workflowBundle' | 'workflowsPath' | 'activities'>
  >;
}

export interface WorkerContext {
  env: TestWorkflowEnvironment;
  /** Time-skipping client: awaiting `result()` lets virtual time jump over timers. */
  client: Client;
  taskQueue: string;
  worker: Worker;
}

/** Run `fn` while a worker polls `taskQueue`; the worker is shut down when `fn` settles. */
export async function withWorker<T>(opts: WithWorkerOptions, fn: (ctx: WorkerContext) => Promise<T>): Promise<T> {
  const env = await testEnv();
  const taskQueue = opts.taskQueue ?? uniqueTaskQueue();
  const worker = await Worker.create({
    ...opts.workerOptions,
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: await workflowBundle(opts.workflowsPath),
    activities: opts.activities,
  });
  try {
    return await worker.runUntil(() => fn({ env, client: env.client, taskQueue, worker }));
  } finally {
    if (opts.cleanup ?? opts.taskQueue === undefined) await terminateRunning(env.client, taskQueue);
  }
}

/**
 * Terminates the workflows still running on `taskQueue` (best effort: the official test server's
 * visibility may not support the filter). For suites that start workflows nobody will run, e.g. a
 * whole `startApi` whose reconcilers start workflows on the configured queue.
 */
export async function terminateRunning(client: Client, taskQueue: string): Promise<void> {
  try {
    for await (const wf of client.workflow.list({
      query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
    })) {
      await client.workflow
        .getHandle(wf.workflowId, wf.runId)
        .terminate('left running at the end of a test')
        .catch(() => undefined);
    }
  } catch {
    // Listing unsupported: nothing to clean.
  }
}

/** The environment if some suite made it, without making it (for run-wide checks). */
export function openedTestEnv(): Promise<TestWorkflowEnvironment> | undefined {
  return envPromise;
}

export interface StuckWorkflow {
  workflowId: string;
  runId: string;
  taskQueue: string;
  /** What waits: `workflow task` or `activity <type>`, and for how long. */
  waiting: string[];
}

/**
 * Running workflows with a workflow task or an activity that has waited longer than `olderThanMs`
 * for a worker to take it: work on a queue nobody polls any more. On a time-skipping server each
 * such task holds the global clock (README "Testing with it"), so a run-wide check reports them.
 */
export async function stuckWorkflows(env: TestWorkflowEnvironment, olderThanMs: number): Promise<StuckWorkflow[]> {
  const now = await env.currentTimeMs();
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
    t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : now;
  const stuck: StuckWorkflow[] = [];
  for await (const wf of env.client.workflow.list({ query: `ExecutionStatus = 'Running'` })) {
    const raw = (
      await env.client.workflow
        .getHandle(wf.workflowId, wf.runId)
        .describe()
        .catch(() => undefined)
    )?.raw;
    if (!raw) continue;
    const waiting: string[] = [];
    const wft = raw.pendingWorkflowTask;
    if (wft && wft.state === temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED) {
      const age = now - ms(wft.scheduledTime);
      if (age > olderThanMs) waiting.push(`workflow task for ${Math.round(age / 1000)} s`);
    }
    for (const a of raw.pendingActivities ?? []) {
      if (a.state !== temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED) continue;
      // An attempt waiting out its retry backoff is not waiting for a worker.
      const since = Math.max(ms(a.scheduledTime), a.lastAttemptCompleteTime ? ms(a.lastAttemptCompleteTime) : 0);
      const due = a.nextAttemptScheduleTime ? ms(a.nextAttemptScheduleTime) : since;
      const age = now - Math.max(since, due);
      if (age > olderThanMs) waiting.push(`activity ${a.activityType?.name ?? '?'} for ${Math.round(age / 1000)} s`);
    }
    if (waiting.length > 0)
      stuck.push({ workflowId: wf.workflowId, runId: wf.runId, taskQueue: wf.taskQueue, waiting });
  }
  return stuck;
}

/** Ends the environment made by `testEnv()`, if any (the test runner's last hook calls it). */
export async function teardownTestEnv(): Promise<void> {
  const p = envPromise;
  envPromise = undefined;
  const env = await p?.catch(() => undefined);
  await env?.teardown();
}
