/**
 * One workflow run: its parameters, status and the parts of its mutable state, each kept by the
 * module of its concern (as sdk-java's test server keeps state machines apart from the mutable
 * state that drives them):
 *
 * - src/run/history.ts         the history and the one path events take into it (`HistoryWriter`),
 *                              events buffered behind a running workflow task, history waiters
 * - src/run/workflow-tasks.ts  the workflow task: schedule, poll, complete, fail, time out
 * - src/run/commands.ts        a completed task's commands → events; timers
 * - src/run/activities.ts      activities: attempts, heartbeats, retries, timeouts, cancellation
 * - src/run/children.ts        child workflows, signals and cancel requests to external workflows
 * - src/run/queries.ts         queries (on a workflow task or as legacy query tasks)
 * - src/run/describe.ts        DescribeWorkflowExecution and visibility info
 *
 * This class holds the run's own lifecycle (start, signal, cancel request, terminate, timeout,
 * fail, continue-as-new, close) and the durability hooks, and is the only face the store and
 * the RPC handlers see. Every change to a run goes through it; handlers never touch history.
 *
 * Rules that the SDK's Rust core relies on (see temporal-history-contract.md):
 * - event ids are 1, 2, 3... with no gaps; every event carries event_time from the virtual clock;
 * - while a workflow task is started, events caused from outside (signals, timer fires, activity
 *   results, ...) are buffered and written after the task's completion and its command events;
 * - command events are written in command order, right after WorkflowTaskCompleted.
 */
import { randomUUID } from 'node:crypto';
import type { HistorySpans } from './persistence/journal';
import type { RestorePlan, RunDurableState } from './persistence/replay';
import type { TimerHandle } from './clock';
import { notFound } from './errors';
import {
  durationMs,
  EventType,
  long,
  msDuration,
  msTimestamp,
  RetryState,
  TaskQueueKind,
  temporal,
  WorkflowExecutionStatus,
  type Failure,
  type HistoryEvent,
  type Payloads,
} from './proto';
import { decideRetry, normalizeRetryPolicy, retryPolicyMsg } from './retry';
import type { RunParams, Store } from './store';
import { UpdateRegistry, workflowCompletedError, type Update } from './updates';
import { Activities, type Activity } from './run/activities';
import { ChildWorkflows } from './run/children';
import { Commands } from './run/commands';
import { describeRun, runInfo } from './run/describe';
import { RunHistory, type HistoryWriter } from './run/history';
import { Queries, type PendingQuery } from './run/queries';
import { WorkflowTasks } from './run/workflow-tasks';

export type { Activity } from './run/activities';
export type { Child } from './run/children';
export type { PendingQuery, QueryOutcome } from './run/queries';

type PollWftResponse = temporal.api.workflowservice.v1.PollWorkflowTaskQueueResponse.$Properties;
type PollActivityResponse = temporal.api.workflowservice.v1.PollActivityTaskQueueResponse.$Properties;
type Status = temporal.api.enums.v1.WorkflowExecutionStatus;
type ExecutionMsg = temporal.api.common.v1.IWorkflowExecution;

export class Execution implements HistoryWriter {
  readonly runId: string;
  status: Status = WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
  closeTime = 0;
  readonly startTime: number;
  /** Start + first-workflow-task backoff (what visibility calls execution time). */
  readonly executionTime: number;
  memo: temporal.api.common.v1.IMemo;
  searchAttributes: temporal.api.common.v1.ISearchAttributes;
  cancelRequested = false;
  /** Set when this run continued as new / retried: the next run's id. */
  nextRunId = '';
  /** Set during a start delay / retry backoff: no workflow task until it ends. */
  backoffTimer?: TimerHandle;
  /** Replaced in the store by a parked copy (src/dormant.ts); this object must not change any more. */
  parked = false;
  /** Durable mode: where the journal holds this run's history (a parked run reads it back). */
  spans: HistorySpans | undefined;
  private runTimer?: TimerHandle;
  /** Parent run (for children): notified when the last run of this chain closes. */
  readonly parent: RunParams['parent'];

