/**
 * A run's activities: scheduling (timeout defaults as the real server fills them in), handing an
 * attempt to a poller or to the completing worker eagerly, heartbeats, completion, failure with
 * retry per policy, timeouts, cancellation. Retries write no events; `ActivityTaskStarted` is
 * written with the closing event, as the real server does. A scheduled or started attempt holds
 * one time-skipping lock; one in retry backoff does not.
 */
import { randomUUID } from 'node:crypto';
import type { TimerHandle } from '../clock';
import { notFound } from '../errors';
import {
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
  type Failure,
  type Payloads,
} from '../proto';
import { decideRetry, normalizeRetryPolicy, retryPolicyMsg, type RetryPolicy } from '../retry';
import { encodeToken } from '../tokens';
import type { ActivityState } from '../persistence/replay';
import type { Execution } from '../execution';

type PollActivityResponse = temporal.api.workflowservice.v1.PollActivityTaskQueueResponse.$Properties;

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

const TEN_YEARS = 10 * 365 * 24 * 3600 * 1000;

export class Activities {
  /** Pending activities by their ActivityTaskScheduled event id. */
  readonly byId = new Map<number, Activity>();

  constructor(private readonly run: Execution) {}

  private get clock() {
    return this.run.store.clock;
  }

  /** Returns the activity if it is to be started eagerly by the caller. */
  schedule(
    a: temporal.api.command.v1.IScheduleActivityTaskCommandAttributes,
    wftCompletedId: number,
  ): Activity | undefined {
    const run = this.run;
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
    const taskQueue = a.taskQueue?.name || run.taskQueue;
    const ev = run.append({
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
    const now = this.clock.now();
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
    this.byId.set(act.scheduledEventId, act);
    if (scheduleToClose) {
      act.closeTimer = this.clock.schedule(scheduleToClose, () =>
        this.timeOut(act, TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, act.attempt),
      );
    }
    // Eager execution only on the workflow's own queue (the completing worker polls it).
    const eager = a.requestEagerExecution === true && taskQueue === run.taskQueue;
    this.enqueue(act, eager);
    return eager ? act : undefined;
  }

  /** `eager`: the caller starts the attempt itself at once instead of queueing it for a poll. */
  private enqueue(act: Activity, eager = false): void {
    act.state = 'scheduled';
    act.attemptScheduledTime = this.clock.now();
    if (!act.locked) {
      act.locked = true;
      this.clock.lock();
    }
    const attempt = act.attempt;
    if (act.scheduleToStartMs) {
      act.attemptTimers.push(
        this.clock.schedule(act.scheduleToStartMs, () =>
          this.timeOut(act, TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START, attempt),
        ),
      );
    }
    this.run.touched();
    if (eager) return;
    const store = this.run.store;
    store.actMatching.add(store.queueKey(this.run.namespace, act.taskQueue), {
      take: (identity) => this.start(act, attempt, identity),
    });
  }

  live(act: Activity, attempt: number): boolean {
    return this.run.isOpen && this.byId.get(act.scheduledEventId) === act && act.attempt === attempt;
  }

  start(act: Activity, attempt: number, identity: string): PollActivityResponse | null {
    if (!this.live(act, attempt) || act.state !== 'scheduled') return null;
    const run = this.run;
    this.clearAttemptTimers(act);
    const now = this.clock.now();
    act.state = 'started';
    act.startedTime = now;
    act.identity = identity;
    act.retryAt = undefined;
    run.touched();
    act.attemptTimers.push(
      this.clock.schedule(act.startToCloseMs, () =>
        this.timeOut(act, TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE, attempt),
      ),
    );
    this.armHeartbeatTimer(act);
    return {
      taskToken: encodeToken({ t: 'a', r: run.runId, s: act.scheduledEventId, a: attempt }),
      workflowNamespace: run.namespace,
      workflowType: { name: run.workflowType },
      workflowExecution: run.execution,
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
    act.heartbeatTimer = this.clock.schedule(act.heartbeatMs, () =>
      this.timeOut(act, TimeoutType.TIMEOUT_TYPE_HEARTBEAT, attempt),
    );
  }

  private clearAttemptTimers(act: Activity): void {
    for (const t of act.attemptTimers) t.cancel();
    act.attemptTimers = [];
    act.heartbeatTimer?.cancel();
    act.heartbeatTimer = undefined;
  }

  /** Look up the started attempt a token or id refers to. */
  forToken(sid: number, attempt: number | null): Activity {
    if (!this.run.isOpen) throw notFound('Workflow execution already completed');
    const act = this.byId.get(sid);
    if (!act || (attempt !== null && act.attempt !== attempt) || act.state !== 'started') {
      throw notFound('Activity task not found');
    }
    return act;
  }

  byActivityId(activityId: string): Activity {
    if (!this.run.isOpen) throw notFound('Workflow execution already completed');
    for (const act of this.byId.values()) {
      if (act.activityId === activityId) {
        if (act.state !== 'started') throw notFound('Activity task not started');
        return act;
      }
    }
    throw notFound(`Activity ${activityId} not found`);
  }

  heartbeat(act: Activity, details: Payloads | null | undefined): boolean {
    if (details) act.heartbeatDetails = details;
    act.lastHeartbeatTime = this.clock.now();
    this.armHeartbeatTimer(act);
    this.run.touched();
    return act.cancelRequestedEventId > 0;
  }

  /** The activity is finished for good: drop it and write its Started + closing events. */
  private close(act: Activity, started: boolean, emitClose: (startedEventId: number) => void): void {
    const run = this.run;
    this.clearAttemptTimers(act);
    act.closeTimer?.cancel();
    this.byId.delete(act.scheduledEventId);
    const identity = act.identity;
    const attempt = act.attempt;
    const lastFailure = act.lastFailure;
    run.external(() => {
      let startedId = 0;
      if (started) {
        const ev = run.append({
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
    this.unlock(act);
  }

  private unlock(act: Activity): void {
    if (act.locked) {
      act.locked = false;
      this.clock.unlock();
    }
  }

  complete(act: Activity, result: Payloads | null | undefined, identity: string): void {
    this.close(act, true, (startedId) => {
      this.run.append({
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

  fail(act: Activity, failure: Failure | null | undefined, identity: string, details?: Payloads | null): void {
    if (details) act.heartbeatDetails = details;
    const f = failure ?? { message: 'activity failed' };
    const decision = decideRetry({
      policy: act.policy,
      attempt: act.attempt,
      failure: f,
      nowMs: this.clock.now(),
      expiresAtMs: act.scheduleToCloseMs ? act.firstScheduledTime + act.scheduleToCloseMs : 0,
    });
    if (decision.retry) return this.retry(act, f, decision.delayMs);
    this.close(act, true, (startedId) => {
      this.run.append({
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

  cancelReported(act: Activity, details: Payloads | null | undefined, identity: string): void {
    this.close(act, true, (startedId) => {
      this.run.append({
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
  private retry(act: Activity, failure: Failure, delayMs: number): void {
    this.clearAttemptTimers(act);
    act.lastFailure = failure;
    act.state = 'backoff';
    act.attempt++;
    this.armRetry(act, this.clock.now() + delayMs);
    this.run.touched();
    this.unlock(act);
  }

  private armRetry(act: Activity, atMs: number): void {
    act.retryAt = atMs;
    act.attemptTimers.push(
      this.clock.scheduleAt(atMs, () => {
        if (!this.run.isOpen || this.byId.get(act.scheduledEventId) !== act) return;
        act.attemptTimers = [];
        this.enqueue(act);
      }),
    );
  }

  private timeOut(act: Activity, type: number, attempt: number): void {
    if (
      !this.live(act, attempt) &&
      !(type === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE && this.byId.get(act.scheduledEventId) === act)
    ) {
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
        nowMs: this.clock.now(),
        expiresAtMs: act.scheduleToCloseMs ? act.firstScheduledTime + act.scheduleToCloseMs : 0,
      });
      if (decision.retry) return this.retry(act, { ...failure, cause: null }, decision.delayMs);
      retryState = decision.state;
    }
    this.close(act, wasStarted, (startedId) => {
      this.run.append({
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

  requestCancel(sid: number, wftCompletedId: number): void {
    const ev = this.run.append({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
      activityTaskCancelRequestedEventAttributes: {
        scheduledEventId: long(sid),
        workflowTaskCompletedEventId: long(wftCompletedId),
      },
    });
    const act = this.byId.get(sid);
    if (!act) return;
    act.cancelRequestedEventId = toNum(ev.eventId);
    if (act.state !== 'started') {
      // Not running (queued or between retries): cancelled at once.
      this.close(act, false, () => {
        this.run.append({
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

  /** The run closed: every timer stopped, every lock released, nothing pending. */
  onRunClosed(): void {
    for (const act of this.byId.values()) {
      this.clearAttemptTimers(act);
      act.closeTimer?.cancel();
      this.unlock(act);
    }
    this.byId.clear();
  }

  /** What history cannot tell after a restart: attempts, heartbeats, backoff ends. */
  durableStates(): ActivityState[] {
    const out: ActivityState[] = [];
    for (const a of this.byId.values()) {
      out.push({
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
    return out;
  }

  /** After a restart: queued again, kept started with their timeouts, or back in backoff. */
  restore(acts: Activity[]): void {
    const clock = this.clock;
    for (const act of acts) {
      this.byId.set(act.scheduledEventId, act);
      if (act.scheduleToCloseMs) {
        act.closeTimer = clock.scheduleAt(act.firstScheduledTime + act.scheduleToCloseMs, () =>
          this.timeOut(act, TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, act.attempt),
        );
      }
      if (act.state === 'scheduled') {
        this.enqueue(act);
      } else if (act.state === 'started') {
        // The worker may still be running it and report with its token; if not, its timeouts retry it.
        act.locked = true;
        clock.lock();
        const attempt = act.attempt;
        act.attemptTimers.push(
          clock.scheduleAt(act.startedTime + act.startToCloseMs, () =>
            this.timeOut(act, TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE, attempt),
          ),
        );
        // The heartbeat timeout counts from the restart: the worker gets one interval to reconnect.
        this.armHeartbeatTimer(act);
      } else {
        this.armRetry(act, act.retryAt || clock.now());
      }
    }
  }
}
