/**
 * The pixflow worker: every workflow in workflows/ and every activity from activities/, on one task
 * queue. Workflow code is bundled by the SDK at start (webpack); activities are plain functions
 * over our services.
 */
import { Worker, type NativeConnection } from '@temporalio/worker';
import type { Logger } from '../lib/logger';
import { activityLogContext } from './activity-log-context';

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  logger: Logger;
  /** Bound on the sticky cache of workflow runs (at least 2). */
  maxCachedWorkflows?: number;
}

export async function createPixflowWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    workflowsPath: require.resolve('../../workflows'),
    activities: deps.activities,
    interceptors: { activity: [activityLogContext] },
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
