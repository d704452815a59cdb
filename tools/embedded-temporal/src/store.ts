/**
 * All executions, by namespace and workflow id (a chain of runs: continue-as-new and retries
 * share a workflow id) and by run id; workflow-id reuse/conflict policies and request-id dedup;
 * namespaces; the two task-queue matchers; legacy query routing; visibility (list/count).
 */
import { randomUUID } from 'node:crypto';
import { Clock } from './clock';
import { DormantRun, isDormant } from './dormant';
import { alreadyExists, invalidArgument, notFound } from './errors';
import { Execution, type PendingQuery, type QueryOutcome } from './execution';
import type { Logger } from './logger';
import { Matching } from './matching';
import type { HistorySpans, Journal, LoadedState } from './persistence/journal';
import { replay, runParamsFromStarted } from './persistence/replay';
import {
  durationMs,
  google,
  temporal,
  timestampMs,
  WorkflowExecutionStatus,
  type Failure,
  type Payloads,
} from './proto';
import { normalizeRetryPolicy, type RetryPolicy } from './retry';
import type { VisRow } from './visibility/query';
import { Visibility } from './visibility/visibility';

type PollWftResponse = temporal.api.workflowservice.v1.PollWorkflowTaskQueueResponse.$Properties;
type PollActivityResponse = temporal.api.workflowservice.v1.PollActivityTaskQueueResponse.$Properties;
const ReusePolicy = temporal.api.enums.v1.WorkflowIdReusePolicy;
const ConflictPolicy = temporal.api.enums.v1.WorkflowIdConflictPolicy;
const ParentClosePolicy = temporal.api.enums.v1.ParentClosePolicy;

/** The runs of one workflow id, oldest first; one run is kept as itself. */
type Chain = Execution | DormantRun | (Execution | DormantRun)[];

/** Everything needed to create one run. */
export interface RunParams {
  namespace: string;
  workflowId: string;
  runId: string;
  workflowType: string;
  taskQueue: string;
  input?: Payloads | null;
  header?: temporal.api.common.v1.IHeader | null;
  memo?: temporal.api.common.v1.IMemo | null;
  searchAttributes?: temporal.api.common.v1.ISearchAttributes | null;
  executionTimeoutMs: number;
  runTimeoutMs: number;
  taskTimeoutMs: number;
  identity: string;
  requestId: string;
  retryPolicy?: RetryPolicy;
  attempt: number;
  firstExecutionRunId: string;
  continuedExecutionRunId?: string;
  initiator?: number;
  continuedFailure?: Failure | null;
  lastCompletionResult?: Payloads | null;
  /** Delay before the first workflow task (start delay, retry backoff, continue-as-new backoff). */
  backoffMs: number;
  /** Absolute end of the whole chain (execution timeout); 0 = none. */
  expirationTime: number;
  parent?: { namespace: string; workflowId: string; runId: string; initiatedEventId: number };
  root?: temporal.api.common.v1.IWorkflowExecution;
  priority?: temporal.api.common.v1.IPriority | null;
}

export interface StartOptions {
  params: Omit<RunParams, 'runId' | 'firstExecutionRunId' | 'attempt' | 'expirationTime'>;
  reusePolicy: number;
  conflictPolicy: number;
  signal?: { name: string; input?: Payloads | null; header?: temporal.api.common.v1.IHeader | null; identity: string };
}

interface NamespaceInfo {
  name: string;
  id: string;
  description: string;
  retentionMs: number;
}

const TEN_SECONDS = 10_000;
const MAX_TASK_TIMEOUT = 120_000;

