/**
 * THE Temporal helper for every test of the project, on the official servers only
 * (docs/testing.md "One Temporal server of each kind per run"):
 * - `testEnv()`: sdk-java's time-skipping test server (`TestWorkflowEnvironment.createTimeSkipping()`
 *   with the pinned binary): virtual time jumps over timers while a test awaits a result;
 * - `devEnv()`: the Temporal CLI's dev server (`createLocal()`), real time with visibility, for
 *   suites that list workflows by `MerchantId`, trace signal-with-start, or sit behind TLS.
 * The run's last hook tears both down (test/support/root-hooks.ts).
 *
 * Example:
 *   const result = await withWorker(
 *     { workflowsPath: require.resolve('../../workflows'), activities: createActivities(deps) },
 *     ({ client, taskQueue }) => client.workflow.execute(chargeWorkflow, { taskQueue, workflowId, args: [input] }),
 *   );
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  Worker,
  type WorkerOptions,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { temporalBinaryPath } from '../../tools/temporal-binaries/src/binaries';
import { ENTITY_ID_ATTRIBUTE, MERCHANT_ID_ATTRIBUTE } from '../../src/temporal/clients/starter';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../../src/temporal/workflow-interceptor-modules';
import { endRun, listOpenWorkflows } from './temporal-open-workflows';
import { shareTimeSkippingWaits } from './time-skipping-waits';
import { onRunEnd } from './lifecycle';

export { endRun, holdClock, resetTimeSkipping, stuckWorkflows, type StuckWorkflow } from './temporal-open-workflows';

/** The app's workflows module as suites name it (`require.resolve('../../workflows')`: its index). */
const WORKFLOWS_PATH = require.resolve('../../workflows');
const QUIET_TEST_SERVER = path.resolve(__dirname, 'temporal-test-server-quiet.sh');

/** Which of the run's two official servers a suite runs on. */
export type TemporalKind = 'time-skipping' | 'dev';

let timeSkipping: Promise<TestWorkflowEnvironment> | undefined;
let dev: Promise<TestWorkflowEnvironment> | undefined;
const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();
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

/** The run-wide time-skipping environment on the official test server (made on first use). */
export function testEnv(): Promise<TestWorkflowEnvironment> {
  if (!timeSkipping) {
    configureRuntime();
    // Through a wrapper that sends the server's own log to /dev/null (or TEMPORAL_TEST_SERVER_LOG):
    // the SDK would forward it into the test output, and its lock history grows with the run.
    process.env.PIXFLOW_TEST_SERVER_BINARY = temporalBinaryPath('test-server');
    timeSkipping = TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: QUIET_TEST_SERVER } },
    }).then(withSearchAttributes);
  }
  return timeSkipping;
}

/**
 * The test server refuses a start whose search attributes it does not know, and takes no flag for
 * them: they are registered through its operator service, as on a real cluster
 * (docs/production.md).
 */
async function withSearchAttributes(env: TestWorkflowEnvironment): Promise<TestWorkflowEnvironment> {
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries([MERCHANT_ID_ATTRIBUTE, ENTITY_ID_ATTRIBUTE].map((k) => [k.name, keyword])),
  });
  // Overlapping waits (two results at once, a sleep beside a result) must share the one lock.
  await shareTimeSkippingWaits(env);
  return env;
}

/**
 * The run-wide dev server (real time, SQLite in memory, visibility by query) with the search
 * attributes our workflows set, as `npm start` registers them (docs/operations.md "Watching
 * workflows").
 */
export function devEnv(): Promise<TestWorkflowEnvironment> {
  if (!dev) {
    configureRuntime();
    dev = TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: temporalBinaryPath('cli') },
        searchAttributes: [MERCHANT_ID_ATTRIBUTE, ENTITY_ID_ATTRIBUTE],
        extraArgs: ['--headless', '--log-level', 'error'],
      },
    });
  }
  return dev;
}

/** Webpack bundle of a workflows module (file or directory), made once per path per run. */
export function workflowBundle(workflowsPath: string): Promise<WorkflowBundleWithSourceMap> {
  const key = path.resolve(workflowsPath);
  let b = bundles.get(key);
  if (!b) {
    configureRuntime();
    b = bundleWorkflowCode({
      workflowsPath: key,
      // The app's bundle carries the worker's interceptor modules, as in production (tracing: a
      // no-op for untraced runs; docs/operations.md "Tracing").
      workflowInterceptorModules: key === WORKFLOWS_PATH ? [...WORKFLOW_INTERCEPTOR_MODULES] : [],
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
  /** The environment to run on: the time-skipping test server unless told otherwise. */
  env?: TestWorkflowEnvironment;
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
  /** The environment's client: on the time-skipping server, awaiting `result()` skips time. */
  client: Client;
  taskQueue: string;
  worker: Worker;
}

/** Run `fn` while a worker polls `taskQueue`; the worker is shut down when `fn` settles. */
export async function withWorker<T>(opts: WithWorkerOptions, fn: (ctx: WorkerContext) => Promise<T>): Promise<T> {
  const env = opts.env ?? (await testEnv());
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
 * Terminates the workflows still running on `taskQueue`. For suites that start workflows nobody
 * will run, e.g. a whole `startApi` whose reconcilers start workflows on the configured queue.
 */
export async function terminateRunning(client: Client, taskQueue: string): Promise<void> {
  const ours = (await listOpenWorkflows(client)).filter((wf) => wf.taskQueue === taskQueue);
  await Promise.all(ours.map((wf) => endRun(client, wf.workflowId, wf.runId, 'left running at the end of a test')));
}

/** The environments some suite made, without making any (for run-wide checks). */
export async function openedTestEnvs(): Promise<TestWorkflowEnvironment[]> {
  const made = [timeSkipping, dev].filter((p): p is Promise<TestWorkflowEnvironment> => p !== undefined);
  const settled = await Promise.all(made.map((p) => p.catch(() => undefined)));
  return settled.filter((e): e is TestWorkflowEnvironment => e !== undefined);
}

/** Ends the environments made by `testEnv()` / `devEnv()` (the test runner's last hook calls it). */
export async function teardownTestEnvs(): Promise<void> {
  const envs = await openedTestEnvs();
  timeSkipping = undefined;
  dev = undefined;
  await Promise.all(envs.map((e) => e.teardown()));
}

/**
 * A real worker of the project's workflows polling `taskQueue` until the run ends, as the test
 * stacks run it. `restart()` shuts it down, waiting for its tasks in flight, and starts a new one on
 * the same queue: what a deploy or a crash-and-restart does to workflows in the middle of their lives.
 * Only a `restartable` worker may be restarted: it keeps no workflow cache, so it never polls a sticky
 * queue. A stopped worker's sticky queue holds the next task until its schedule-to-start timeout, a
 * timer on the skipped clock, which cannot move while that task holds the server's lock.
 */
export async function runProjectWorker(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  activities: object,
  opts: { restartable?: boolean } = {},
): Promise<{ restart(): Promise<void> }> {
  const start = async () => {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(WORKFLOWS_PATH),
      activities,
      ...(opts.restartable ? { maxCachedWorkflows: 0 } : {}),
    });
    return { worker, running: worker.run() };
  };
  let current = await start();
  const stop = async () => {
    if (current.worker.getState() === 'RUNNING') current.worker.shutdown();
    await current.running;
  };
  onRunEnd(stop);
  return {
    restart: async () => {
      assert.ok(opts.restartable, 'only a worker started with { restartable: true } may be restarted');
      await stop();
      current = await start();
    },
  };
}