  readonly log: RunHistory;
  readonly tasks = new WorkflowTasks(this);
  readonly commands = new Commands(this);
  readonly acts = new Activities(this);
  readonly kids = new ChildWorkflows(this);
  readonly queries = new Queries(this);
  /** Workflow updates (src/updates.ts). */
  readonly updates = new UpdateRegistry();

  constructor(
    readonly store: Store,
    readonly p: RunParams,
    /** Durable restart: the recorded start time (else now). */
    restoredStartTime?: number,
  ) {
    this.runId = p.runId;
    this.parent = p.parent;
    this.memo = p.memo ?? {};
    this.searchAttributes = p.searchAttributes ?? {};
    this.startTime = restoredStartTime ?? store.clock.now();
    this.executionTime = this.startTime + p.backoffMs;
    this.log = new RunHistory(
      () => store.clock.now(),
      () => this.touched(),
    );
  }

  get namespace(): string {
    return this.p.namespace;
  }
  get workflowId(): string {
    return this.p.workflowId;
  }
  get workflowType(): string {
    return this.p.workflowType;
  }
  get taskQueue(): string {
    return this.p.taskQueue;
  }
  get isOpen(): boolean {
    return this.status === WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
  }
  get execution(): ExecutionMsg {
    return { workflowId: this.workflowId, runId: this.runId };
  }
  get history(): HistoryEvent[] {
    return this.log.events;
  }
  get closeEvent(): HistoryEvent | undefined {
    return this.isOpen ? undefined : this.log.last;
  }
  get activities(): Map<number, Activity> {
    return this.acts.byId;
  }
  get children(): ChildWorkflows['byId'] {
    return this.kids.byId;
  }

  // ---------------------------------------------------------------- history (HistoryWriter)

  append(e: HistoryEvent): HistoryEvent {
    return this.log.append(e);
  }

  /** An outside event: buffered while a workflow task runs, else written and a task scheduled. */
  external(emit: () => void, timerId?: string): void {
    if (!this.isOpen) return;
    if (this.tasks.wft?.state === 'started') {
      // Durable mode persists buffered events too; `emit` must therefore only append events
      // (it runs once against a capture buffer here, and for real when the buffer is flushed).
      this.log.buffer(emit, timerId, Boolean(this.store.journal));
      this.touched();
      return;
    }
    emit();
    this.tasks.schedule();
    this.notify();
  }

  notify(): void {
    this.log.notify();
  }

  /** See RunHistory.waitUntil (history long polls). */
  waitUntil(pred: () => boolean, timeoutMs: number, onCancel: (cb: () => void) => void): Promise<void> {
    return this.log.waitUntil(pred, timeoutMs, onCancel);
  }

  // ---------------------------------------------------------------- start