export class Store {
  readonly wfMatching: Matching<PollWftResponse>;
  readonly actMatching: Matching<PollActivityResponse>;
  /** Legacy query tasks handed out, by query id, until answered. */
  readonly queries = new Map<string, PendingQuery>();
  readonly namespaces = new Map<string, NamespaceInfo>();
  /** Live runs and parked ones (src/dormant.ts); `live()` turns a parked one back into a run. */
  /**
   * By namespace, then workflow id: the id string is the run's own, where one joined key per
   * chain would be a second copy of it. A chain of one run (nearly all of them: a charge's) is
   * the run itself, not an array holding it (docs/performance.md "Memory per idle run").
   */
  private chains = new Map<string, Map<string, Chain>>();
  private runs = new Map<string, Execution | DormantRun>();
  /** Visibility rows and indexes (src/visibility/visibility.ts); a workflow id's runs are its chain. */
  readonly visibility = new Visibility((namespace, workflowId) => {
    const c = this.chains.get(namespace)?.get(workflowId);
    return c === undefined ? [] : Array.isArray(c) ? c.map((r) => r.runId) : [c.runId];
  });
  /**
   * Parking (src/dormant.ts): runs become candidates when their first-task delay begins, and
   * `parkIdle` parks those still parkable one call later. Off (0) unless the server sets it.
   */
  parkIdleAfterMs = 0;
  private idleNew = new Set<Execution>();
  private idleOld = new Set<Execution>();
  private parkedRuns = 0;
  private parkedClosed = 0;
  /** The last parked run's sticky queue (see `sharedSticky`). */
  private lastSticky: DormantRun['sticky'] = null;
  /** The last parked run's type and queue names: equal ones share that string (most idle runs are of one kind). */
  private lastType = '';
  private lastQueue = '';
  /** Durable mode (`--db-filename`): every change is journaled; see src/persistence/journal.ts. */
  journal?: Journal;
  /** Closed runs whose history is packed at the next sweep (see RunHistory.pack). */
  private toPack: Execution[] = [];
  private packTimer: NodeJS.Immediate | undefined;

  constructor(
    readonly clock: Clock,
    readonly logger: Logger,
  ) {
    const onError = (err: unknown): void => logger.error({ err: String(err) }, 'task hand-over failed');
    this.wfMatching = new Matching<PollWftResponse>(onError);
    this.actMatching = new Matching<PollActivityResponse>(onError);
    this.registerNamespace('default', 'Default namespace', 3 * 24 * 3600 * 1000);
  }

  queueKey(namespace: string, name: string): string {
    return `${namespace}\u0000${name}`;
  }

  registerNamespace(name: string, description: string, retentionMs: number): NamespaceInfo {
    if (this.namespaces.has(name)) throw alreadyExists(`Namespace ${name} already exists`);
    const info = { name, id: randomUUID(), description, retentionMs };
    this.namespaces.set(name, info);
    this.journal?.namespaceRegistered(info);
    return info;
  }

  requireNamespace(name: string | null | undefined): NamespaceInfo {
    if (!name) throw invalidArgument('Namespace not set on request');
    const ns = this.namespaces.get(name);
    if (!ns) throw notFound(`Namespace ${name} is not found`);
    return ns;
  }

  /** The latest run of a workflow id. */
  private latest(namespace: string, workflowId: string): Execution | DormantRun | undefined {
    const c = this.chains.get(namespace)?.get(workflowId);
    return Array.isArray(c) ? c[c.length - 1] : c;
  }

  /** runId '' = the latest run of the chain. */
  findRun(namespace: string, workflowId: string, runId: string): Execution | undefined {
    if (runId) {
      const r = this.runs.get(runId);
      return r && r.namespace === namespace && (!workflowId || r.workflowId === workflowId) ? this.live(r) : undefined;
    }
    return this.live(this.latest(namespace, workflowId));
  }

  getRun(namespace: string, execution: temporal.api.common.v1.IWorkflowExecution | null | undefined): Execution {
    const workflowId = execution?.workflowId ?? '';
    if (!workflowId) throw invalidArgument('WorkflowId is not set on request');
    const run = this.findRun(namespace, workflowId, execution?.runId ?? '');
    if (!run)
      throw notFound(
        `workflow execution not found for workflow ID "${workflowId}" and run ID "${execution?.runId ?? ''}"`,
      );
    return run;
  }

  runById(runId: string): Execution | undefined {
    return this.live(this.runs.get(runId));
  }

