/**
 * Rebuilding a run after a restart, as the real Temporal server does: the run's parameters come
 * from its WorkflowExecutionStarted event, and its mutable state (workflow task, timers,
 * activities, children, close status, memo and search attributes) from replaying its history.
 * Only what history cannot tell is kept beside it (`RunDurableState`): activity attempts (retries
 * write no events) and events buffered while a workflow task was running.
 */
import type { Activity, Child } from '../execution';
import {
  durationMs,
  EventType,
  temporal,
  timestampMs,
  toNum,
  WorkflowExecutionStatus,
  type Failure,
  type HistoryEvent,
  type Payloads,
} from '../proto';
import { normalizeRetryPolicy } from '../retry';
import type { RunParams } from '../store';

export interface ActivityState {
  sid: number;
  attempt: number;
  state: 'scheduled' | 'started' | 'backoff';
  firstScheduledTime: number;
  attemptScheduledTime: number;
  startedTime: number;
  identity: string;
  heartbeatDetails: Payloads | null;
  lastHeartbeatTime: number;
  lastFailure: Failure | null;
  cancelRequestedEventId: number;
  /** Backoff only: when the next attempt is queued. */
  retryAt: number;
}

export interface RunDurableState {
  activities: ActivityState[];
  /** Per buffered item, the events it will write (placeholder ids, see Execution.capture). */
  buffered: HistoryEvent[][];
}

export interface RestorePlan {
  status: number;
  closeTime: number;
  nextRunId: string;
  memo: temporal.api.common.v1.IMemo;
  searchAttributes: temporal.api.common.v1.ISearchAttributes;
  cancelRequested: boolean;
  lastCompletedStartedId: number;
  nextWftAttempt: number;
  wft: {
    state: 'scheduled' | 'started';
    scheduledEventId: number;
    startedEventId: number;
    attempt: number;
    scheduledTime: number;
    startedTime: number;
  } | null;
  /** The first workflow task waits for a start delay / backoff that has not elapsed yet. */
  firstTaskPending: boolean;
  timers: { timerId: string; startedEventId: number; fireAt: number }[];
  activities: Activity[];
  children: Child[];
  buffered: HistoryEvent[][];
}

/** What the journal records for a run beside its events. */
export interface RunRecord {
  namespace: string;
  workflowId: string;
  runId: string;
  requestId: string;
}

type Started = temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes;

/** The run's creation parameters, read back from its WorkflowExecutionStarted event. */
export function runParamsFromStarted(rec: RunRecord, started: HistoryEvent): RunParams {
  const a: Started = started.workflowExecutionStartedEventAttributes ?? {};
  const parentExec = a.parentWorkflowExecution;
  return {
    namespace: rec.namespace,
    workflowId: rec.workflowId,
    runId: rec.runId,
    requestId: rec.requestId,
    workflowType: a.workflowType?.name ?? '',
    taskQueue: a.taskQueue?.name ?? '',
    input: a.input,
    header: a.header,
    memo: a.memo,
    searchAttributes: a.searchAttributes,
    executionTimeoutMs: durationMs(a.workflowExecutionTimeout),
    runTimeoutMs: durationMs(a.workflowRunTimeout),
    taskTimeoutMs: durationMs(a.workflowTaskTimeout) || 10_000,
    identity: a.identity ?? '',
    retryPolicy: a.retryPolicy ? normalizeRetryPolicy(a.retryPolicy) : undefined,
    attempt: a.attempt || 1,
    firstExecutionRunId: a.firstExecutionRunId || rec.runId,
    continuedExecutionRunId: a.continuedExecutionRunId || undefined,
    // 0 is UNSPECIFIED (a decoded message reads it as 0, not absent): a run its client started.
    initiator: a.initiator || undefined,
    continuedFailure: a.continuedFailure,
    lastCompletionResult: a.lastCompletionResult,
    backoffMs: durationMs(a.firstWorkflowTaskBackoff),
    expirationTime: timestampMs(a.workflowExecutionExpirationTime),
    parent:
      parentExec?.workflowId && parentExec.runId
        ? {
            namespace: a.parentWorkflowNamespace ?? rec.namespace,
            workflowId: parentExec.workflowId,
            runId: parentExec.runId,
            initiatedEventId: toNum(a.parentInitiatedEventId),
          }
        : undefined,
    root: a.rootWorkflowExecution ?? undefined,
    priority: a.priority,
  };
}

const closeStatus = new Map<number, number>([
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TIMED_OUT],
  [
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
    WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW,
  ],
]);

const activityCloses = new Set<number>([
  EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
  EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
]);

const childCloses = new Set<number>([
  EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED,
]);

/** The attributes object of an event, whichever kind it is. */
function attrsOf(e: HistoryEvent): Record<string, unknown> {
  for (const [k, v] of Object.entries(e)) {
    if (k.endsWith('EventAttributes') && v && typeof v === 'object') return v as Record<string, unknown>;
  }
  return {};
}

