/**
 * The open workflows of a test environment, on either official server: the dev server answers
 * `ListWorkflowExecutions` by query; sdk-java's test server implements only the older
 * `ListOpenWorkflowExecutions`, whose rows we describe for the task queue
 * (docs/testing.md "One Temporal server of each kind per run").
 */
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { rawTestService, type TestService } from './time-skipping-waits';

export interface OpenWorkflow {
  workflowId: string;
  runId: string;
  taskQueue: string;
}

type Describe = temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse;

async function describe(client: Client, workflowId: string, runId: string): Promise<Describe | undefined> {
  return client.workflowService
    .describeWorkflowExecution({ namespace: client.options.namespace, execution: { workflowId, runId } })
    .catch(() => undefined);
}

/** Every open workflow of the namespace with its task queue (from `describe` on the test server). */
export async function listOpenWorkflows(client: Client): Promise<OpenWorkflow[]> {
  const namespace = client.options.namespace;
  const open: OpenWorkflow[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listOpenWorkflowExecutions({
      namespace,
      maximumPageSize: 1000,
      nextPageToken,
    });
    for (const info of page.executions ?? []) {
      const workflowId = info.execution?.workflowId ?? '';
      const runId = info.execution?.runId ?? '';
      let taskQueue = info.taskQueue ?? '';
      if (!taskQueue) taskQueue = (await describe(client, workflowId, runId))?.executionConfig?.taskQueue?.name ?? '';
      open.push({ workflowId, runId, taskQueue });
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return open;
}

export interface StuckWorkflow extends OpenWorkflow {
  /** What waits: `workflow task` or `activity <type>`, and for how long. */
  waiting: string[];
}

type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;

function waitingOf(raw: Describe, now: number, olderThanMs: number): string[] {
  const ms = (t: Timestamp): number => (t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : now);
  const waiting: string[] = [];
  const wft = raw.pendingWorkflowTask;
  if (wft && wft.state === temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED) {
    const age = now - ms(wft.scheduledTime);
    if (age > olderThanMs) waiting.push(`workflow task for ${Math.round(age / 1000)} s`);
  }
  for (const a of raw.pendingActivities ?? []) {
    // An attempt started long ago: its worker has most likely gone (activities here take moments).
    if (a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED) {
      const age = now - ms(a.lastStartedTime);
      if (age > olderThanMs)
        waiting.push(`activity ${a.activityType?.name ?? '?'} started ${Math.round(age / 1000)} s ago`);
      continue;
    }
    if (a.state !== temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED) continue;
    // An attempt waiting out its retry backoff is not waiting for a worker.
    const since = Math.max(ms(a.scheduledTime), a.lastAttemptCompleteTime ? ms(a.lastAttemptCompleteTime) : 0);
    const due = a.nextAttemptScheduleTime ? ms(a.nextAttemptScheduleTime) : since;
    const age = now - Math.max(since, due);
    if (age > olderThanMs) waiting.push(`activity ${a.activityType?.name ?? '?'} for ${Math.round(age / 1000)} s`);
  }
  return waiting;
}

/**
 * Running workflows with a workflow task or an activity that has waited longer than `olderThanMs`
 * for a worker to take it: work on a queue nobody polls any more. On the time-skipping server such
 * a task holds the global clock, so a run-wide check reports them.
 */
export async function stuckWorkflows(env: TestWorkflowEnvironment, olderThanMs: number): Promise<StuckWorkflow[]> {
  const now = await env.currentTimeMs();
  const stuck: StuckWorkflow[] = [];
  for (const wf of await listOpenWorkflows(env.client)) {
    const raw = await describe(env.client, wf.workflowId, wf.runId);
    const waiting = raw ? waitingOf(raw, now, olderThanMs) : [];
    if (waiting.length > 0) stuck.push({ ...wf, waiting });
  }
  return stuck;
}

/** sdk-java's test service of a time-skipping environment's connection, its own calls. */
function testServiceOf(connection: object): TestService {
  const service = rawTestService(connection);
  if (!service) throw new Error('not the time-skipping environment (test/support/temporal.ts testEnv())');
  return service;
}

/**
 * The time-skipping locks a running workflow holds on sdk-java's test server: one from the moment
 * it schedules a workflow task until a worker completes it, one per activity from its scheduling
 * to its end (none while an attempt waits out its retry backoff).
 */
function locksHeld(raw: Describe | undefined, now: number): number {
  if (raw?.workflowExecutionInfo?.status !== RUNNING) return 0;
  const ms = (t: Timestamp): number => (t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0);
  const activities = (raw.pendingActivities ?? []).filter((a) => ms(a.nextAttemptScheduleTime) <= now);
  return (raw.pendingWorkflowTask ? 1 : 0) + activities.length;
}

/**
 * Terminates a run, leaving the shared clock as it found it. A terminate on sdk-java's test server
 * does not give back the locks the run held (`locksHeld`), so every later test would wait in real
 * time: we wait up to `idleWaitMs` for a worker to finish the task in hand, terminate, then release
 * what the run still held. On the dev server it is a plain terminate.
 */
export async function endRun(
  client: Client,
  workflowId: string,
  runId: string | undefined,
  reason: string,
  idleWaitMs = 1_000,
): Promise<void> {
  const timeSkipping = rawTestService(client.connection) !== undefined;
  const now = async (): Promise<number> =>
    timeSkipping
      ? Number((await testServiceOf(client.connection).getCurrentTime({})).time?.seconds ?? 0) * 1000
      : Date.now();
  const look = async () => {
    const raw = await describe(client, workflowId, runId ?? '');
    return { locks: locksHeld(raw, await now()), task: Boolean(raw?.pendingWorkflowTask) };
  };
  // Only a workflow task in hand is worth waiting for: a stub's activity may never return. A lock
  // released meanwhile and again below is taken back by the next clock check (resetTimeSkipping).
  const deadline = Date.now() + idleWaitMs;
  let seen = await look();
  while (seen.task && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = await look();
  }
  const locks = seen.locks;
  const ended = await client.workflow
    .getHandle(workflowId, runId)
    .terminate(reason)
    .then(
      () => true,
      () => false,
    );
  if (!ended || !timeSkipping) return;
  const service = testServiceOf(client.connection);
  for (let i = 0; i < locks; i++)
    if (
      !(await service.unlockTimeSkipping({}).then(
        () => true,
        () => false,
      ))
    )
      break;
}

/** The probe's virtual sleep: short, so that a locked clock costs little real time to detect. */
const PROBE_MS = 300;

/**
 * Whether time skips: `PROBE_MS` of virtual time pass at once only if no other lock is held (a
 * locked clock makes them pass in real time, never sooner). `free` = the server refused to
 * unlock: no lock at all was held, and time ran on its own. The refused call still takes the lock
 * back at its sleep's end (sdk-java schedules that relock before it unlocks), at once since time
 * runs free: the count is mended by the refusal itself, and the caller takes no lock.
 */
async function clock(service: TestService): Promise<'skips' | 'locked' | 'free'> {
  const t0 = Date.now();
  const duration = { seconds: 0, nanos: PROBE_MS * 1_000_000 };
  // A refusal late in a run never answers (test/support/time-skipping-waits.ts REFUSAL_WAIT_MS).
  const probe = service.unlockTimeSkippingWithSleepWithin
    ? service.unlockTimeSkippingWithSleepWithin(PROBE_WAIT_MS, { duration })
    : service.unlockTimeSkippingWithSleep({ duration });
  const slept = await probe.then(
    () => true,
    () => false,
  );
  if (!slept) return 'free';
  return Date.now() - t0 < PROBE_MS * 0.9 ? 'skips' : 'locked';
}

/** How long a probe is waited for: its 300 ms in real time when locked, or a refusal. */
const PROBE_WAIT_MS = 3_000;

/** What `resetTimeSkipping` did: locks given back, runs it ended, and whether time skips now. */
export interface ClockReset {
  released: number;
  ended: string[];
  skips: boolean;
}

/**
 * Between tests: asks whether 300 ms of virtual time pass at once (a count found at zero takes
 * the idle lock back); if not, ends the runs whose task has waited seconds for a worker (the test
 * that owned them is over), then gives back the locks no open run holds in sight
 * (`giveBackUnseenLocks`). After a file's last test (`endRuns`) it first ends every open run.
 */
export async function resetTimeSkipping(
  env: TestWorkflowEnvironment,
  opts: { endRuns: boolean } = { endRuns: true },
): Promise<ClockReset> {
  const service = testServiceOf(env.connection);
  const ended: string[] = [];
  if (opts.endRuns) {
    // A run a finished file left waiting on a timer wakes when a later file skips time, on a queue
    // whose worker is gone, and its task then holds the clock: no run outlives its file here.
    const open = await listOpenWorkflows(env.client);
    await Promise.all(
      open.map((wf) => endRun(env.client, wf.workflowId, wf.runId, 'left running by a finished test file', 1_000)),
    );
    ended.push(...open.map((wf) => wf.workflowId));
  }
  // The usual case, and the only question asked between two tests of one file.
  let state = await clock(service);
  // No lock was held (one given back too many): the refused probe took the idle lock back.
  if (state === 'free') state = await clock(service);
  if (state === 'skips') return { released: 0, ended, skips: true };
  for (const wf of await runsHoldingTheClock(env, 3_000)) {
    await endRun(env.client, wf.workflowId, wf.runId, 'its task waited for a worker after its test ended', 0);
    ended.push(wf.workflowId);
  }
  // Never more than the locks no open run holds: one given back too many makes the server refuse
  // the unlock of a task that ends later, inside its own update of that run.
  const released = await giveBackUnseenLocks(env, service);
  return { released, ended, skips: (await clock(service)) === 'skips' };
}

/** Locks given back within a file at most, one per probe (each costs 300 ms while locked). */
const MAX_UNSEEN_LOCKS = 40;

/**
 * Within a file: while the clock is locked and no open run holds a lock we can see, the lock is
 * one the server leaked (seen after a chain of continue-as-new runs, with no run left holding it),
 * and it is given back, one per probe. A run of the file at work
 * (a lock in sight) stops it: that lock is not ours to give back.
 */
async function giveBackUnseenLocks(env: TestWorkflowEnvironment, service: TestService): Promise<number> {
  let released = 0;
  for (let i = 0; i < MAX_UNSEEN_LOCKS; i++) {
    const state = await clock(service);
    if (state === 'skips') break;
    if (state === 'free') continue;
    if ((await locksInSight(env)) > 0) break;
    if (
      !(await service.unlockTimeSkipping({}).then(
        () => true,
        () => false,
      ))
    )
      break;
    released++;
  }
  return released;
}

/** The locks the open runs hold as `describe` shows them. */
async function locksInSight(env: TestWorkflowEnvironment): Promise<number> {
  const now = await env.currentTimeMs();
  const open = await listOpenWorkflows(env.client);
  const raws = await Promise.all(open.map((wf) => describe(env.client, wf.workflowId, wf.runId)));
  return raws.reduce((sum, raw) => sum + locksHeld(raw, now), 0);
}

function waitsForAWorker(raw: Describe | undefined, now: number): boolean {
  if (!raw || raw.workflowExecutionInfo?.status !== RUNNING) return false;
  const states = temporal.api.enums.v1;
  if (raw.pendingWorkflowTask?.state === states.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED)
    return true;
  const ms = (t: Timestamp): number => (t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0);
  return (raw.pendingActivities ?? []).some(
    (a) =>
      a.state === states.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED && ms(a.nextAttemptScheduleTime) <= now,
  );
}

/**
 * Waits (up to `waitMs`) for the open runs' tasks in hand to finish, as a live worker's do within
 * milliseconds; returns the runs that still hold a clock lock then (no worker takes their task).
 */
async function runsHoldingTheClock(env: TestWorkflowEnvironment, waitMs: number): Promise<OpenWorkflow[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const now = await env.currentTimeMs();
    const open = await listOpenWorkflows(env.client);
    const raws = await Promise.all(open.map((wf) => describe(env.client, wf.workflowId, wf.runId)));
    if (raws.every((raw) => locksHeld(raw, now) === 0)) return [];
    // A task no worker has taken (not one in a live worker's hands: a test's stub may hold an
    // activity on purpose).
    if (Date.now() >= deadline) return open.filter((_, i) => waitsForAWorker(raws[i], now));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const RUNNING = temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;

/**
 * Holds the time-skipping clock for a test that must see its runs stand still (an API test whose
 * subscription must stay PENDING_APPROVAL): one more lock, so that time passes in real time only,
 * whether the count was at its idle lock or at zero (time running free). `release` gives it back,
 * leaving the count as found. On the dev server both are no-ops.
 */
export async function holdClock(env: TestWorkflowEnvironment): Promise<{ release(): Promise<void> }> {
  const service = rawTestService(env.connection);
  if (!service) return { release: async () => {} };
  await service.lockTimeSkipping({});
  return { release: async () => void (await service.unlockTimeSkipping({}).catch(() => undefined)) };
}