  /** StartWorkflowExecution / SignalWithStart / child start. */
  startWorkflow(opts: StartOptions): { run: Execution; started: boolean } {
    const { params } = opts;
    const current = this.live(this.latest(params.namespace, params.workflowId));
    if (current) {
      if (params.requestId && current.p.requestId === params.requestId) {
        return { run: current, started: true }; // a retried request
      }
      const terminateRunning =
        opts.conflictPolicy === ConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING ||
        opts.reusePolicy === ReusePolicy.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING;
      if (current.isOpen) {
        if (opts.conflictPolicy === ConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING) {
          if (opts.signal)
            current.signal({
              signalName: opts.signal.name,
              input: opts.signal.input,
              header: opts.signal.header,
              identity: opts.signal.identity,
            });
          return { run: current, started: false };
        }
        if (!terminateRunning) {
          throw alreadyExists(
            `Workflow execution is already running. WorkflowId: ${params.workflowId}, RunId: ${current.runId}.`,
          );
        }
        current.terminate('terminated by a new start (id conflict policy)', null, params.identity);
      } else {
        const failedOnly = opts.reusePolicy === ReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY;
        const completedOk = current.status === WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED;
        if (opts.reusePolicy === ReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE || (failedOnly && completedOk)) {
          throw alreadyExists(
            `Workflow execution already finished and its id reuse policy does not allow a new run. WorkflowId: ${params.workflowId}, RunId: ${current.runId}.`,
          );
        }
      }
    }
    const runId = randomUUID();
    const expirationTime = params.executionTimeoutMs ? this.clock.now() + params.executionTimeoutMs : 0;
    const run = this.createRun(
      { ...params, runId, firstExecutionRunId: runId, attempt: 1, expirationTime },
      opts.signal,
    );
    return { run, started: true };
  }

  private addRun(run: Execution): void {
    let byId = this.chains.get(run.namespace);
    if (!byId) {
      byId = new Map();
      this.chains.set(run.namespace, byId);
    }
    const chain = byId.get(run.workflowId);
    if (chain === undefined) byId.set(run.workflowId, run);
    else if (Array.isArray(chain)) chain.push(run);
    // A literal holds exactly its elements; an empty array grown by push reserves 17.
    else byId.set(run.workflowId, [chain, run]);
    this.runs.set(run.runId, run);
  }

  private createRun(p: RunParams, signal?: StartOptions['signal']): Execution {
    const run = new Execution(this, p);
    this.addRun(run);
    this.visibility.put(run);
    this.journal?.runCreated({
      namespace: p.namespace,
      workflowId: p.workflowId,
      runId: p.runId,
      requestId: p.requestId,
    });
    run.start(signal);
    this.logger.info(
      {
        namespace: p.namespace,
        workflowId: p.workflowId,
        runId: p.runId,
        workflowType: p.workflowType,
        taskQueue: p.taskQueue,
      },
      'workflow started',
    );
    return run;
  }

  /** Continue-as-new and workflow retry: the next run of the same chain, with no policy checks. */
  startNextRun(prev: Execution, overrides: Partial<RunParams> & { runId: string }): Execution {
    return this.createRun({
      ...prev.p,
      requestId: '',
      continuedFailure: null,
      lastCompletionResult: null,
      ...overrides,
      continuedExecutionRunId: prev.runId,
    });
  }

  startChildRun(
    parent: Execution,
    initiatedEventId: number,
    a: temporal.api.command.v1.IStartChildWorkflowExecutionCommandAttributes,
  ): { ok: true; runId: string } | { ok: false } {
    const namespace = a.namespace || parent.namespace;
    if (!this.namespaces.has(namespace) || !a.workflowId || !a.workflowType?.name) return { ok: false };
    try {
      const { run, started } = this.startWorkflow({
        params: {
          namespace,
          workflowId: a.workflowId,
          workflowType: a.workflowType.name,
          taskQueue: a.taskQueue?.name || parent.taskQueue,
          input: a.input,
          header: a.header,
          memo: a.memo,
          searchAttributes: a.searchAttributes,
          ...timeouts(a.workflowExecutionTimeout, a.workflowRunTimeout, a.workflowTaskTimeout),
          identity: '',
          requestId: '',
          retryPolicy: a.retryPolicy ? normalizeRetryPolicy(a.retryPolicy) : undefined,
          backoffMs: 0,
          parent: { namespace: parent.namespace, workflowId: parent.workflowId, runId: parent.runId, initiatedEventId },
          root: parent.p.root ?? parent.execution,
          priority: a.priority,
        },
        reusePolicy: a.workflowIdReusePolicy ?? 0,
        conflictPolicy: ConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
      });
      if (!started) return { ok: false };
      return { ok: true, runId: run.runId };
    } catch {
      return { ok: false };
    }
  }