  /** Writes WorkflowExecutionStarted and schedules the first workflow task (maybe after a backoff). */
  start(signal?: {
    name: string;
    input?: Payloads | null;
    header?: temporal.api.common.v1.IHeader | null;
    identity: string;
  }): void {
    const p = this.p;
    this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      workflowExecutionStartedEventAttributes: {
        workflowType: { name: p.workflowType },
        taskQueue: { name: p.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        input: p.input,
        header: p.header,
        workflowExecutionTimeout: p.executionTimeoutMs ? msDuration(p.executionTimeoutMs) : null,
        workflowRunTimeout: p.runTimeoutMs ? msDuration(p.runTimeoutMs) : null,
        workflowTaskTimeout: msDuration(p.taskTimeoutMs),
        identity: p.identity,
        attempt: p.attempt,
        originalExecutionRunId: this.runId,
        firstExecutionRunId: p.firstExecutionRunId,
        continuedExecutionRunId: p.continuedExecutionRunId,
        initiator: p.initiator,
        continuedFailure: p.continuedFailure,
        lastCompletionResult: p.lastCompletionResult,
        retryPolicy: p.retryPolicy ? retryPolicyMsg(p.retryPolicy) : null,
        firstWorkflowTaskBackoff: p.backoffMs ? msDuration(p.backoffMs) : null,
        workflowExecutionExpirationTime: p.expirationTime ? msTimestamp(p.expirationTime) : null,
        memo: p.memo,
        searchAttributes: p.searchAttributes,
        parentWorkflowNamespace: p.parent?.namespace,
        parentWorkflowExecution: p.parent ? { workflowId: p.parent.workflowId, runId: p.parent.runId } : null,
        parentInitiatedEventId: p.parent ? long(p.parent.initiatedEventId) : null,
        rootWorkflowExecution: p.root ?? null,
        priority: p.priority,
      },
    });
    this.armRunTimeout();
    if (signal) {
      this.append({
        eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        workflowExecutionSignaledEventAttributes: {
          signalName: signal.name,
          input: signal.input,
          header: signal.header,
          identity: signal.identity,
        },
      });
    }
    if (p.backoffMs > 0) {
      // Nothing is in flight during a start delay / retry backoff, so time may skip over it.
      this.armFirstTask(this.store.clock.now() + p.backoffMs);
    } else {
      this.tasks.schedule();
    }
  }

  /** When the run times out (run or execution timeout); Infinity = never. */
  private runDeadline(): number {
    const p = this.p;
    return Math.min(p.runTimeoutMs ? this.startTime + p.runTimeoutMs : Infinity, p.expirationTime || Infinity);
  }

  private armRunTimeout(): void {
    const deadline = this.runDeadline();
    if (Number.isFinite(deadline)) this.runTimer = this.store.clock.scheduleAt(deadline, () => this.timeOut());
  }

  /** Nothing is in flight during a start delay / retry backoff, so time may skip over it. */
  private armFirstTask(atMs: number): void {
    this.backoffTimer = this.store.clock.scheduleAt(atMs, () => {
      this.backoffTimer = undefined;
      this.tasks.schedule();
      this.notify();
    });
    this.store.noteIdle(this);
  }

  // ---------------------------------------------------------------- parking (src/dormant.ts)

  /**
   * True while the run is fully described by its history: nothing in flight or waiting on it (no
   * workflow task, activity, child, update, query, history waiter or buffered event), only its own
   * deadlines ahead (a start delay, timers, the run timeout) and whatever may arrive from outside
   * (a signal, a cancel request); or closed, with its history in the journal. A restart rebuilds
   * such a run from its history alone, and so does waking it (src/dormant.ts).
   */
  get parkable(): boolean {
    if (!this.isOpen) {
      // Closed: parked only where the journal holds its history, once nothing waits on it.
      return (
        !this.parked &&
        this.spans !== undefined &&
        this.queries.isEmpty &&
        !this.log.hasWaiters() &&
        !this.store.journal?.isPending(this)
      );
    }
    return (
      !this.parked &&
      this.tasks.wft === null &&
      this.acts.byId.size === 0 &&
      this.kids.byId.size === 0 &&
      !this.cancelRequested &&
      this.updates.isEmpty &&
      this.queries.isEmpty &&
      !this.log.hasWaiters() &&
      !this.log.hasBuffered() &&
      !this.store.journal?.isPending(this)
    );
  }

  /** The whole history, encoded (the `History` message). */
  encodedHistory(): Uint8Array {
    const fields = this.log.encodedRange(0, this.log.length);
    return fields.length === 1 ? fields[0] : Buffer.concat(fields);
  }

  /**
   * This object is being replaced by a parked copy: its timers stop (the copy keeps the earliest
   * of their times and rebuilds them when it wakes). Returns that time; Infinity = none.
   */
  park(): number {
    this.parked = true;
    if (!this.isOpen) return Infinity; // a closed run has no deadline left
    const wakeAt = Math.min(
      this.backoffTimer ? this.executionTime : Infinity,
      this.runDeadline(),
      this.commands.nextFireAt(),
    );
    this.backoffTimer?.cancel();
    this.backoffTimer = undefined;
    this.runTimer?.cancel();
    this.runTimer = undefined;
    this.commands.cancelTimers();
    return wakeAt;
  }

  // ---------------------------------------------------------------- workflow tasks, updates, activities (src/run/*)

  completeWorkflowTask(
    sid: number,
    attempt: number,
    req: temporal.api.workflowservice.v1.IRespondWorkflowTaskCompletedRequest,
  ): PollActivityResponse[] {
    const out = this.tasks.complete(sid, attempt, req);
    // The run may now wait on its timers or for a signal: a candidate for parking.
    if (this.isOpen) this.store.noteIdle(this);
    return out;
  }
  failWorkflowTask(
    sid: number,
    attempt: number,
    req: temporal.api.workflowservice.v1.IRespondWorkflowTaskFailedRequest,
  ): void {
    this.tasks.fail(sid, attempt, req);
  }
  takeNextWorkflowTaskInline(identity: string): PollWftResponse | null {
    return this.tasks.takeInline(identity);
  }
  takeFirstWorkflowTaskEagerly(identity: string): PollWftResponse | null {
    return this.tasks.takeEagerly(identity);
  }
  clearStickyQueue(queue?: string): void {
    this.tasks.clearStickyQueue(queue);
  }

  /**
   * UpdateWorkflowExecution: the update with this id (deduplicated), admitted now if new. A new
   * update needs a workflow task: scheduled now if none is pending; one that is running leaves
   * it to its completion (see WorkflowTasks.complete).
   */
  admitUpdate(request: temporal.api.update.v1.IRequest): Update {
    const existing = this.updates.get(request.meta?.updateId ?? '');
    if (existing) return existing;
    if (!this.isOpen) throw workflowCompletedError();
    const u = this.updates.admit(request);
    if (!this.tasks.wft) {
      this.tasks.schedule();
      this.notify();
    }
    return u;
  }

  activityForToken(sid: number, attempt: number | null): Activity {
    return this.acts.forToken(sid, attempt);
  }
  activityById(activityId: string): Activity {
    return this.acts.byActivityId(activityId);
  }
  heartbeatActivity(act: Activity, details: Payloads | null | undefined): boolean {
    return this.acts.heartbeat(act, details);
  }
  completeActivity(act: Activity, result: Payloads | null | undefined, identity: string): void {
    this.acts.complete(act, result, identity);
  }
  failActivity(act: Activity, failure: Failure | null | undefined, identity: string, details?: Payloads | null): void {
    this.acts.fail(act, failure, identity, details);
  }
  cancelActivityReported(act: Activity, details: Payloads | null | undefined, identity: string): void {
    this.acts.cancelReported(act, details, identity);
  }

  /** The last run of a child's chain closed (continue-as-new runs are invisible to the parent). */
  onChildClosed(initiatedEventId: number, childRun: Execution): void {
    this.kids.onChildClosed(initiatedEventId, childRun);
  }

  query(q: PendingQuery): void {
    this.queries.route(q);
  }

  describe(): temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse {
    return describeRun(this);
  }

  info(): temporal.api.workflow.v1.IWorkflowExecutionInfo {
    return runInfo(this);
  }

  // ---------------------------------------------------------------- requests from clients, closing

  signal(s: {
    signalName: string;
    input?: Payloads | null;
    header?: temporal.api.common.v1.IHeader | null;
    identity: string;
    requestId?: string;
    externalWorkflowExecution?: ExecutionMsg;
  }): void {
    if (!this.isOpen) throw notFound('Workflow execution already completed');
    this.external(() => {
      this.append({
        eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        workflowExecutionSignaledEventAttributes: {
          signalName: s.signalName,
          input: s.input,
          header: s.header,
          identity: s.identity,
          externalWorkflowExecution: s.externalWorkflowExecution,
          requestId: s.requestId,
        },
      });
    });
  }

  /**
   * Signal-with-start reaching a run still in its start delay (`workflow_start_delay`): the real
   * server dispatches the first workflow task at once and drops the rest of the delay. Only a delay
   * asked for by a start request (not a retry or cron backoff) is cut short.
   */
  endStartDelay(): void {
    if (!this.isOpen || !this.backoffTimer || this.p.initiator !== undefined || this.p.attempt > 1) return;
    this.backoffTimer.cancel();
    this.backoffTimer = undefined;
    this.tasks.schedule();
    this.notify();
  }

  requestCancel(
    reason: string,
    identity: string,
    external?: { initiatedEventId: number; execution: ExecutionMsg },
  ): void {
    if (!this.isOpen) throw notFound('Workflow execution already completed');
    if (this.cancelRequested) return;
    this.cancelRequested = true;
    this.external(() => {
      this.append({
        eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED,
        workflowExecutionCancelRequestedEventAttributes: {
          cause: reason,
          identity,
          externalInitiatedEventId: external ? long(external.initiatedEventId) : null,
          externalWorkflowExecution: external?.execution,
        },
      });
    });
  }

  terminate(reason: string, details: Payloads | null | undefined, identity: string): void {
    if (!this.isOpen) throw notFound('Workflow execution already completed');
    // Written at once, even while a workflow task runs; the task's completion will find the run closed.
    this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
      workflowExecutionTerminatedEventAttributes: { reason, details, identity },
    });
    this.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED);
    this.notify();
  }

  private timeOut(): void {
    if (!this.isOpen) return;
    this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
      workflowExecutionTimedOutEventAttributes: { retryState: RetryState.RETRY_STATE_TIMEOUT },
    });
    this.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TIMED_OUT);
    this.notify();
  }

  failWorkflow(failure: Failure | null, wftCompletedId: number): void {
    const policy = this.p.retryPolicy;
    let retryState: number = RetryState.RETRY_STATE_RETRY_POLICY_NOT_SET;
    let nextRunId = '';
    let delayMs = 0;
    if (policy) {
      const decision = decideRetry({
        policy,
        attempt: this.p.attempt,
        failure: failure ?? { message: 'workflow failed' },
        nowMs: this.store.clock.now(),
        expiresAtMs: this.p.expirationTime,
      });
      if (decision.retry) {
        retryState = RetryState.RETRY_STATE_IN_PROGRESS;
        nextRunId = randomUUID();
        delayMs = decision.delayMs;
      } else {
        retryState = decision.state;
      }
    }
    this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
      workflowExecutionFailedEventAttributes: {
        failure,
        retryState,
        workflowTaskCompletedEventId: long(wftCompletedId),
        newExecutionRunId: nextRunId || null,
      },
    });
    if (nextRunId) {
      this.nextRunId = nextRunId;
      this.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED);
      this.store.startNextRun(this, {
        runId: nextRunId,
        attempt: this.p.attempt + 1,
        backoffMs: delayMs,
        continuedFailure: failure,
        initiator: temporal.api.enums.v1.ContinueAsNewInitiator.CONTINUE_AS_NEW_INITIATOR_RETRY,
      });
      return;
    }
    this.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED);
  }

  continueAsNew(
    a: temporal.api.command.v1.IContinueAsNewWorkflowExecutionCommandAttributes,
    wftCompletedId: number,
  ): void {
    const nextRunId = randomUUID();
    const taskQueue = a.taskQueue?.name || this.taskQueue;
    const runTimeoutMs = durationMs(a.workflowRunTimeout) || this.p.runTimeoutMs;
    const taskTimeoutMs = durationMs(a.workflowTaskTimeout) || this.p.taskTimeoutMs;
    const backoffMs = durationMs(a.backoffStartInterval);
    this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
      workflowExecutionContinuedAsNewEventAttributes: {
        newExecutionRunId: nextRunId,
        workflowType: a.workflowType?.name ? a.workflowType : { name: this.workflowType },
        taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        input: a.input,
        workflowRunTimeout: runTimeoutMs ? msDuration(runTimeoutMs) : null,
        workflowTaskTimeout: msDuration(taskTimeoutMs),
        workflowTaskCompletedEventId: long(wftCompletedId),
        backoffStartInterval: a.backoffStartInterval,
        initiator: a.initiator,
        failure: a.failure,
        lastCompletionResult: a.lastCompletionResult,
        header: a.header,
        memo: a.memo,
        searchAttributes: a.searchAttributes,
      },
    });
    this.nextRunId = nextRunId;
    this.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW);
    this.store.startNextRun(this, {
      runId: nextRunId,
      workflowType: a.workflowType?.name || this.workflowType,
      taskQueue,
      input: a.input,
      header: a.header,
      memo: a.memo ?? this.memo,
      searchAttributes: a.searchAttributes ?? this.searchAttributes,
      runTimeoutMs,
      taskTimeoutMs,
      backoffMs,
      lastCompletionResult: a.lastCompletionResult,
      initiator: a.initiator ?? temporal.api.enums.v1.ContinueAsNewInitiator.CONTINUE_AS_NEW_INITIATOR_WORKFLOW,
      retryPolicy: a.retryPolicy ? normalizeRetryPolicy(a.retryPolicy) : this.p.retryPolicy,
      attempt: 1,
    });
  }

  /** Closing: stop every timer, release every time-skipping lock, answer waiters, tell the parent. */
  close(status: Status): void {
    this.status = status;
    this.closeTime = this.store.clock.now();
    this.runTimer?.cancel();
    this.backoffTimer?.cancel();
    this.backoffTimer = undefined;
    this.commands.cancelTimers();
    this.acts.onRunClosed();
    this.log.clearBuffered();
    this.tasks.onRunClosed();
    this.updates.abort();
    this.queries.dispatchLegacy();
    this.store.onRunClosed(this);
  }

  // ---------------------------------------------------------------- durability (src/persistence)

  /** Durable mode: the journal writes this run's new events and state at its next group commit. */
  touched(): void {
    if (this.parked)
      this.store.logger.error({ runId: this.runId }, 'a parked run was changed through a stale reference');
    this.store.journal?.touch(this);
  }

  /** What history alone cannot tell after a restart: activity attempts and buffered events. */
  durableState(): RunDurableState {
    return { activities: this.acts.durableStates(), buffered: this.log.bufferedEvents() };
  }

  /**
   * Rebuild this run after a restart from its recorded history and the plan replayed from it:
   * timers re-armed at their original time (at once if past due), activities re-queued or kept
   * started with their timeouts, the workflow task re-dispatched or kept started until its
   * timeout, buffered events buffered again. Writes nothing to history.
   */
  restoreState(events: HistoryEvent[], plan: RestorePlan): void {
    this.history.push(...events);
    this.status = plan.status as Status;
    this.closeTime = plan.closeTime;
    this.nextRunId = plan.nextRunId;
    this.memo = plan.memo;
    this.searchAttributes = plan.searchAttributes;
    this.cancelRequested = plan.cancelRequested;
    this.tasks.lastCompletedStartedId = plan.lastCompletedStartedId;
    this.tasks.nextAttempt = plan.nextWftAttempt;
    for (const c of plan.children) this.kids.byId.set(c.initiatedEventId, c);
    this.updates.restore(events);
    if (!this.isOpen) {
      this.updates.abort();
      return;
    }
    this.armRunTimeout();
    if (plan.firstTaskPending) this.armFirstTask(this.executionTime);
    for (const t of plan.timers) this.commands.armTimer(t.timerId, t.startedEventId, t.fireAt);
    this.acts.restore(plan.activities);
    this.log.restoreBuffered(plan.buffered);
    if (plan.wft) {
      this.tasks.restore(plan.wft);
    } else if (!plan.firstTaskPending && this.log.hasBuffered()) {
      this.log.flush();
      this.tasks.schedule();
    }
  }
}
