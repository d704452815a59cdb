/**
 * What a run looks like from outside: DescribeWorkflowExecution (pending activities, children,
 * workflow task) and the execution info that visibility lists. Reads state, changes nothing.
 */
import { long, msDuration, msTimestamp, TaskQueueKind, temporal } from '../proto';
import type { Execution } from '../execution';

export function describeRun(run: Execution): temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse {
  const pendingActivities: temporal.api.workflow.v1.IPendingActivityInfo[] = [];
  for (const act of run.acts.byId.values()) {
    pendingActivities.push({
      activityId: act.activityId,
      activityType: { name: act.activityType },
      state:
        act.cancelRequestedEventId > 0
          ? temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED
          : act.state === 'started'
            ? temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
            : temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED,
      heartbeatDetails: act.heartbeatDetails,
      lastHeartbeatTime: act.lastHeartbeatTime ? msTimestamp(act.lastHeartbeatTime) : null,
      lastStartedTime: act.startedTime ? msTimestamp(act.startedTime) : null,
      attempt: act.attempt,
      maximumAttempts: act.policy.maximumAttempts,
      scheduledTime: msTimestamp(act.attemptScheduledTime),
      lastFailure: act.lastFailure,
      lastWorkerIdentity: act.identity,
    });
  }
  const pendingChildren: temporal.api.workflow.v1.IPendingChildExecutionInfo[] = [...run.kids.byId.values()].map(
    (c) => ({
      workflowId: c.workflowId,
      runId: c.runId,
      workflowTypeName: c.workflowType,
      initiatedId: long(c.initiatedEventId),
      parentClosePolicy: c.parentClosePolicy,
    }),
  );
  const wft = run.tasks.wft;
  return {
    executionConfig: {
      taskQueue: { name: run.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      workflowExecutionTimeout: run.p.executionTimeoutMs ? msDuration(run.p.executionTimeoutMs) : null,
      workflowRunTimeout: run.p.runTimeoutMs ? msDuration(run.p.runTimeoutMs) : null,
      defaultWorkflowTaskTimeout: msDuration(run.p.taskTimeoutMs),
    },
    workflowExecutionInfo: runInfo(run),
    pendingActivities,
    pendingChildren,
    pendingWorkflowTask: wft
      ? {
          state:
            wft.state === 'started'
              ? temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED
              : temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED,
          scheduledTime: msTimestamp(wft.scheduledTime),
          attempt: wft.attempt,
        }
      : null,
  };
}

export function runInfo(run: Execution): temporal.api.workflow.v1.IWorkflowExecutionInfo {
  const historyLength = run.log.length;
  return {
    execution: run.execution,
    type: { name: run.workflowType },
    startTime: msTimestamp(run.startTime),
    closeTime: run.closeTime ? msTimestamp(run.closeTime) : null,
    status: run.status,
    historyLength: long(historyLength),
    parentNamespaceId: run.parent?.namespace,
    parentExecution: run.parent ? { workflowId: run.parent.workflowId, runId: run.parent.runId } : null,
    rootExecution: run.p.root ?? run.execution,
    executionTime: msTimestamp(run.executionTime),
    memo: run.memo,
    searchAttributes: run.searchAttributes,
    taskQueue: run.taskQueue,
    firstRunId: run.p.firstExecutionRunId,
    executionDuration: run.closeTime ? msDuration(run.closeTime - run.startTime) : null,
    stateTransitionCount: long(historyLength),
  };
}