  /** Bookkeeping once a run has closed: log, tell the parent (last run only), apply parent-close policies. */
  onRunClosed(run: Execution): void {
    this.logger.info(
      {
        namespace: run.namespace,
        workflowId: run.workflowId,
        runId: run.runId,
        status: (WorkflowExecutionStatus[run.status] ?? '').replace('WORKFLOW_EXECUTION_STATUS_', ''),
      },
      'workflow closed',
    );
    this.visibility.put(run);
    this.packLater(run);
    if (run.parent && !run.nextRunId) {
      const parentRun = this.live(this.runs.get(run.parent.runId));
      parentRun?.onChildClosed(run.parent.initiatedEventId, run);
    }
    for (const child of [...run.children.values()]) {
      const target = this.findRun(child.namespace, child.workflowId, '');
      if (!target || !target.isOpen) continue;
      if (child.parentClosePolicy === ParentClosePolicy.PARENT_CLOSE_POLICY_ABANDON) continue;
      if (child.parentClosePolicy === ParentClosePolicy.PARENT_CLOSE_POLICY_REQUEST_CANCEL) {
        target.requestCancel('by parent close policy', '');
      } else {
        target.terminate('by parent close policy', null, '');
      }
    }
  }

  /** Register a client query and route it; the promise settles when a worker answers. */
  query(
    run: Execution,
    q: temporal.api.query.v1.IWorkflowQuery,
    onCancel: (cb: () => void) => void,
  ): Promise<QueryOutcome> {
    return new Promise<QueryOutcome>((resolve) => {
      const pq: PendingQuery = {
        id: randomUUID(),
        query: q,
        done: false,
        resolve: (o) => {
          this.queries.delete(pq.id);
          resolve(o);
        },
      };
      onCancel(() => {
        pq.done = true;
        this.queries.delete(pq.id);
      });
      run.query(pq);
    });
  }

  /** Sticky queue of a worker that shut down: its tasks go back to the normal queues. */
  releaseStickyQueue(namespace: string, queue: string): void {
    const key = this.queueKey(namespace, queue);
    this.wfMatching.takeAll(key);
    for (const run of this.runs.values()) {
      if (run.namespace !== namespace || !run.isOpen) continue;
      if (!isDormant(run)) run.clearStickyQueue(queue);
      else if (run.sticky?.queue === queue) run.sticky = null;
    }
  }

  /**
   * Visibility: every run of a namespace matching a list filter, in list order (newest start
   * first unless the query orders otherwise). Rows are not runs: parked runs stay parked (a count
   * or a listing of many idle runs must not wake them all); `runOf` wakes the ones a page shows.
   */
  list(namespace: string, query: string): VisRow[] {
    return this.visibility.all(namespace, query);
  }

  /** The run behind a visibility row, woken if it is parked. */
  runOf(view: { runId: string }): Execution {
    const run = this.live(this.runs.get(view.runId));
    if (!run) throw notFound(`workflow execution not found for run ID "${view.runId}"`);
    return run;
  }

  /**
   * Forget closed runs older than their namespace's retention, so a long-lived standalone server
   * (npm start) does not grow without bound. Returns how many runs were dropped.
   */
  purgeClosed(): number {
    const now = this.clock.now();
    let dropped = 0;
    for (const [runId, run] of this.runs) {
      if (run.isOpen) continue; // parked or not: a parked closed run keeps its close time
      const retention = this.namespaces.get(run.namespace)?.retentionMs ?? 24 * 3600 * 1000;
      if (now - run.closeTime < retention) continue;
      this.runs.delete(runId);
      this.visibility.remove(run.namespace, runId);
      this.journal?.purged(runId);
      const byId = this.chains.get(run.namespace);
      const chain = byId?.get(run.workflowId);
      if (Array.isArray(chain)) {
        const rest = chain.filter((r) => r !== run);
        if (rest.length > 1) byId?.set(run.workflowId, rest);
        else if (rest.length === 1) byId?.set(run.workflowId, rest[0]);
        else byId?.delete(run.workflowId);
      } else if (chain === run) byId?.delete(run.workflowId);
      dropped++;
    }
    return dropped;
  }

