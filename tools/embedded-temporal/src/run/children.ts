/**
 * Child workflows started by a run (StartChildWorkflowExecution and the child's events written
 * back to the parent when the child's chain closes) and the external workflows a run signals or
 * asks to cancel. The child runs themselves are created by the store (src/store.ts).
 */
import { EventType, long, msDuration, TaskQueueKind, temporal, toNum } from '../proto';
import type { Execution } from '../execution';

export interface Child {
  initiatedEventId: number;
  namespace: string;
  workflowId: string;
  workflowType: string;
  runId: string;
  startedEventId: number;
  parentClosePolicy: number;
}

export class ChildWorkflows {
  /** Open children by their StartChildWorkflowExecutionInitiated event id. */
  readonly byId = new Map<number, Child>();

  constructor(private readonly run: Execution) {}

  startChild(a: temporal.api.command.v1.IStartChildWorkflowExecutionCommandAttributes, wftCompletedId: number): void {
    const run = this.run;
    const namespace = a.namespace || run.namespace;
    const ev = run.append({
      eventType: EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
      startChildWorkflowExecutionInitiatedEventAttributes: {
        namespace,
        workflowId: a.workflowId,
        workflowType: a.workflowType,
        taskQueue: { name: a.taskQueue?.name || run.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        input: a.input,
        workflowExecutionTimeout: a.workflowExecutionTimeout,
        workflowRunTimeout: a.workflowRunTimeout,
        workflowTaskTimeout: a.workflowTaskTimeout ?? msDuration(run.p.taskTimeoutMs),
        parentClosePolicy: a.parentClosePolicy,
        control: a.control,
        workflowTaskCompletedEventId: long(wftCompletedId),
        workflowIdReusePolicy: a.workflowIdReusePolicy,
        retryPolicy: a.retryPolicy,
        cronSchedule: a.cronSchedule,
        header: a.header,
        memo: a.memo,
        searchAttributes: a.searchAttributes,
        priority: a.priority,
      },
    });
    const initiatedEventId = toNum(ev.eventId);
    const child: Child = {
      initiatedEventId,
      namespace,
      workflowId: a.workflowId ?? '',
      workflowType: a.workflowType?.name ?? '',
      runId: '',
      startedEventId: 0,
      parentClosePolicy: a.parentClosePolicy ?? 0,
    };
    const started = run.store.startChildRun(run, initiatedEventId, a);
    if (!started.ok) {
      run.external(() => {
        run.append({
          eventType: EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED,
          startChildWorkflowExecutionFailedEventAttributes: {
            namespace,
            workflowId: child.workflowId,
            workflowType: { name: child.workflowType },
            cause:
              temporal.api.enums.v1.StartChildWorkflowExecutionFailedCause
                .START_CHILD_WORKFLOW_EXECUTION_FAILED_CAUSE_WORKFLOW_ALREADY_EXISTS,
            control: a.control,
            initiatedEventId: long(initiatedEventId),
            workflowTaskCompletedEventId: long(wftCompletedId),
          },
        });
      });
      return;
    }
    child.runId = started.runId;
    this.byId.set(initiatedEventId, child);
    run.external(() => {
      const sev = run.append({
        eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
        childWorkflowExecutionStartedEventAttributes: {
          namespace,
          initiatedEventId: long(initiatedEventId),
          workflowExecution: { workflowId: child.workflowId, runId: child.runId },
          workflowType: { name: child.workflowType },
          header: a.header,
        },
      });
      child.startedEventId = toNum(sev.eventId);
    });
  }

  /** The last run of a child's chain closed (continue-as-new runs are invisible to the parent). */
  onChildClosed(initiatedEventId: number, childRun: Execution): void {
    const run = this.run;
    const child = this.byId.get(initiatedEventId);
    if (!child || !run.isOpen) return;
    this.byId.delete(initiatedEventId);
    const close = childRun.closeEvent;
    if (!close) return;
    run.external(() => {
      const common = {
        namespace: child.namespace,
        workflowExecution: { workflowId: child.workflowId, runId: childRun.runId },
        workflowType: { name: child.workflowType },
        initiatedEventId: long(initiatedEventId),
        startedEventId: long(child.startedEventId),
      };
      switch (close.eventType) {
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
          run.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
            childWorkflowExecutionCompletedEventAttributes: {
              ...common,
              result: close.workflowExecutionCompletedEventAttributes?.result,
            },
          });
          return;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
          run.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
            childWorkflowExecutionFailedEventAttributes: {
              ...common,
              failure: close.workflowExecutionFailedEventAttributes?.failure,
              retryState: close.workflowExecutionFailedEventAttributes?.retryState,
            },
          });
          return;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
          run.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED,
            childWorkflowExecutionCanceledEventAttributes: {
              ...common,
              details: close.workflowExecutionCanceledEventAttributes?.details,
            },
          });
          return;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
          run.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT,
            childWorkflowExecutionTimedOutEventAttributes: {
              ...common,
              retryState: close.workflowExecutionTimedOutEventAttributes?.retryState,
            },
          });
          return;
        default:
          run.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED,
            childWorkflowExecutionTerminatedEventAttributes: common,
          });
      }
    });
  }

  signalExternal(
    a: temporal.api.command.v1.ISignalExternalWorkflowExecutionCommandAttributes,
    wftCompletedId: number,
  ): void {
    const run = this.run;
    const namespace = a.namespace || run.namespace;
    const ev = run.append({
      eventType: EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
      signalExternalWorkflowExecutionInitiatedEventAttributes: {
        namespace,
        workflowExecution: a.execution,
        signalName: a.signalName,
        input: a.input,
        control: a.control,
        childWorkflowOnly: a.childWorkflowOnly,
        header: a.header,
        workflowTaskCompletedEventId: long(wftCompletedId),
      },
    });
    const initiated = long(toNum(ev.eventId));
    const target = run.store.findRun(namespace, a.execution?.workflowId ?? '', a.execution?.runId ?? '');
    if (target && target.isOpen) {
      target.signal({
        signalName: a.signalName ?? '',
        input: a.input,
        header: a.header,
        identity: '',
        externalWorkflowExecution: run.execution,
      });
      run.external(() => {
        run.append({
          eventType: EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED,
          externalWorkflowExecutionSignaledEventAttributes: {
            initiatedEventId: initiated,
            namespace,
            workflowExecution: target.execution,
            control: a.control,
          },
        });
      });
    } else {
      run.external(() => {
        run.append({
          eventType: EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED,
          signalExternalWorkflowExecutionFailedEventAttributes: {
            cause:
              temporal.api.enums.v1.SignalExternalWorkflowExecutionFailedCause
                .SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED_CAUSE_EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND,
            workflowTaskCompletedEventId: long(wftCompletedId),
            namespace,
            workflowExecution: a.execution,
            initiatedEventId: initiated,
            control: a.control,
          },
        });
      });
    }
  }

  cancelExternal(
    a: temporal.api.command.v1.IRequestCancelExternalWorkflowExecutionCommandAttributes,
    wftCompletedId: number,
  ): void {
    const run = this.run;
    const namespace = a.namespace || run.namespace;
    const execution = { workflowId: a.workflowId, runId: a.runId };
    const ev = run.append({
      eventType: EventType.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
      requestCancelExternalWorkflowExecutionInitiatedEventAttributes: {
        namespace,
        workflowExecution: execution,
        control: a.control,
        childWorkflowOnly: a.childWorkflowOnly,
        reason: a.reason,
        workflowTaskCompletedEventId: long(wftCompletedId),
      },
    });
    const initiated = toNum(ev.eventId);
    const target = run.store.findRun(namespace, a.workflowId ?? '', a.runId ?? '');
    if (target && target.isOpen) {
      target.requestCancel(a.reason ?? '', '', { initiatedEventId: initiated, execution: run.execution });
      run.external(() => {
        run.append({
          eventType: EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED,
          externalWorkflowExecutionCancelRequestedEventAttributes: {
            initiatedEventId: long(initiated),
            namespace,
            workflowExecution: target.execution,
          },
        });
      });
    } else {
      run.external(() => {
        run.append({
          eventType: EventType.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED,
          requestCancelExternalWorkflowExecutionFailedEventAttributes: {
            cause:
              temporal.api.enums.v1.CancelExternalWorkflowExecutionFailedCause
                .CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED_CAUSE_EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND,
            workflowTaskCompletedEventId: long(wftCompletedId),
            namespace,
            workflowExecution: execution,
            initiatedEventId: long(initiated),
            control: a.control,
          },
        });
      });
    }
  }
}
