/**
 * One workflow run's mutable state: its history, the pending workflow task, activities, timers,
 * children, buffered events and queries. Every change to a run goes through this class; RPC
 * handlers never touch history directly.
 *
 * Rules that the SDK's Rust core relies on (see temporal-history-contract.md):
 * - event ids are 1, 2, 3... with no gaps; every event carries event_time from the virtual clock;
 * - while a workflow task is started, events caused from outside (signals, timer fires, activity
 *   results, ...) are buffered and written after the task's completion and its command events;
 * - command events are written in command order, right after WorkflowTaskCompleted.
 */
import { randomUUID } from 'node:crypto';
import type { ActivityState, RestorePlan, RunDurableState } from './persistence/replay';
import type { TimerHandle } from './clock';
import { failedPrecondition, invalidArgument, notFound } from './errors';
import {
  CommandType,
  durationMs,
  EventType,
  long,
  msDuration,
  msTimestamp,
  RetryState,
  TaskQueueKind,
  temporal,
  TimeoutType,
  toNum,
  WorkflowExecutionStatus,
  type Failure,
  type HistoryEvent,
  type Payloads,
} from './proto';
import { decideRetry, normalizeRetryPolicy, retryPolicyMsg, type RetryPolicy } from './retry';
import type { RunParams, Store } from './store';
import { encodeToken } from './tokens';
import { UpdateRegistry, workflowCompletedError, type Update } from './updates';

type PollWftResponse = temporal.api.workflowservice.v1.PollWorkflowTaskQueueResponse.$Properties;
type PollActivityResponse = temporal.api.workflowservice.v1.PollActivityTaskQueueResponse.$Properties;
type Command = temporal.api.command.v1.ICommand;
type WorkflowQuery = temporal.api.query.v1.IWorkflowQuery;
type Status = temporal.api.enums.v1.WorkflowExecutionStatus;
type CompleteWftRequest = temporal.api.workflowservice.v1.IRespondWorkflowTaskCompletedRequest;
type ExecutionMsg = temporal.api.common.v1.IWorkflowExecution;

export interface QueryOutcome {
  answer?: Payloads | null;
  errorMessage?: string;
  failure?: Failure | null;
}

export interface PendingQuery {
  id: string;
  query: WorkflowQuery;
  done: boolean;
  /** Handed to a worker as a legacy query task (at most once). */
  taken?: boolean;
  resolve(outcome: QueryOutcome): void;
}

interface WorkflowTask {
  state: 'scheduled' | 'started';
  scheduledEventId: number;
  startedEventId: number;
  attempt: number;
  queueKey: string;
  scheduledTime: number;
  queries: PendingQuery[];
  timer?: TimerHandle;
  /** Holds one time-skipping lock from scheduling until it ends; released exactly once. */
  locked: boolean;
}

export interface Activity {
  scheduledEventId: number;
  activityId: string;
  activityType: string;
  taskQueue: string;
  input?: Payloads | null;
  header?: temporal.api.common.v1.IHeader | null;
  scheduleToCloseMs: number;
  scheduleToStartMs: number;
  startToCloseMs: number;
  heartbeatMs: number;
  policy: RetryPolicy;
  attempt: number;
  state: 'scheduled' | 'started' | 'backoff';
  firstScheduledTime: number;
  attemptScheduledTime: number;
  startedTime: number;
  identity: string;
  heartbeatDetails?: Payloads | null;
  lastHeartbeatTime: number;
  lastFailure?: Failure | null;
  cancelRequestedEventId: number;
  attemptTimers: TimerHandle[];
  heartbeatTimer?: TimerHandle;
  closeTimer?: TimerHandle;
  locked: boolean;
  priority?: temporal.api.common.v1.IPriority | null;
  /** While in retry backoff: when the next attempt is queued (kept for durable restarts). */
  retryAt?: number;
}

export interface Child {
  initiatedEventId: number;
  namespace: string;
  workflowId: string;
  workflowType: string;
  runId: string;
  startedEventId: number;
  parentClosePolicy: number;
}

interface Buffered {
  emit: () => void;
  /** Lets CancelTimer drop a fire that was buffered but not yet written. */
  timerId?: string;
  /** Durable mode: the events `emit` will write, captured when buffered (see src/persistence). */
  events?: HistoryEvent[];
}

const TEN_YEARS = 10 * 365 * 24 * 3600 * 1000;
/** Placeholder event ids of captured (buffered, not yet written) events; far above any real id. */
const CAPTURE_ID_BASE = 2 ** 40;

const closingCommands = new Set<number>([
  CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION,
]);

export class Execution {
  readonly runId: string;
  readonly history: HistoryEvent[] = [];
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
  wft: WorkflowTask | null = null;
  private nextWftAttempt = 1;
  private buffered: Buffered[] = [];
  /** Durable mode: set while a buffered event's `emit` runs against a capture buffer. */
  private capturing: HistoryEvent[] | null = null;
  /** Placeholder ids of captured events are unique per run, so one buffered item may refer to another's. */
  private captureSeq = 0;
  /** Restored buffered events: placeholder id → real id once written. */
  private recordedIds = new Map<number, number>();
  private pendingQueries: PendingQuery[] = [];
  private lastCompletedStartedId = 0;
  private sticky: { queue: string; scheduleToStartMs: number } | null = null;
  readonly activities = new Map<number, Activity>();
  private timers = new Map<string, { startedEventId: number; handle: TimerHandle }>();
  readonly children = new Map<number, Child>();
  private runTimer?: TimerHandle;
  private backoffTimer?: TimerHandle;
  private listeners = new Set<() => void>();
  /** Parent run (for children): notified when the last run of this chain closes. */
  readonly parent: RunParams['parent'];
  /** Workflow updates (src/updates.ts). */
  readonly updates = new UpdateRegistry();