export function replay(p: RunParams, events: HistoryEvent[], durable: RunDurableState | undefined): RestorePlan {
  const buffered = durable?.buffered ?? [];
  const plan: RestorePlan = {
    status: WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING,
    closeTime: 0,
    nextRunId: '',
    memo: p.memo ?? {},
    searchAttributes: p.searchAttributes ?? {},
    cancelRequested: false,
    lastCompletedStartedId: 0,
    nextWftAttempt: 1,
    wft: null,
    firstTaskPending: false,
    timers: [],
    activities: [],
    children: [],
    buffered,
  };
  let sawWftScheduled = false;
  const timers = new Map<string, { timerId: string; startedEventId: number; fireAt: number }>();
  const scheduled = new Map<number, HistoryEvent>();
  const cancelRequestedIds = new Map<number, number>();
  const children = new Map<number, Child>();
  // Buffered events count as happened for what they close (a fired timer is not re-armed, ...).
  const all = events.concat(...buffered);
  for (const e of all) {
    const t = e.eventType ?? 0;
    const id = toNum(e.eventId);
    const time = timestampMs(e.eventTime);
    const a = attrsOf(e);
    switch (t) {
      case EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
        sawWftScheduled = true;
        plan.wft = {
          state: 'scheduled',
          scheduledEventId: id,
          startedEventId: 0,
          attempt: Number(a.attempt) || 1,
          scheduledTime: time,
          startedTime: 0,
        };
        plan.nextWftAttempt = plan.wft.attempt;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        if (plan.wft) {
          plan.wft.state = 'started';
          plan.wft.startedEventId = id;
          plan.wft.startedTime = time;
        }
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        plan.lastCompletedStartedId = toNum(a.startedEventId) || plan.wft?.startedEventId || 0;
        plan.wft = null;
        plan.nextWftAttempt = 1;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
      case EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
        plan.nextWftAttempt = (plan.wft?.attempt ?? 0) + 1;
        plan.wft = null;
        break;
      case EventType.EVENT_TYPE_TIMER_STARTED: {
        const timerId = String(a.timerId ?? '');
        timers.set(timerId, {
          timerId,
          startedEventId: id,
          fireAt: time + durationMs(e.timerStartedEventAttributes?.startToFireTimeout),
        });
        break;
      }
      case EventType.EVENT_TYPE_TIMER_FIRED:
      case EventType.EVENT_TYPE_TIMER_CANCELED:
        timers.delete(String(a.timerId ?? ''));
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        scheduled.set(id, e);
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED:
        cancelRequestedIds.set(toNum(a.scheduledEventId), id);
        break;
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: {
        const c = e.startChildWorkflowExecutionInitiatedEventAttributes ?? {};
        children.set(id, {
          initiatedEventId: id,
          namespace: c.namespace || p.namespace,
          workflowId: c.workflowId ?? '',
          workflowType: c.workflowType?.name ?? '',
          runId: '',
          startedEventId: 0,
          parentClosePolicy: c.parentClosePolicy ?? 0,
        });
        break;
      }
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED: {
        const child = children.get(toNum(a.initiatedEventId));
        if (child) {
          child.runId = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.runId ?? '';
          child.startedEventId = id;
        }
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
        plan.cancelRequested = true;
        break;
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const sa = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes ?? {};
        plan.searchAttributes = {
          indexedFields: { ...(plan.searchAttributes.indexedFields ?? {}), ...(sa.indexedFields ?? {}) },
        };
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED: {
        const memo = e.workflowPropertiesModifiedEventAttributes?.upsertedMemo ?? {};
        plan.memo = { fields: { ...(plan.memo.fields ?? {}), ...(memo.fields ?? {}) } };
        break;
      }
      default:
        if (activityCloses.has(t)) scheduled.delete(toNum(a.scheduledEventId));
        else if (childCloses.has(t)) children.delete(toNum(a.initiatedEventId));
        else if (closeStatus.has(t)) {
          plan.status = closeStatus.get(t) ?? plan.status;
          plan.closeTime = time;
          plan.nextRunId = typeof a.newExecutionRunId === 'string' ? a.newExecutionRunId : '';
          plan.wft = null;
        }
    }
  }
  plan.firstTaskPending =
    !sawWftScheduled && p.backoffMs > 0 && plan.status === WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
  plan.timers = [...timers.values()];
  plan.children = [...children.values()];
  const states = new Map((durable?.activities ?? []).map((s) => [s.sid, s]));
  for (const [sid, ev] of scheduled) {
    const a = ev.activityTaskScheduledEventAttributes ?? {};
    const st = states.get(sid);
    const schedTime = timestampMs(ev.eventTime);
    plan.activities.push({
      scheduledEventId: sid,
      activityId: a.activityId ?? '',
      activityType: a.activityType?.name ?? '',
      taskQueue: a.taskQueue?.name ?? p.taskQueue,
      input: a.input,
      header: a.header,
      scheduleToCloseMs: durationMs(a.scheduleToCloseTimeout),
      scheduleToStartMs: durationMs(a.scheduleToStartTimeout),
      startToCloseMs: durationMs(a.startToCloseTimeout),
      heartbeatMs: durationMs(a.heartbeatTimeout),
      policy: normalizeRetryPolicy(a.retryPolicy),
      attempt: st?.attempt ?? 1,
      state: st?.state ?? 'scheduled',
      firstScheduledTime: st?.firstScheduledTime ?? schedTime,
      attemptScheduledTime: st?.attemptScheduledTime ?? schedTime,
      startedTime: st?.startedTime ?? 0,
      identity: st?.identity ?? '',
      heartbeatDetails: st?.heartbeatDetails ?? null,
      lastHeartbeatTime: st?.lastHeartbeatTime ?? 0,
      lastFailure: st?.lastFailure ?? null,
      cancelRequestedEventId: Math.max(st?.cancelRequestedEventId ?? 0, cancelRequestedIds.get(sid) ?? 0),
      attemptTimers: [],
      locked: false,
      priority: a.priority,
      retryAt: st?.retryAt || undefined,
    });
  }
  return plan;
}