  /**
   * Durable restart: namespaces and runs read back from the journal, each run rebuilt by
   * replaying its history (timers re-armed, tasks re-queued). Call before serving.
   */
  restore(loaded: LoadedState): { runs: number; open: number } {
    for (const ns of loaded.namespaces) {
      if (!this.namespaces.has(ns.name)) this.namespaces.set(ns.name, { ...ns });
    }
    let open = 0;
    for (const rec of loaded.runs) {
      const started = rec.events[0];
      if (!started) continue; // created but its first commit never finished
      const p = runParamsFromStarted(rec, started);
      const run = new Execution(this, p, timestampMs(started.eventTime));
      run.spans = rec.spans;
      this.addRun(run);
      run.restoreState(rec.events, replay(p, rec.events, rec.state));
      // Visibility is rebuilt from the runs: status, close time and upserted attributes come from history.
      this.visibility.put(run);
      if (run.isOpen) open++;
      else this.packLater(run);
      // Parked at once: a restart with many runs waiting out a delay never holds them all live.
      if (this.parkIdleAfterMs > 0 && run.parkable) this.park(run);
    }
    return { runs: loaded.runs.length, open };
  }

  // ---------------------------------------------------------------- parking (src/dormant.ts)

  /** A run's first-task delay began (start, retry or continue-as-new backoff, restore). */
  noteIdle(run: Execution): void {
    if (this.parkIdleAfterMs > 0) this.idleNew.add(run);
  }

  /**
   * Parks every run noted before the previous call that is still parkable; called every
   * `parkIdleAfterMs`, so a run is parked after one to two periods of idleness. Returns how many.
   */
  parkIdle(): number {
    const ready = this.idleOld;
    this.idleOld = this.idleNew;
    this.idleNew = new Set();
    let n = 0;
    for (const run of ready) {
      if (run.parked || this.runs.get(run.runId) !== run) continue;
      if (run.parkable) {
        this.park(run);
        n++;
      } else if (run.isOpen ? run.tasks.wft === null && run.acts.byId.size === 0 : run.spans !== undefined) {
        // Waiting (or closed), but busy for now (a result long poll, a commit not yet written): next sweep.
        this.idleOld.add(run);
      }
    }
    return n;
  }

  isParked(runId: string): boolean {
    const run = this.runs.get(runId);
    return run !== undefined && isDormant(run);
  }

  /** Where a parked run keeps its started event: the journal file or memory (diagnostics, tests). */
  parkedIn(runId: string): 'journal' | 'memory' | undefined {
    const run = this.runs.get(runId);
    if (run === undefined || !isDormant(run)) return undefined;
    return run.spans ? 'journal' : 'memory';
  }

  /** How many open runs are parked now. */
  get parkedCount(): number {
    return this.parkedRuns;
  }

  /** How many closed runs are parked now (durable mode). */
  get parkedClosedCount(): number {
    return this.parkedClosed;
  }

  private park(run: Execution): void {
    if (run.workflowType !== this.lastType) this.lastType = run.workflowType;
    if (run.taskQueue !== this.lastQueue) this.lastQueue = run.taskQueue;
    const d = new DormantRun(
      run.namespace,
      run.workflowId,
      run.runId,
      run.p.requestId,
      this.lastType,
      this.lastQueue,
      run.startTime,
      this.parkedHistory(run),
      run.status,
      run.closeTime,
    );
    d.sticky = this.sharedSticky(run.tasks.sticky);
    const wakeAt = run.park();
    if (Number.isFinite(wakeAt)) d.timer = this.clock.scheduleWith(wakeAt, this.wakeParked, d);
    this.replace(run, d);
    if (d.isOpen) this.parkedRuns++;
    else this.parkedClosed++;
  }

  /** A parked run's sticky queue: equal ones share one object (all of a worker's runs have the same). */
  private sharedSticky(sticky: Execution['tasks']['sticky']): DormantRun['sticky'] {
    if (!sticky) return null;
    const last = this.lastSticky;
    if (last && last.queue === sticky.queue && last.scheduleToStartMs === sticky.scheduleToStartMs) return last;
    this.lastSticky = { queue: sticky.queue, scheduleToStartMs: sticky.scheduleToStartMs };
    return this.lastSticky;
  }

