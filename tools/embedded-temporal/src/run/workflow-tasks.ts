/**
 * A run's workflow task: scheduling it (normal or sticky queue), handing it to a poller,
 * completing it (commands and update messages applied in order, buffered events written after
 * them), failing it and timing it out. One task at a time per run; a scheduled or started task
 * holds one time-skipping lock (src/clock.ts), released exactly once.
 */
import { randomUUID } from 'node:crypto';
import type { TimerHandle } from '../clock';
import { invalidArgument, notFound } from '../errors';
import {
  CommandType,
  durationMs,
  EventType,
  long,
  msDuration,
  msTimestamp,
  TaskQueueKind,
  temporal,
  TimeoutType,
  toNum,
} from '../proto';
import { encodeToken } from '../tokens';
import type { Execution } from '../execution';
import type { Activity } from './activities';
import { closingCommands } from './commands';
import type { PendingQuery } from './queries';

type PollWftResponse = temporal.api.workflowservice.v1.PollWorkflowTaskQueueResponse.$Properties;
type PollActivityResponse = temporal.api.workflowservice.v1.PollActivityTaskQueueResponse.$Properties;
type WorkflowQuery = temporal.api.query.v1.IWorkflowQuery;
export type CompleteWftRequest = temporal.api.workflowservice.v1.IRespondWorkflowTaskCompletedRequest;

export interface WorkflowTask {
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

export class WorkflowTasks {
  wft: WorkflowTask | null = null;
  nextAttempt = 1;
  lastCompletedStartedId = 0;
  sticky: { queue: string; scheduleToStartMs: number } | null = null;

  constructor(private readonly run: Execution) {}

  normalKey(): string {
    return this.run.store.queueKey(this.run.namespace, this.run.taskQueue);
  }

  schedule(): void {
    const run = this.run;
    if (!run.isOpen || this.wft || run.backoffTimer) return;
    const attempt = this.nextAttempt;
    const ev = run.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      workflowTaskScheduledEventAttributes: {
        taskQueue: { name: run.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        startToCloseTimeout: msDuration(run.p.taskTimeoutMs),
        attempt,
      },
    });
    this.wft = {
      state: 'scheduled',
      scheduledEventId: toNum(ev.eventId),
      startedEventId: 0,
      attempt,
      queueKey: '',
      scheduledTime: run.store.clock.now(),
      queries: run.queries.takePending(),
      locked: true,
    };
    run.store.clock.lock();
    this.dispatch();
  }

  /** Put the scheduled task on the sticky queue if the worker asked for one, else the normal queue. */
  dispatch(): void {
    const wft = this.wft;
    if (!wft || wft.state !== 'scheduled') return;
    const store = this.run.store;
    const sid = wft.scheduledEventId;
    if (this.sticky) {
      const key = store.queueKey(this.run.namespace, this.sticky.queue);
      wft.queueKey = key;
      store.wfMatching.add(key, { take: (identity) => this.start(sid, key, identity) });
      const timeout = this.sticky.scheduleToStartMs || 5000;
      wft.timer = store.clock.schedule(timeout, () => this.stickyTimeout(sid));
    } else {
      const key = this.normalKey();
      wft.queueKey = key;
      store.wfMatching.add(key, { take: (identity) => this.start(sid, key, identity) });
    }
  }

  /** Sticky worker did not pick the task up in time: forget stickiness, move it to the normal queue. */
  private stickyTimeout(sid: number): void {
    const wft = this.wft;
    if (!wft || wft.state !== 'scheduled' || wft.scheduledEventId !== sid) return;
    this.sticky = null;
    this.dispatch();
  }

  /** Called when the worker behind a sticky queue shut down. */
  clearStickyQueue(queue?: string): void {
    if (!this.sticky || (queue !== undefined && this.sticky.queue !== queue)) return;
    this.sticky = null;
    if (this.wft?.state === 'scheduled') {
      this.wft.timer?.cancel();
      this.dispatch();
    }
  }