  constructor(
    private readonly store: Store,
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
  get closeEvent(): HistoryEvent | undefined {
    return this.isOpen ? undefined : this.history[this.history.length - 1];
  }

  // ---------------------------------------------------------------- history plumbing

  private append(e: HistoryEvent): HistoryEvent {
    if (this.capturing) return this.capture(e);
    const id = this.history.length + 1;
    e.eventId = long(id);
    e.taskId = long(id);
    e.eventTime = msTimestamp(this.store.clock.now());
    this.history.push(e);
    this.touched();
    return e;
  }

  /** Re-checks every waiter's condition; a met one removes itself (see waitUntil). */
  private notify(): void {
    if (this.listeners.size === 0) return;
    for (const check of [...this.listeners]) check();
  }

  /**
   * Resolves once `pred()` holds (checked on every history change or close) or `timeoutMs` of
   * wall time pass (history long poll). One timer per wait, not one per change.
   */
  waitUntil(pred: () => boolean, timeoutMs: number, onCancel: (cb: () => void) => void): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve) => {
      let settled = false;
      const finish = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const check = (): void => {
        if (pred()) finish();
      };
      const timer = setTimeout(finish, Math.max(0, timeoutMs));
      this.listeners.add(check);
      onCancel(finish);
    });
  }

  /** An outside event: buffered while a workflow task runs, else written and a task scheduled. */
  private external(emit: () => void, timerId?: string): void {
    if (!this.isOpen) return;
    if (this.wft?.state === 'started') {
      // Durable mode persists buffered events too; `emit` must therefore only append events
      // (it runs once against a capture buffer here, and for real when the buffer is flushed).
      this.buffered.push({ emit, timerId, events: this.store.journal ? this.captureEvents(emit) : undefined });
      this.touched();
      return;
    }
    emit();
    this.scheduleWorkflowTask();
    this.notify();
  }

  private flushBuffered(): boolean {
    const b = this.buffered;
    this.buffered = [];
    for (const item of b) item.emit();
    return b.length > 0;
  }

  // ---------------------------------------------------------------- start

  /** Writes WorkflowExecutionStarted and schedules the first workflow task (maybe after a backoff). */
  start(signal?: { name: string; input?: Payloads | null; header?: temporal.api.common.v1.IHeader | null; identity: string }): void {
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
    const deadline = Math.min(
      p.runTimeoutMs ? this.startTime + p.runTimeoutMs : Infinity,
      p.expirationTime || Infinity,
    );
    if (Number.isFinite(deadline)) {
      this.runTimer = this.store.clock.scheduleAt(deadline, () => this.timeOut());
    }
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
      this.backoffTimer = this.store.clock.schedule(p.backoffMs, () => {
        this.backoffTimer = undefined;
        this.scheduleWorkflowTask();
        this.notify();
      });
    } else {
      this.scheduleWorkflowTask();
    }
  }

  // ---------------------------------------------------------------- workflow tasks

  private normalKey(): string {
    return this.store.queueKey(this.namespace, this.taskQueue);
  }

  private scheduleWorkflowTask(): void {
    if (!this.isOpen || this.wft || this.backoffTimer) return;
    const attempt = this.nextWftAttempt;
    const ev = this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      workflowTaskScheduledEventAttributes: {
        taskQueue: { name: this.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        startToCloseTimeout: msDuration(this.p.taskTimeoutMs),
        attempt,
      },
    });
    this.wft = {
      state: 'scheduled',
      scheduledEventId: toNum(ev.eventId),
      startedEventId: 0,
      attempt,
      queueKey: '',
      scheduledTime: this.store.clock.now(),
      queries: this.pendingQueries.splice(0),
      locked: true,
    };
    this.store.clock.lock();
    this.dispatchWorkflowTask();
  }

  /** Put the scheduled task on the sticky queue if the worker asked for one, else the normal queue. */
  private dispatchWorkflowTask(): void {
    const wft = this.wft;
    if (!wft || wft.state !== 'scheduled') return;
    const sid = wft.scheduledEventId;
    if (this.sticky) {
      const key = this.store.queueKey(this.namespace, this.sticky.queue);
      wft.queueKey = key;
      this.store.wfMatching.add(key, { take: (identity) => this.startWorkflowTask(sid, key, identity) });
      const timeout = this.sticky.scheduleToStartMs || 5000;
      wft.timer = this.store.clock.schedule(timeout, () => this.stickyTimeout(sid));
    } else {
      const key = this.normalKey();
      wft.queueKey = key;
      this.store.wfMatching.add(key, { take: (identity) => this.startWorkflowTask(sid, key, identity) });
    }
  }

  /** Sticky worker did not pick the task up in time: forget stickiness, move it to the normal queue. */
  private stickyTimeout(sid: number): void {
    const wft = this.wft;
    if (!wft || wft.state !== 'scheduled' || wft.scheduledEventId !== sid) return;
    this.sticky = null;
    this.dispatchWorkflowTask();
  }

  /** Called when the worker behind a sticky queue shut down. */
  clearStickyQueue(queue?: string): void {
    if (!this.sticky || (queue !== undefined && this.sticky.queue !== queue)) return;
    this.sticky = null;
    if (this.wft?.state === 'scheduled') {
      this.wft.timer?.cancel();
      this.dispatchWorkflowTask();
    }
  }

  private startWorkflowTask(sid: number, key: string, identity: string): PollWftResponse | null {
    const wft = this.wft;
    if (!this.isOpen || !wft || wft.state !== 'scheduled' || wft.scheduledEventId !== sid || wft.queueKey !== key) {
      return null;
    }
    wft.timer?.cancel();
    const sticky = key !== this.normalKey();
    const started = this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      workflowTaskStartedEventAttributes: {
        scheduledEventId: long(sid),
        identity,
        requestId: randomUUID(),
      },
    });
    wft.state = 'started';
    wft.startedEventId = toNum(started.eventId);
    wft.timer = this.store.clock.schedule(this.p.taskTimeoutMs, () => this.timeOutWorkflowTask(sid, wft.attempt));
    const events = sticky ? this.history.slice(this.lastCompletedStartedId) : this.history.slice();
    const queries: Record<string, WorkflowQuery> = {};
    for (const q of wft.queries) queries[q.id] = q.query;
    this.notify();
    return {
      taskToken: encodeToken({ t: 'w', r: this.runId, s: sid, a: wft.attempt }),
      workflowExecution: this.execution,
      workflowType: { name: this.workflowType },
      previousStartedEventId: long(this.lastCompletedStartedId),
      startedEventId: long(wft.startedEventId),
      attempt: wft.attempt,
      history: { events },
      workflowExecutionTaskQueue: { name: this.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      scheduledTime: msTimestamp(wft.scheduledTime),
      startedTime: started.eventTime,
      queries,
      messages: this.updates.deliver(sid),
    };
  }

  private checkWftToken(sid: number, attempt: number): WorkflowTask {
    const wft = this.wft;
    if (!this.isOpen) throw notFound('Workflow execution already completed');
    if (!wft || wft.state !== 'started' || wft.scheduledEventId !== sid || wft.attempt !== attempt) {
      throw notFound('Workflow task not found');
    }
    return wft;
  }

  /** Ends the started task's bookkeeping; the caller decides what comes next. */
  private endWorkflowTask(wft: WorkflowTask): void {
    wft.timer?.cancel();
    if (this.wft === wft) this.wft = null;
  }

  /** Call after any follow-up work took its own lock, so time cannot jump in between. */
  private releaseWftLock(wft: WorkflowTask): void {
    if (!wft.locked) return;
    wft.locked = false;
    this.store.clock.unlock();
  }

  /** Failure paths (worker failure, timeout, unhandled command): retry the task with attempt+1. */
  private retryWorkflowTask(wft: WorkflowTask, nextAttempt: number): void {
    this.endWorkflowTask(wft);
    // Queries attached to the failed attempt ride the next one.
    this.pendingQueries.unshift(...wft.queries.filter((q) => !q.done));
    // Like the Java server: after a failure the retry goes to the normal queue with full history.
    this.sticky = null;
    this.updates.undeliver();
    this.nextWftAttempt = nextAttempt;
    this.flushBuffered();
    this.scheduleWorkflowTask();
    this.releaseWftLock(wft);
    this.notify();
  }

  private timeOutWorkflowTask(sid: number, attempt: number): void {
    const wft = this.wft;
    if (!this.isOpen || !wft || wft.state !== 'started' || wft.scheduledEventId !== sid || wft.attempt !== attempt) return;
    this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
      workflowTaskTimedOutEventAttributes: {
        scheduledEventId: long(sid),
        startedEventId: long(wft.startedEventId),
        timeoutType: TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE,
      },
    });
    this.retryWorkflowTask(wft, wft.attempt + 1);
  }

  failWorkflowTask(sid: number, attempt: number, req: temporal.api.workflowservice.v1.IRespondWorkflowTaskFailedRequest): void {
    const wft = this.checkWftToken(sid, attempt);
    this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
      workflowTaskFailedEventAttributes: {
        scheduledEventId: long(sid),
        startedEventId: long(wft.startedEventId),
        cause: req.cause,
        failure: req.failure,
        identity: req.identity,
      },
    });
    this.retryWorkflowTask(wft, wft.attempt + 1);
  }

  /**
   * Returns the activity tasks handed to the completing worker for eager execution: activities it
   * asked for (`request_eager_execution`) on this run's own task queue, started for it at once, as
   * the real server does. Everything else waits for a poll.
   */
  completeWorkflowTask(sid: number, attempt: number, req: CompleteWftRequest): PollActivityResponse[] {
    const wft = this.checkWftToken(sid, attempt);
    const commands = req.commands ?? [];
    this.validateCommands(commands);
    const messages = req.messages ?? [];
    this.updates.validate(commands, messages);
    const closing = commands.some((c) => closingCommands.has(c.commandType ?? 0));

    if (closing && (this.buffered.length > 0 || this.updates.hasUndelivered())) {
      // The workflow decided to close without seeing new events or updates: reject and let it see them.
      this.append({
        eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
        workflowTaskFailedEventAttributes: {
          scheduledEventId: long(sid),
          startedEventId: long(wft.startedEventId),
          cause: temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
          identity: req.identity,
        },
      });
      this.answerQueries(wft, req);
      this.retryWorkflowTask(wft, 1);
      throw invalidArgument('UnhandledCommand');
    }

    const completed = this.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
      workflowTaskCompletedEventAttributes: {
        scheduledEventId: long(sid),
        startedEventId: long(wft.startedEventId),
        identity: req.identity,
        sdkMetadata: req.sdkMetadata,
        meteringMetadata: req.meteringMetadata,
        workerVersion: req.workerVersionStamp,
      },
    });
    const completedId = toNum(completed.eventId);
    this.lastCompletedStartedId = wft.startedEventId;
    this.nextWftAttempt = 1;
    const sq = req.stickyAttributes?.workerTaskQueue?.name;
    this.sticky = sq ? { queue: sq, scheduleToStartMs: durationMs(req.stickyAttributes?.scheduleToStartTimeout) } : null;

    this.answerQueries(wft, req);
    // Commands run while the task still counts as started, so anything they cause for this run
    // (child started, self-signal, immediate activity cancel) is buffered and written after them.
    const eager: Activity[] = [];
    const unplaced = new Map(messages.map((m) => [m.id ?? '', m]));
    for (const cmd of commands) {
      if (!this.isOpen) break;
      if (cmd.commandType === CommandType.COMMAND_TYPE_PROTOCOL_MESSAGE) {
        // The message's event goes exactly where its command stands among the command events.
        const id = cmd.protocolMessageCommandAttributes?.messageId ?? '';
        const msg = unplaced.get(id);
        unplaced.delete(id);
        if (msg) this.applyUpdateMessage(msg, req.identity ?? '');
      } else if (cmd.commandType === CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK) {
        const act = this.scheduleActivity(cmd.scheduleActivityTaskCommandAttributes ?? {}, completedId);
        if (act) eager.push(act);
      } else {
        this.applyCommand(cmd, completedId, req.identity ?? '');
      }
    }
    // Messages without a command (rejections) change no history.
    for (const msg of unplaced.values()) this.applyUpdateMessage(msg, req.identity ?? '');
    this.updates.afterCompletion();
    const activityTasks: PollActivityResponse[] = [];
    for (const act of eager) {
      // Not live any more (run closed, cancelled by a later command): nothing to hand out.
      if (!this.liveActivity(act, act.attempt) || act.state !== 'scheduled') continue;
      const task = this.startActivity(act, act.attempt, req.identity ?? '');
      if (task) activityTasks.push(task);
    }

    this.endWorkflowTask(wft);
    if (this.isOpen) {
      const hadBuffered = this.flushBuffered();
      if (hadBuffered || req.forceCreateNewWorkflowTask || this.updates.hasUndelivered()) this.scheduleWorkflowTask();
      if (!this.wft) this.dispatchLegacyQueries();
    }
    this.releaseWftLock(wft);
    this.notify();
    return activityTasks;
  }

  /**
   * `return_new_workflow_task`: if the completion left a new task scheduled on the completing
   * worker's sticky queue, start it now for that worker and return it (partial history), as the
   * real server does; it then needs no poll. Null if there is none.
   */
  takeNextWorkflowTaskInline(identity: string): PollWftResponse | null {
    const wft = this.wft;
    if (!this.isOpen || !wft || wft.state !== 'scheduled' || !this.sticky) return null;
    if (wft.queueKey !== this.store.queueKey(this.namespace, this.sticky.queue)) return null;
    return this.startWorkflowTask(wft.scheduledEventId, wft.queueKey, identity);
  }

  private applyUpdateMessage(msg: temporal.api.protocol.v1.IMessage, identity: string): void {
    const effect = this.updates.apply(msg, identity);
    if (effect.event && this.isOpen) effect.commit(toNum(this.append(effect.event).eventId));
  }

  /**
   * UpdateWorkflowExecution: the update with this id (deduplicated), admitted now if new. A new
   * update needs a workflow task: scheduled now if none is pending; one that is running leaves
   * it to its completion (see completeWorkflowTask).
   */
  admitUpdate(request: temporal.api.update.v1.IRequest): Update {
    const existing = this.updates.get(request.meta?.updateId ?? '');
    if (existing) return existing;
    if (!this.isOpen) throw workflowCompletedError();
    const u = this.updates.admit(request);
    if (!this.wft) {
      this.scheduleWorkflowTask();
      this.notify();
    }
    return u;
  }

  /**
   * Eager workflow start (`request_eager_execution`): the first workflow task, started for the
   * starter at once with the full history, as the real server returns it in the start answer.
   * Null when there is none to hand out (start delay, or it was already taken).
   */
  takeFirstWorkflowTaskEagerly(identity: string): PollWftResponse | null {
    const wft = this.wft;
    if (!this.isOpen || !wft || wft.state !== 'scheduled' || wft.queueKey !== this.normalKey()) return null;
    return this.startWorkflowTask(wft.scheduledEventId, wft.queueKey, identity);
  }

  private validateCommands(commands: Command[]): void {
    commands.forEach((c, i) => {
      const t = c.commandType ?? 0;
      if (closingCommands.has(t) && i !== commands.length - 1) {
        throw invalidArgument('A workflow-closing command must be the last command of a workflow task');
      }
      if (!supportedCommands.has(t)) {
        const name = CommandType[t] ?? String(t);
        throw invalidArgument(`Command ${name} is not supported by the pixflow test server`);
      }
    });
  }

  // ---------------------------------------------------------------- commands

  private applyCommand(cmd: Command, wftCompletedId: number, identity: string): void {
    const wfc = long(wftCompletedId);
    switch (cmd.commandType) {
      case CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK:
        this.scheduleActivity(cmd.scheduleActivityTaskCommandAttributes ?? {}, wftCompletedId);
        return;
      case CommandType.COMMAND_TYPE_REQUEST_CANCEL_ACTIVITY_TASK:
        return this.requestCancelActivity(toNum(cmd.requestCancelActivityTaskCommandAttributes?.scheduledEventId), wftCompletedId);
      case CommandType.COMMAND_TYPE_START_TIMER: {
        const a = cmd.startTimerCommandAttributes ?? {};
        const timerId = a.timerId ?? '';
        const ev = this.append({
          eventType: EventType.EVENT_TYPE_TIMER_STARTED,
          timerStartedEventAttributes: { timerId, startToFireTimeout: a.startToFireTimeout, workflowTaskCompletedEventId: wfc },
        });
        this.armTimer(timerId, toNum(ev.eventId), this.store.clock.now() + durationMs(a.startToFireTimeout));
        return;
      }
      case CommandType.COMMAND_TYPE_CANCEL_TIMER: {
        const timerId = cmd.cancelTimerCommandAttributes?.timerId ?? '';
        let startedEventId = 0;
        const t = this.timers.get(timerId);
        if (t) {
          t.handle.cancel();
          this.timers.delete(timerId);
          startedEventId = t.startedEventId;
        } else {
          // Already fired but the fire is still buffered: drop it, never write Fired and Canceled.
          this.buffered = this.buffered.filter((b) => b.timerId !== timerId);
          startedEventId = this.findTimerStartedId(timerId);
        }
        this.append({
          eventType: EventType.EVENT_TYPE_TIMER_CANCELED,
          timerCanceledEventAttributes: { timerId, startedEventId: long(startedEventId), workflowTaskCompletedEventId: wfc, identity },
        });
        return;
      }
      case CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION: {
        const result = cmd.completeWorkflowExecutionCommandAttributes?.result;
        this.append({
          eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
          workflowExecutionCompletedEventAttributes: { result, workflowTaskCompletedEventId: wfc },
        });
        return this.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED);
      }
      case CommandType.COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION:
        return this.failWorkflow(cmd.failWorkflowExecutionCommandAttributes?.failure ?? null, wftCompletedId);
      case CommandType.COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION:
        this.append({
          eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
          workflowExecutionCanceledEventAttributes: {
            details: cmd.cancelWorkflowExecutionCommandAttributes?.details,
            workflowTaskCompletedEventId: wfc,
          },
        });
        return this.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED);
      case CommandType.COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION:
        return this.continueAsNew(cmd.continueAsNewWorkflowExecutionCommandAttributes ?? {}, wftCompletedId);
      case CommandType.COMMAND_TYPE_RECORD_MARKER: {
        const a = cmd.recordMarkerCommandAttributes ?? {};
        this.append({
          eventType: EventType.EVENT_TYPE_MARKER_RECORDED,
          markerRecordedEventAttributes: {
            markerName: a.markerName,
            details: a.details,
            header: a.header,
            failure: a.failure,
            workflowTaskCompletedEventId: wfc,
          },
        });
        return;
      }
      case CommandType.COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const sa = cmd.upsertWorkflowSearchAttributesCommandAttributes?.searchAttributes ?? {};
        this.searchAttributes = {
          indexedFields: { ...(this.searchAttributes.indexedFields ?? {}), ...(sa.indexedFields ?? {}) },
        };
        this.append({
          eventType: EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
          upsertWorkflowSearchAttributesEventAttributes: { searchAttributes: sa, workflowTaskCompletedEventId: wfc },
        });
        return;
      }
      case CommandType.COMMAND_TYPE_MODIFY_WORKFLOW_PROPERTIES: {
        const memo = cmd.modifyWorkflowPropertiesCommandAttributes?.upsertedMemo ?? {};
        this.memo = { fields: { ...(this.memo.fields ?? {}), ...(memo.fields ?? {}) } };
        this.append({
          eventType: EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
          workflowPropertiesModifiedEventAttributes: { upsertedMemo: memo, workflowTaskCompletedEventId: wfc },
        });
        return;
      }
      case CommandType.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION:
        return this.startChild(cmd.startChildWorkflowExecutionCommandAttributes ?? {}, wftCompletedId);
      case CommandType.COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION:
        return this.signalExternal(cmd.signalExternalWorkflowExecutionCommandAttributes ?? {}, wftCompletedId);
      case CommandType.COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION:
        return this.cancelExternal(cmd.requestCancelExternalWorkflowExecutionCommandAttributes ?? {}, wftCompletedId);
      default:
        // validateCommands rejected everything else before any change was made.
        return;
    }
  }

  private armTimer(timerId: string, startedEventId: number, fireAt: number): void {
    const handle = this.store.clock.scheduleAt(fireAt, () => {
      this.timers.delete(timerId);
      this.external(() => {
        this.append({
          eventType: EventType.EVENT_TYPE_TIMER_FIRED,
          timerFiredEventAttributes: { timerId, startedEventId: long(startedEventId) },
        });
      }, timerId);
    });
    this.timers.set(timerId, { startedEventId, handle });
  }

  private findTimerStartedId(timerId: string): number {
    for (let i = this.history.length - 1; i >= 0; i--) {
      const e = this.history[i];
      if (e.eventType === EventType.EVENT_TYPE_TIMER_STARTED && e.timerStartedEventAttributes?.timerId === timerId) {
        return toNum(e.eventId);
      }
    }
    return 0;
  }

  // ---------------------------------------------------------------- activities

  private activityKey(taskQueue: string): string {
    return this.store.queueKey(this.namespace, taskQueue);
  }

  /** Returns the activity if it is to be started eagerly by the caller. */
  private scheduleActivity(a: temporal.api.command.v1.IScheduleActivityTaskCommandAttributes, wftCompletedId: number): Activity | undefined {
    // Timeout defaults as the real server fills them in.
    let scheduleToClose = durationMs(a.scheduleToCloseTimeout);
    let startToClose = durationMs(a.startToCloseTimeout);
    if (!startToClose) startToClose = scheduleToClose;
    const scheduleToStart = durationMs(a.scheduleToStartTimeout) || scheduleToClose;
    let heartbeat = durationMs(a.heartbeatTimeout);
    if (heartbeat > startToClose && startToClose) heartbeat = startToClose;
    if (!startToClose) startToClose = TEN_YEARS;
    if (!scheduleToClose) scheduleToClose = 0;
    const policy = normalizeRetryPolicy(a.retryPolicy);
    const taskQueue = a.taskQueue?.name || this.taskQueue;
    const ev = this.append({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      activityTaskScheduledEventAttributes: {
        activityId: a.activityId,
        activityType: a.activityType,
        taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        header: a.header,
        input: a.input,
        scheduleToCloseTimeout: scheduleToClose ? msDuration(scheduleToClose) : null,
        scheduleToStartTimeout: scheduleToStart ? msDuration(scheduleToStart) : null,
        startToCloseTimeout: msDuration(startToClose),
        heartbeatTimeout: heartbeat ? msDuration(heartbeat) : null,
        workflowTaskCompletedEventId: long(wftCompletedId),
        retryPolicy: retryPolicyMsg(policy),
        priority: a.priority,
      },
    });
    const now = this.store.clock.now();
    const act: Activity = {
      scheduledEventId: toNum(ev.eventId),
      activityId: a.activityId ?? '',
      activityType: a.activityType?.name ?? '',
      taskQueue,
      input: a.input,
      header: a.header,
      scheduleToCloseMs: scheduleToClose,
      scheduleToStartMs: scheduleToStart,
      startToCloseMs: startToClose,
      heartbeatMs: heartbeat,
      policy,
      attempt: 1,
      state: 'scheduled',
      firstScheduledTime: now,
      attemptScheduledTime: now,
      startedTime: 0,
      identity: '',
      lastHeartbeatTime: 0,
      cancelRequestedEventId: 0,
      attemptTimers: [],
      locked: false,
      priority: a.priority,
    };
    this.activities.set(act.scheduledEventId, act);
    if (scheduleToClose) {
      act.closeTimer = this.store.clock.schedule(scheduleToClose, () =>
        this.timeOutActivity(act, TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, act.attempt),
      );
    }
    // Eager execution only on the workflow's own queue (the completing worker polls it).
    const eager = a.requestEagerExecution === true && taskQueue === this.taskQueue;
    this.enqueueActivity(act, eager);
    return eager ? act : undefined;
  }

  /** `eager`: the caller starts the attempt itself at once instead of queueing it for a poll. */
  private enqueueActivity(act: Activity, eager = false): void {
    act.state = 'scheduled';
    act.attemptScheduledTime = this.store.clock.now();
    if (!act.locked) {
      act.locked = true;
      this.store.clock.lock();
    }
    const attempt = act.attempt;
    if (act.scheduleToStartMs) {
      act.attemptTimers.push(
        this.store.clock.schedule(act.scheduleToStartMs, () => this.timeOutActivity(act, TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START, attempt)),
      );
    }
    this.touched();
    if (eager) return;
    this.store.actMatching.add(this.activityKey(act.taskQueue), { take: (identity) => this.startActivity(act, attempt, identity) });
  }

  private liveActivity(act: Activity, attempt: number): boolean {
    return this.isOpen && this.activities.get(act.scheduledEventId) === act && act.attempt === attempt;
  }

  private startActivity(act: Activity, attempt: number, identity: string): PollActivityResponse | null {
    if (!this.liveActivity(act, attempt) || act.state !== 'scheduled') return null;
    this.clearAttemptTimers(act);
    const now = this.store.clock.now();
    act.state = 'started';
    act.startedTime = now;
    act.identity = identity;
    act.retryAt = undefined;
    this.touched();
    act.attemptTimers.push(
      this.store.clock.schedule(act.startToCloseMs, () => this.timeOutActivity(act, TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE, attempt)),
    );
    this.armHeartbeatTimer(act);
    return {
      taskToken: encodeToken({ t: 'a', r: this.runId, s: act.scheduledEventId, a: attempt }),
      workflowNamespace: this.namespace,
      workflowType: { name: this.workflowType },
      workflowExecution: this.execution,
      activityType: { name: act.activityType },
      activityId: act.activityId,
      header: act.header,
      input: act.input,
      heartbeatDetails: act.heartbeatDetails,
      scheduledTime: msTimestamp(act.firstScheduledTime),
      currentAttemptScheduledTime: msTimestamp(act.attemptScheduledTime),
      startedTime: msTimestamp(now),
      attempt,
      // The TS worker requires it; unset means "no limit", sent as ten years like start-to-close.
      scheduleToCloseTimeout: msDuration(act.scheduleToCloseMs || TEN_YEARS),
      startToCloseTimeout: msDuration(act.startToCloseMs),
      heartbeatTimeout: act.heartbeatMs ? msDuration(act.heartbeatMs) : null,
      retryPolicy: retryPolicyMsg(act.policy),
      priority: act.priority,
    };
  }

  private armHeartbeatTimer(act: Activity): void {
    act.heartbeatTimer?.cancel();
    act.heartbeatTimer = undefined;
    if (!act.heartbeatMs || act.state !== 'started') return;
    const attempt = act.attempt;
    act.heartbeatTimer = this.store.clock.schedule(act.heartbeatMs, () =>
      this.timeOutActivity(act, TimeoutType.TIMEOUT_TYPE_HEARTBEAT, attempt),
    );
  }

  private clearAttemptTimers(act: Activity): void {
    for (const t of act.attemptTimers) t.cancel();
    act.attemptTimers = [];
    act.heartbeatTimer?.cancel();
    act.heartbeatTimer = undefined;
  }

  /** Look up the started attempt a token or id refers to. */
  activityForToken(sid: number, attempt: number | null): Activity {
    if (!this.isOpen) throw notFound('Workflow execution already completed');
    const act = this.activities.get(sid);
    if (!act || (attempt !== null && act.attempt !== attempt) || act.state !== 'started') {
      throw notFound('Activity task not found');
    }
    return act;
  }

  activityById(activityId: string): Activity {
    if (!this.isOpen) throw notFound('Workflow execution already completed');
    for (const act of this.activities.values()) {
      if (act.activityId === activityId) {
        if (act.state !== 'started') throw notFound('Activity task not started');
        return act;
      }
    }
    throw notFound(`Activity ${activityId} not found`);
  }

  heartbeatActivity(act: Activity, details: Payloads | null | undefined): boolean {
    if (details) act.heartbeatDetails = details;
    act.lastHeartbeatTime = this.store.clock.now();
    this.armHeartbeatTimer(act);
    this.touched();
    return act.cancelRequestedEventId > 0;
  }

  /** The activity is finished for good: drop it and write its Started + closing events. */
  private closeActivity(act: Activity, started: boolean, emitClose: (startedEventId: number) => void): void {
    this.clearAttemptTimers(act);
    act.closeTimer?.cancel();
    this.activities.delete(act.scheduledEventId);
    const identity = act.identity;
    const attempt = act.attempt;
    const lastFailure = act.lastFailure;
    this.external(() => {
      let startedId = 0;
      if (started) {
        const ev = this.append({
          eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED,
          activityTaskStartedEventAttributes: {
            scheduledEventId: long(act.scheduledEventId),
            identity,
            requestId: randomUUID(),
            attempt,
            lastFailure,
          },
        });
        startedId = toNum(ev.eventId);
      }
      emitClose(startedId);
    });
    // Release after external() so the workflow task it schedules takes its lock first.
    if (act.locked) {
      act.locked = false;
      this.store.clock.unlock();
    }
  }

  completeActivity(act: Activity, result: Payloads | null | undefined, identity: string): void {
    this.closeActivity(act, true, (startedId) => {
      this.append({
        eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
        activityTaskCompletedEventAttributes: {
          result,
          scheduledEventId: long(act.scheduledEventId),
          startedEventId: long(startedId),
          identity,
        },
      });
    });
  }

  failActivity(act: Activity, failure: Failure | null | undefined, identity: string, details?: Payloads | null): void {
    if (details) act.heartbeatDetails = details;
    const f = failure ?? { message: 'activity failed' };
    const decision = decideRetry({
      policy: act.policy,
      attempt: act.attempt,
      failure: f,
      nowMs: this.store.clock.now(),
      expiresAtMs: act.scheduleToCloseMs ? act.firstScheduledTime + act.scheduleToCloseMs : 0,
    });
    if (decision.retry) return this.retryActivity(act, f, decision.delayMs);
    this.closeActivity(act, true, (startedId) => {
      this.append({
        eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
        activityTaskFailedEventAttributes: {
          failure: f,
          scheduledEventId: long(act.scheduledEventId),
          startedEventId: long(startedId),
          identity,
          retryState: decision.state,
        },
      });
    });
  }

  cancelActivityReported(act: Activity, details: Payloads | null | undefined, identity: string): void {
    this.closeActivity(act, true, (startedId) => {
      this.append({
        eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
        activityTaskCanceledEventAttributes: {
          details,
          latestCancelRequestedEventId: long(act.cancelRequestedEventId),
          scheduledEventId: long(act.scheduledEventId),
          startedEventId: long(startedId),
          identity,
        },
      });
    });
  }

  /** The next attempt waits out the backoff without holding the time-skipping lock. */
  private retryActivity(act: Activity, failure: Failure, delayMs: number): void {
    this.clearAttemptTimers(act);
    act.lastFailure = failure;
    act.state = 'backoff';
    act.attempt++;
    this.armActivityRetry(act, this.store.clock.now() + delayMs);
    this.touched();
    if (act.locked) {
      act.locked = false;
      this.store.clock.unlock();
    }
  }

  private armActivityRetry(act: Activity, atMs: number): void {
    act.retryAt = atMs;
    act.attemptTimers.push(
      this.store.clock.scheduleAt(atMs, () => {
        if (!this.isOpen || this.activities.get(act.scheduledEventId) !== act) return;
        act.attemptTimers = [];
        this.enqueueActivity(act);
      }),
    );
  }

  private timeOutActivity(act: Activity, type: number, attempt: number): void {
    if (!this.liveActivity(act, attempt) && !(type === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE && this.activities.get(act.scheduledEventId) === act)) {
      return;
    }
    const wasStarted = act.state === 'started';
    const typeName = (TimeoutType[type] ?? '').replace('TIMEOUT_TYPE_', '');
    const failure: Failure = {
      message: `activity ${typeName.toLowerCase()} timeout`,
      source: 'Server',
      timeoutFailureInfo: { timeoutType: type, lastHeartbeatDetails: act.heartbeatDetails },
      cause: act.lastFailure ?? null,
    };
    let retryState: number = RetryState.RETRY_STATE_TIMEOUT;
    if (type === TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE || type === TimeoutType.TIMEOUT_TYPE_HEARTBEAT) {
      const decision = decideRetry({
        policy: act.policy,
        attempt: act.attempt,
        failure: null,
        nowMs: this.store.clock.now(),
        expiresAtMs: act.scheduleToCloseMs ? act.firstScheduledTime + act.scheduleToCloseMs : 0,
      });
      if (decision.retry) return this.retryActivity(act, { ...failure, cause: null }, decision.delayMs);
      retryState = decision.state;
    }
    this.closeActivity(act, wasStarted, (startedId) => {
      this.append({
        eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
        activityTaskTimedOutEventAttributes: {
          failure,
          scheduledEventId: long(act.scheduledEventId),
          startedEventId: long(startedId),
          retryState,
        },
      });
    });
  }

  private requestCancelActivity(sid: number, wftCompletedId: number): void {
    const ev = this.append({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
      activityTaskCancelRequestedEventAttributes: {
        scheduledEventId: long(sid),
        workflowTaskCompletedEventId: long(wftCompletedId),
      },
    });
    const act = this.activities.get(sid);
    if (!act) return;
    act.cancelRequestedEventId = toNum(ev.eventId);
    if (act.state !== 'started') {
      // Not running (queued or between retries): cancelled at once.
      this.closeActivity(act, false, () => {
        this.append({
          eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
          activityTaskCanceledEventAttributes: {
            latestCancelRequestedEventId: long(act.cancelRequestedEventId),
            scheduledEventId: long(sid),
            startedEventId: long(0),
          },
        });
      });
    }
    // Running: the worker learns it from the next heartbeat reply.
  }

  // ---------------------------------------------------------------- children and external workflows

  private startChild(a: temporal.api.command.v1.IStartChildWorkflowExecutionCommandAttributes, wftCompletedId: number): void {
    const namespace = a.namespace || this.namespace;
    const ev = this.append({
      eventType: EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
      startChildWorkflowExecutionInitiatedEventAttributes: {
        namespace,
        workflowId: a.workflowId,
        workflowType: a.workflowType,
        taskQueue: { name: a.taskQueue?.name || this.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        input: a.input,
        workflowExecutionTimeout: a.workflowExecutionTimeout,
        workflowRunTimeout: a.workflowRunTimeout,
        workflowTaskTimeout: a.workflowTaskTimeout ?? msDuration(this.p.taskTimeoutMs),
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
    const started = this.store.startChildRun(this, initiatedEventId, a);
    if (!started.ok) {
      this.external(() => {
        this.append({
          eventType: EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED,
          startChildWorkflowExecutionFailedEventAttributes: {
            namespace,
            workflowId: child.workflowId,
            workflowType: { name: child.workflowType },
            cause: temporal.api.enums.v1.StartChildWorkflowExecutionFailedCause
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
    this.children.set(initiatedEventId, child);
    this.external(() => {
      const sev = this.append({
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
    const child = this.children.get(initiatedEventId);
    if (!child || !this.isOpen) return;
    this.children.delete(initiatedEventId);
    const close = childRun.closeEvent;
    if (!close) return;
    this.external(() => {
      const common = {
        namespace: child.namespace,
        workflowExecution: { workflowId: child.workflowId, runId: childRun.runId },
        workflowType: { name: child.workflowType },
        initiatedEventId: long(initiatedEventId),
        startedEventId: long(child.startedEventId),
      };
      switch (close.eventType) {
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
          this.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
            childWorkflowExecutionCompletedEventAttributes: { ...common, result: close.workflowExecutionCompletedEventAttributes?.result },
          });
          return;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
          this.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
            childWorkflowExecutionFailedEventAttributes: {
              ...common,
              failure: close.workflowExecutionFailedEventAttributes?.failure,
              retryState: close.workflowExecutionFailedEventAttributes?.retryState,
            },
          });
          return;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
          this.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED,
            childWorkflowExecutionCanceledEventAttributes: { ...common, details: close.workflowExecutionCanceledEventAttributes?.details },
          });
          return;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
          this.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT,
            childWorkflowExecutionTimedOutEventAttributes: { ...common, retryState: close.workflowExecutionTimedOutEventAttributes?.retryState },
          });
          return;
        default:
          this.append({
            eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED,
            childWorkflowExecutionTerminatedEventAttributes: common,
          });
      }
    });
  }

  private signalExternal(a: temporal.api.command.v1.ISignalExternalWorkflowExecutionCommandAttributes, wftCompletedId: number): void {
    const namespace = a.namespace || this.namespace;
    const ev = this.append({
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
    const target = this.store.findRun(namespace, a.execution?.workflowId ?? '', a.execution?.runId ?? '');
    if (target && target.isOpen) {
      target.signal({
        signalName: a.signalName ?? '',
        input: a.input,
        header: a.header,
        identity: '',
        externalWorkflowExecution: this.execution,
      });
      this.external(() => {
        this.append({
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
      this.external(() => {
        this.append({
          eventType: EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED,
          signalExternalWorkflowExecutionFailedEventAttributes: {
            cause: temporal.api.enums.v1.SignalExternalWorkflowExecutionFailedCause
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

  private cancelExternal(
    a: temporal.api.command.v1.IRequestCancelExternalWorkflowExecutionCommandAttributes,
    wftCompletedId: number,
  ): void {
    const namespace = a.namespace || this.namespace;
    const execution = { workflowId: a.workflowId, runId: a.runId };
    const ev = this.append({
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
    const target = this.store.findRun(namespace, a.workflowId ?? '', a.runId ?? '');
    if (target && target.isOpen) {
      target.requestCancel(a.reason ?? '', '', { initiatedEventId: initiated, execution: this.execution });
      this.external(() => {
        this.append({
          eventType: EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED,
          externalWorkflowExecutionCancelRequestedEventAttributes: {
            initiatedEventId: long(initiated),
            namespace,
            workflowExecution: target.execution,
          },
        });
      });
    } else {
      this.external(() => {
        this.append({
          eventType: EventType.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED,
          requestCancelExternalWorkflowExecutionFailedEventAttributes: {
            cause: temporal.api.enums.v1.CancelExternalWorkflowExecutionFailedCause
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

  // ---------------------------------------------------------------- requests from clients

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
    this.scheduleWorkflowTask();
    this.notify();
  }

  requestCancel(reason: string, identity: string, external?: { initiatedEventId: number; execution: ExecutionMsg }): void {
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

  private failWorkflow(failure: Failure | null, wftCompletedId: number): void {
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

  private continueAsNew(a: temporal.api.command.v1.IContinueAsNewWorkflowExecutionCommandAttributes, wftCompletedId: number): void {
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
  private close(status: Status): void {
    this.status = status;
    this.closeTime = this.store.clock.now();
    this.runTimer?.cancel();
    this.backoffTimer?.cancel();
    this.backoffTimer = undefined;
    for (const t of this.timers.values()) t.handle.cancel();
    this.timers.clear();
    for (const act of this.activities.values()) {
      this.clearAttemptTimers(act);
      act.closeTimer?.cancel();
      if (act.locked) {
        act.locked = false;
        this.store.clock.unlock();
      }
    }
    this.activities.clear();
    this.buffered = [];
    const wft = this.wft;
    if (wft) {
      // A started task's completion will get NOT_FOUND; its lock is released here, once.
      wft.timer?.cancel();
      this.wft = null;
      this.pendingQueries.unshift(...wft.queries.filter((q) => !q.done));
      wft.queries = [];
      this.releaseWftLock(wft);
    }
    this.sticky = null;
    this.updates.abort();
    this.dispatchLegacyQueries();
    this.store.onRunClosed(this);
  }

  // ---------------------------------------------------------------- queries

  /** Route a query: ride the scheduled task, wait for the running one, or go as a legacy query task. */
  query(q: PendingQuery): void {
    const wft = this.wft;
    if (this.isOpen && wft?.state === 'scheduled') {
      wft.queries.push(q);
    } else if (this.isOpen && wft?.state === 'started') {
      this.pendingQueries.push(q);
    } else if (this.isOpen && this.backoffTimer) {
      throw failedPrecondition('Workflow has not started its first workflow task yet');
    } else {
      this.pendingQueries.push(q);
      this.dispatchLegacyQueries();
    }
  }

  private answerQueries(wft: WorkflowTask, req: CompleteWftRequest): void {
    const results = req.queryResults ?? {};
    for (const q of wft.queries) {
      const r = results[q.id];
      if (!r || q.done) continue;
      q.done = true;
      if (r.resultType === temporal.api.enums.v1.QueryResultType.QUERY_RESULT_TYPE_ANSWERED) {
        q.resolve({ answer: r.answer });
      } else {
        q.resolve({ errorMessage: r.errorMessage || 'query failed', failure: r.failure });
      }
    }
    // Unanswered ones get another chance.
    this.pendingQueries.unshift(...wft.queries.filter((q) => !q.done));
    wft.queries = [];
  }

  private dispatchLegacyQueries(): void {
    const qs = this.pendingQueries.splice(0).filter((q) => !q.done);
    for (const q of qs) {
      this.store.queries.set(q.id, q);
      const sticky = this.sticky;
      const key = sticky ? this.store.queueKey(this.namespace, sticky.queue) : this.normalKey();
      const task = { take: (identity: string) => this.legacyQueryTask(q, key, identity) };
      this.store.wfMatching.add(key, task);
      if (sticky) {
        // No sticky poller in time: the normal queue gets it, with full history.
        this.store.clock.schedule(sticky.scheduleToStartMs || 5000, () => {
          if (q.done || q.taken) return;
          const nk = this.normalKey();
          this.store.wfMatching.add(nk, { take: (identity: string) => this.legacyQueryTask(q, nk, identity) });
        });
      }
    }
  }

  private legacyQueryTask(q: PendingQuery, key: string, _identity: string): PollWftResponse | null {
    if (q.done || q.taken) return null;
    q.taken = true;
    const sticky = key !== this.normalKey();
    return {
      taskToken: encodeToken({ t: 'q', q: q.id }),
      workflowExecution: this.execution,
      workflowType: { name: this.workflowType },
      previousStartedEventId: long(this.lastCompletedStartedId),
      startedEventId: long(0),
      attempt: 1,
      history: { events: sticky && this.isOpen ? [] : this.history.slice() },
      query: q.query,
      workflowExecutionTaskQueue: { name: this.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      scheduledTime: msTimestamp(this.store.clock.now()),
      startedTime: msTimestamp(this.store.clock.now()),
    };
  }

  // ---------------------------------------------------------------- describe

  describe(): temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse {
    const pendingActivities: temporal.api.workflow.v1.IPendingActivityInfo[] = [];
    for (const act of this.activities.values()) {
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
    const pendingChildren: temporal.api.workflow.v1.IPendingChildExecutionInfo[] = [...this.children.values()].map((c) => ({
      workflowId: c.workflowId,
      runId: c.runId,
      workflowTypeName: c.workflowType,
      initiatedId: long(c.initiatedEventId),
      parentClosePolicy: c.parentClosePolicy,
    }));
    return {
      executionConfig: {
        taskQueue: { name: this.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        workflowExecutionTimeout: this.p.executionTimeoutMs ? msDuration(this.p.executionTimeoutMs) : null,
        workflowRunTimeout: this.p.runTimeoutMs ? msDuration(this.p.runTimeoutMs) : null,
        defaultWorkflowTaskTimeout: msDuration(this.p.taskTimeoutMs),
      },
      workflowExecutionInfo: this.info(),
      pendingActivities,
      pendingChildren,
      pendingWorkflowTask: this.wft
        ? {
            state:
              this.wft.state === 'started'
                ? temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED
                : temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED,
            scheduledTime: msTimestamp(this.wft.scheduledTime),
            attempt: this.wft.attempt,
          }
        : null,
    };
  }

  // ---------------------------------------------------------------- durability (src/persistence)

  /** Durable mode: the journal writes this run's new events and state at its next group commit. */
  private touched(): void {
    this.store.journal?.touch(this);
  }

  private captureEvents(emit: () => void): HistoryEvent[] {
    const out: HistoryEvent[] = [];
    this.capturing = out;
    try {
      emit();
    } finally {
      this.capturing = null;
    }
    return out;
  }

  /** Capture-mode append: placeholder ids (CAPTURE_ID_BASE + n) let later events of one emit refer to earlier ones. */
  private capture(e: HistoryEvent): HistoryEvent {
    const out = this.capturing ?? [];
    const id = CAPTURE_ID_BASE + ++this.captureSeq;
    e.eventId = long(id);
    e.taskId = long(id);
    e.eventTime = msTimestamp(this.store.clock.now());
    out.push(e);
    return e;
  }

  /** What history alone cannot tell after a restart: activity attempts and buffered events. */
  durableState(): RunDurableState {
    const activities: ActivityState[] = [];
    for (const a of this.activities.values()) {
      activities.push({
        sid: a.scheduledEventId,
        attempt: a.attempt,
        state: a.state,
        firstScheduledTime: a.firstScheduledTime,
        attemptScheduledTime: a.attemptScheduledTime,
        startedTime: a.startedTime,
        identity: a.identity,
        heartbeatDetails: a.heartbeatDetails ?? null,
        lastHeartbeatTime: a.lastHeartbeatTime,
        lastFailure: a.lastFailure ?? null,
        cancelRequestedEventId: a.cancelRequestedEventId,
        retryAt: a.retryAt ?? 0,
      });
    }
    return { activities, buffered: this.buffered.map((b) => b.events ?? []) };
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
    this.lastCompletedStartedId = plan.lastCompletedStartedId;
    this.nextWftAttempt = plan.nextWftAttempt;
    for (const c of plan.children) this.children.set(c.initiatedEventId, c);
    this.updates.restore(events);
    if (!this.isOpen) {
      this.updates.abort();
      return;
    }
    const clock = this.store.clock;
    const p = this.p;
    const deadline = Math.min(p.runTimeoutMs ? this.startTime + p.runTimeoutMs : Infinity, p.expirationTime || Infinity);
    if (Number.isFinite(deadline)) this.runTimer = clock.scheduleAt(deadline, () => this.timeOut());
    if (plan.firstTaskPending) {
      this.backoffTimer = clock.scheduleAt(this.executionTime, () => {
        this.backoffTimer = undefined;
        this.scheduleWorkflowTask();
        this.notify();
      });
    }
    for (const t of plan.timers) this.armTimer(t.timerId, t.startedEventId, t.fireAt);
    for (const act of plan.activities) {
      this.activities.set(act.scheduledEventId, act);
      if (act.scheduleToCloseMs) {
        act.closeTimer = clock.scheduleAt(act.firstScheduledTime + act.scheduleToCloseMs, () =>
          this.timeOutActivity(act, TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, act.attempt),
        );
      }
      if (act.state === 'scheduled') {
        this.enqueueActivity(act);
      } else if (act.state === 'started') {
        // The worker may still be running it and report with its token; if not, its timeouts retry it.
        act.locked = true;
        clock.lock();
        const attempt = act.attempt;
        act.attemptTimers.push(
          clock.scheduleAt(act.startedTime + act.startToCloseMs, () => this.timeOutActivity(act, TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE, attempt)),
        );
        // The heartbeat timeout counts from the restart: the worker gets one interval to reconnect.
        this.armHeartbeatTimer(act);
      } else {
        this.armActivityRetry(act, act.retryAt || clock.now());
      }
    }
    for (const events of plan.buffered) {
      for (const e of events) this.captureSeq = Math.max(this.captureSeq, toNum(e.eventId) - CAPTURE_ID_BASE);
    }
    this.buffered = plan.buffered.map((events) => ({
      emit: () => this.appendRecorded(events),
      events,
      timerId: events.find((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED)?.timerFiredEventAttributes?.timerId ?? undefined,
    }));
    const w = plan.wft;
    if (w) {
      const wft: WorkflowTask = {
        state: w.state,
        scheduledEventId: w.scheduledEventId,
        startedEventId: w.startedEventId,
        attempt: w.attempt,
        queueKey: '',
        scheduledTime: w.scheduledTime,
        queries: [],
        locked: true,
      };
      this.wft = wft;
      clock.lock();
      if (w.state === 'scheduled') {
        this.dispatchWorkflowTask();
      } else {
        // Started before the crash: its worker may still complete it; otherwise it times out and is retried.
        wft.queueKey = this.normalKey();
        wft.timer = clock.scheduleAt(w.startedTime + p.taskTimeoutMs, () => this.timeOutWorkflowTask(w.scheduledEventId, w.attempt));
      }
    } else if (!plan.firstTaskPending && this.buffered.length > 0) {
      this.flushBuffered();
      this.scheduleWorkflowTask();
    }
  }

  /** Re-append events captured while buffered, mapping their placeholder ids to the real ones. */
  private appendRecorded(events: HistoryEvent[]): void {
    const ids = this.recordedIds;
    for (const t of events) {
      const e: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(t)) {
        if (k === 'eventId' || k === 'taskId' || k === 'eventTime') continue;
        if (k.endsWith('EventAttributes') && v && typeof v === 'object') {
          const attrs: Record<string, unknown> = { ...(v as Record<string, unknown>) };
          for (const [ak, av] of Object.entries(attrs)) {
            const n = ak.endsWith('EventId') ? toNum(av) : 0;
            if (n > CAPTURE_ID_BASE) attrs[ak] = long(ids.get(n) ?? 0);
          }
          e[k] = attrs;
        } else {
          e[k] = v;
        }
      }
      const ev = this.append(e as HistoryEvent);
      ids.set(toNum(t.eventId), toNum(ev.eventId));
    }
  }

  info(): temporal.api.workflow.v1.IWorkflowExecutionInfo {
    return {
      execution: this.execution,
      type: { name: this.workflowType },
      startTime: msTimestamp(this.startTime),
      closeTime: this.closeTime ? msTimestamp(this.closeTime) : null,
      status: this.status,
      historyLength: long(this.history.length),
      parentNamespaceId: this.parent?.namespace,
      parentExecution: this.parent ? { workflowId: this.parent.workflowId, runId: this.parent.runId } : null,
      rootExecution: this.p.root ?? this.execution,
      executionTime: msTimestamp(this.executionTime),
      memo: this.memo,
      searchAttributes: this.searchAttributes,
      taskQueue: this.taskQueue,
      firstRunId: this.p.firstExecutionRunId,
      executionDuration: this.closeTime ? msDuration(this.closeTime - this.startTime) : null,
      stateTransitionCount: long(this.history.length),
    };
  }
}

const supportedCommands = new Set<number>([
  CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
  CommandType.COMMAND_TYPE_REQUEST_CANCEL_ACTIVITY_TASK,
  CommandType.COMMAND_TYPE_START_TIMER,
  CommandType.COMMAND_TYPE_CANCEL_TIMER,
  CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_RECORD_MARKER,
  CommandType.COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
  CommandType.COMMAND_TYPE_MODIFY_WORKFLOW_PROPERTIES,
  CommandType.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_PROTOCOL_MESSAGE,
]);
