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
}

export async function createPixflowWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    workflowsPath: require.resolve('../../workflows'),
    activities: deps.activities,
    interceptors: { activity: [activityLogContext] },
  });
}
