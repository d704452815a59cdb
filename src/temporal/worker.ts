/**
 * The pixflow worker: every workflow in workflows/ and every activity from activities/, on one task
 * queue. Workflow code is bundled by the SDK at start (webpack); activities are plain functions
 * over our services.
 */
import { Worker, type NativeConnection } from '@temporalio/worker';
import type { Logger } from '../lib/logger';
import { workerTracing } from '../observability/tracing';
import { activityLogContext } from './activity-log-context';
import { bundleWorkflowsInChild } from './workflow-bundle';
import { WORKFLOW_INTERCEPTOR_MODULES } from './workflow-interceptor-modules';
import { errorMessage } from '../lib/error-message';

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  logger: Logger;
  /** Bound on the sticky cache of workflow runs (at least 2). */
  maxCachedWorkflows?: number;
  /** Bundle the workflow code in a child process (keeps webpack's memory out of this one). */
  bundleInChild?: boolean;
  /** Told as bundling and then the worker's creation begin (src/process/progress.ts). */
  progress?: (step: string) => void;
}

export async function createPixflowWorker(deps: WorkerDeps): Promise<Worker> {
  // Tracing (docs/operations.md "Tracing"): the activity interceptor, the workflow spans' sink and
  // the workflow interceptor modules when it is on; the sink alone (a no-op) when off, and a bundle
  // without the modules (they would add the OpenTelemetry SDK, about 9 MB resident, to every worker).
  const tracing = workerTracing();
  const interceptorModules = tracing.tracedWorkflows ? [...WORKFLOW_INTERCEPTOR_MODULES] : [];
  let code: string | undefined;
  deps.progress?.('workflows: bundling the workflow code');
  if (deps.bundleInChild) {
    code = await bundleWorkflowsInChild(interceptorModules).catch((err: unknown) => {
      deps.logger.warn({ err: errorMessage(err) }, 'workflow bundle child failed; bundling in-process');
      return undefined;
    });
  }
  deps.progress?.(`worker: polling task queue ${deps.taskQueue}`);
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    ...(code !== undefined ? { workflowBundle: { code } } : { workflowsPath: require.resolve('../../workflows') }),
    activities: deps.activities,
    interceptors: {
      activity: [...tracing.activityInterceptors, activityLogContext],
      // When the worker bundles itself (the child failed); the child's bundle has them already.
      ...(code === undefined ? { workflowModules: interceptorModules } : {}),
    },
    sinks: tracing.sinks,
    // The SDK's default scales with the heap (thousands of runs): every open charge workflow would
    // stay resident. A bounded cache keeps the service's memory flat as open charges grow; an
    // evicted run replays its (short) history on its next task.
    ...(deps.maxCachedWorkflows !== undefined
      ? {
          maxCachedWorkflows: deps.maxCachedWorkflows,
          maxConcurrentWorkflowTaskExecutions: Math.max(2, Math.min(40, deps.maxCachedWorkflows)),
        }
      : {}),
  });
}