  /**
   * What a parked run keeps of its history: where the journal has it, if the bytes there are the
   * run's own (checked once, here: a mismatch would be a bug, and the run then keeps its bytes),
   * else the bytes themselves.
   */
  private parkedHistory(run: Execution): HistorySpans | string {
    const bytes = run.encodedHistory();
    const spans = run.spans;
    if (spans && this.journal) {
      try {
        // A copy of exact size: the array grew by pushes, one pair per commit, with spare room.
        if (this.journal.read(spans).equals(bytes)) return spans.slice();
      } catch (err) {
        this.logger.warn({ runId: run.runId, err: String(err) }, 'journal: reading back a run to park failed');
      }
    }
    return DormantRun.encode(bytes);
  }

  /** A parked run's own deadline: one function for all of them, so a parked run's timer needs no closure. */
  private readonly wakeParked = (d: DormantRun): void => {
    d.timer = undefined;
    this.live(d);
  };

  /** The run itself: a parked run is rebuilt from its history, as a restart rebuilds it. */
  private live(run: Execution | DormantRun | undefined): Execution | undefined {
    if (run === undefined || !isDormant(run)) return run;
    run.timer?.cancel();
    run.timer = undefined;
    const events = run.events(this.journal);
    const rec = { namespace: run.namespace, workflowId: run.workflowId, runId: run.runId, requestId: run.requestId };
    const p = runParamsFromStarted(rec, events[0]);
    const woken = new Execution(this, p, run.startTime);
    woken.spans = run.spans;
    // Sticky again before any task is scheduled: the worker that ran it may still cache it (else
    // it fetches the whole history, as after any cache eviction).
    woken.tasks.sticky = run.sticky;
    this.replace(run, woken);
    if (run.isOpen) this.parkedRuns--;
    else this.parkedClosed--;
    woken.restoreState(events, replay(p, events, undefined));
    if (!woken.isOpen) this.packLater(woken);
    // Woken by a read, it is idle still: parked again unless something starts meanwhile.
    this.noteIdle(woken);
    return woken;
  }

  private replace(from: Execution | DormantRun, to: Execution | DormantRun): void {
    this.runs.set(to.runId, to);
    const byId = this.chains.get(to.namespace);
    const chain = byId?.get(to.workflowId);
    if (Array.isArray(chain)) {
      const i = chain.lastIndexOf(from);
      if (i >= 0) chain[i] = to;
    } else if (chain === from) byId?.set(to.workflowId, to);
  }

  /**
   * Packs closed runs' histories once the current turn is over (the close happens inside a
   * workflow-task completion that still runs). Every later read is served from the packed bytes
   * (the result long poll from the encoded close event, the journal and history reads from
   * slices), so nothing waits for the object form; packed in the turn of the close, a run's
   * ~20 objects per event die young instead of being copied by two scavenges and promoted
   * (docs/performance.md "Server CPU per workflow: encode once").
   */
  private packLater(run: Execution): void {
    this.toPack.push(run);
    if (this.packTimer) return;
    this.packTimer = setImmediate(() => {
      this.packTimer = undefined;
      const runs = this.toPack;
      this.toPack = [];
      for (const r of runs) r.log.pack();
    });
    this.packTimer.unref();
  }
}

type Dur = google.protobuf.IDuration | null | undefined;

export function timeouts(
  execution: Dur,
  run: Dur,
  task: Dur,
): { executionTimeoutMs: number; runTimeoutMs: number; taskTimeoutMs: number } {
  const executionTimeoutMs = durationMs(execution);
  let runTimeoutMs = durationMs(run);
  if (!runTimeoutMs || (executionTimeoutMs && runTimeoutMs > executionTimeoutMs)) runTimeoutMs = executionTimeoutMs;
  let taskTimeoutMs = durationMs(task) || TEN_SECONDS;
  if (taskTimeoutMs > MAX_TASK_TIMEOUT) taskTimeoutMs = MAX_TASK_TIMEOUT;
  if (runTimeoutMs && taskTimeoutMs > runTimeoutMs) taskTimeoutMs = runTimeoutMs;
  return { executionTimeoutMs, runTimeoutMs, taskTimeoutMs };
}
