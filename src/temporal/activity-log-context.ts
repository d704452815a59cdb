/**
 * Every log line an activity writes (through any service logger) carries the workflow id, run id
 * and activity type of the execution, so one money movement's story can be followed from the
 * workflow history in the Temporal UI to the logs and back (docs/operations.md "Metrics and logs").
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { withLogContext } from '../lib/log-context';

export const activityLogContext: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute: (input, next) => {
      const { workflowExecution, activityType } = ctx.info;
      return withLogContext(
        { workflowId: workflowExecution?.workflowId, runId: workflowExecution?.runId, activityType },
        () => next(input),
      );
    },
  },
});