  private start(sid: number, key: string, identity: string): PollWftResponse | null {
    const run = this.run;
    const wft = this.wft;
    if (!run.isOpen || !wft || wft.state !== 'scheduled' || wft.scheduledEventId !== sid || wft.queueKey !== key) {
      return null;
    }
    wft.timer?.cancel();
    const sticky = key !== this.normalKey();
    const started = run.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      workflowTaskStartedEventAttributes: {
        scheduledEventId: long(sid),
        identity,
        requestId: randomUUID(),
      },
    });
    wft.state = 'started';
    wft.startedEventId = toNum(started.eventId);
    wft.timer = run.store.clock.schedule(run.p.taskTimeoutMs, () => this.timeOut(sid, wft.attempt));
    const queries: Record<string, WorkflowQuery> = {};
    for (const q of wft.queries) queries[q.id] = q.query;
    run.notify();
    return {
      taskToken: encodeToken({ t: 'w', r: run.runId, s: sid, a: wft.attempt }),
      workflowExecution: run.execution,
      workflowType: { name: run.workflowType },
      previousStartedEventId: long(this.lastCompletedStartedId),
      startedEventId: long(wft.startedEventId),
      attempt: wft.attempt,
      // Sticky: the events after the last completed task's WorkflowTaskStarted; else all of them.
      history: run.log.message(sticky ? this.lastCompletedStartedId : 0),
      workflowExecutionTaskQueue: { name: run.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      scheduledTime: msTimestamp(wft.scheduledTime),
      startedTime: started.eventTime,
      queries,
      messages: run.updates.deliver(sid),
    };
  }

  private checkToken(sid: number, attempt: number): WorkflowTask {
    const wft = this.wft;
    if (!this.run.isOpen) throw notFound('Workflow execution already completed');
    if (!wft || wft.state !== 'started' || wft.scheduledEventId !== sid || wft.attempt !== attempt) {
      throw notFound('Workflow task not found');
    }
    return wft;
  }

  /** Ends the started task's bookkeeping; the caller decides what comes next. */
  private end(wft: WorkflowTask): void {
    wft.timer?.cancel();
    if (this.wft === wft) this.wft = null;
  }

  /** Call after any follow-up work took its own lock, so time cannot jump in between. */
  private releaseLock(wft: WorkflowTask): void {
    if (!wft.locked) return;
    wft.locked = false;
    this.run.store.clock.unlock();
  }

  /** Failure paths (worker failure, timeout, unhandled command): retry the task with attempt+1. */
  private retry(wft: WorkflowTask, nextAttempt: number): void {
    const run = this.run;
    this.end(wft);
    // Queries attached to the failed attempt ride the next one.
    run.queries.requeue(wft.queries);
    // Like the Java server: after a failure the retry goes to the normal queue with full history.
    this.sticky = null;
    run.updates.undeliver();
    this.nextAttempt = nextAttempt;
    run.log.flush();
    this.schedule();
    this.releaseLock(wft);
    run.notify();
  }

  timeOut(sid: number, attempt: number): void {
    const wft = this.wft;
    if (!this.run.isOpen || !wft || wft.state !== 'started' || wft.scheduledEventId !== sid || wft.attempt !== attempt)
      return;
    this.run.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
      workflowTaskTimedOutEventAttributes: {
        scheduledEventId: long(sid),
        startedEventId: long(wft.startedEventId),
        timeoutType: TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE,
      },
    });
    this.retry(wft, wft.attempt + 1);
  }

  fail(sid: number, attempt: number, req: temporal.api.workflowservice.v1.IRespondWorkflowTaskFailedRequest): void {
    const wft = this.checkToken(sid, attempt);
    this.run.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
      workflowTaskFailedEventAttributes: {
        scheduledEventId: long(sid),
        startedEventId: long(wft.startedEventId),
        cause: req.cause,
        failure: req.failure,
        identity: req.identity,
      },
    });
    this.retry(wft, wft.attempt + 1);
  }

  /**
   * Returns the activity tasks handed to the completing worker for eager execution: activities it
   * asked for (`request_eager_execution`) on this run's own task queue, started for it at once, as
   * the real server does. Everything else waits for a poll.
   */
  complete(sid: number, attempt: number, req: CompleteWftRequest): PollActivityResponse[] {
    const run = this.run;
    const wft = this.checkToken(sid, attempt);
    const commands = req.commands ?? [];
    run.commands.validate(commands);
    const messages = req.messages ?? [];
    run.updates.validate(commands, messages);
    const closing = commands.some((c) => closingCommands.has(c.commandType ?? 0));

    if (closing && (run.log.hasBuffered() || run.updates.hasUndelivered())) {
      // The workflow decided to close without seeing new events or updates: reject and let it see them.
      run.append({
        eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
        workflowTaskFailedEventAttributes: {
          scheduledEventId: long(sid),
          startedEventId: long(wft.startedEventId),
          cause: temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
          identity: req.identity,
        },
      });
      run.queries.answer(wft, req);
      this.retry(wft, 1);
      throw invalidArgument('UnhandledCommand');
    }

    const completed = run.append({
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
    this.nextAttempt = 1;
    const sq = req.stickyAttributes?.workerTaskQueue?.name;
    this.sticky = sq
      ? { queue: sq, scheduleToStartMs: durationMs(req.stickyAttributes?.scheduleToStartTimeout) }
      : null;

    run.queries.answer(wft, req);
    // Commands run while the task still counts as started, so anything they cause for this run
    // (child started, self-signal, immediate activity cancel) is buffered and written after them.
    const eager: Activity[] = [];
    const unplaced = new Map(messages.map((m) => [m.id ?? '', m]));
    for (const cmd of commands) {
      if (!run.isOpen) break;
      if (cmd.commandType === CommandType.COMMAND_TYPE_PROTOCOL_MESSAGE) {
        // The message's event goes exactly where its command stands among the command events.
        const id = cmd.protocolMessageCommandAttributes?.messageId ?? '';
        const msg = unplaced.get(id);
        unplaced.delete(id);
        if (msg) this.applyUpdateMessage(msg, req.identity ?? '');
      } else if (cmd.commandType === CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK) {
        const act = run.acts.schedule(cmd.scheduleActivityTaskCommandAttributes ?? {}, completedId);
        if (act) eager.push(act);
      } else {
        run.commands.apply(cmd, completedId, req.identity ?? '');
      }
    }
    // Messages without a command (rejections) change no history.
    for (const msg of unplaced.values()) this.applyUpdateMessage(msg, req.identity ?? '');
    run.updates.afterCompletion();
    const activityTasks: PollActivityResponse[] = [];
    for (const act of eager) {
      // Not live any more (run closed, cancelled by a later command): nothing to hand out.
      if (!run.acts.live(act, act.attempt) || act.state !== 'scheduled') continue;
      const task = run.acts.start(act, act.attempt, req.identity ?? '');
      if (task) activityTasks.push(task);
    }

    this.end(wft);
    if (run.isOpen) {
      const hadBuffered = run.log.flush();
      if (hadBuffered || req.forceCreateNewWorkflowTask || run.updates.hasUndelivered()) this.schedule();
      if (!this.wft) run.queries.dispatchLegacy();
    }
    this.releaseLock(wft);
    run.notify();
    return activityTasks;
  }

  /**
   * `return_new_workflow_task`: if the completion left a new task scheduled on the completing
   * worker's sticky queue, start it now for that worker and return it (partial history), as the
   * real server does; it then needs no poll. Null if there is none.
   */
  takeInline(identity: string): PollWftResponse | null {
    const wft = this.wft;
    if (!this.run.isOpen || !wft || wft.state !== 'scheduled' || !this.sticky) return null;
    if (wft.queueKey !== this.run.store.queueKey(this.run.namespace, this.sticky.queue)) return null;
    return this.start(wft.scheduledEventId, wft.queueKey, identity);
  }

  /**
   * Eager workflow start (`request_eager_execution`): the first workflow task, started for the
   * starter at once with the full history, as the real server returns it in the start answer.
   * Null when there is none to hand out (start delay, or it was already taken).
   */
  takeEagerly(identity: string): PollWftResponse | null {
    const wft = this.wft;
    if (!this.run.isOpen || !wft || wft.state !== 'scheduled' || wft.queueKey !== this.normalKey()) return null;
    return this.start(wft.scheduledEventId, wft.queueKey, identity);
  }

  private applyUpdateMessage(msg: temporal.api.protocol.v1.IMessage, identity: string): void {
    const run = this.run;
    const effect = run.updates.apply(msg, identity);
    if (effect.event && run.isOpen) effect.commit(toNum(run.append(effect.event).eventId));
  }

  /** The run closed: a started task's completion will get NOT_FOUND; its lock is released here, once. */
  onRunClosed(): void {
    const wft = this.wft;
    if (wft) {
      wft.timer?.cancel();
      this.wft = null;
      this.run.queries.requeue(wft.queries);
      wft.queries = [];
      this.releaseLock(wft);
    }
    this.sticky = null;
  }

  /** After a restart: the task as it was at the crash (see src/persistence/replay.ts). */
  restore(w: {
    state: 'scheduled' | 'started';
    scheduledEventId: number;
    startedEventId: number;
    attempt: number;
    scheduledTime: number;
    startedTime: number;
  }): void {
    const clock = this.run.store.clock;
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
      this.dispatch();
    } else {
      // Started before the crash: its worker may still complete it; otherwise it times out and is retried.
      wft.queueKey = this.normalKey();
      wft.timer = clock.scheduleAt(w.startedTime + this.run.p.taskTimeoutMs, () =>
        this.timeOut(w.scheduledEventId, w.attempt),
      );
    }
  }
}
