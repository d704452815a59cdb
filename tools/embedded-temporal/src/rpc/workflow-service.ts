/**
 * temporal.api.workflowservice.v1.WorkflowService: the methods the TypeScript client, the Rust-core
 * worker and @temporalio/testing call. Handlers validate and translate; state changes live in
 * Store/Execution. Methods not listed here answer UNIMPLEMENTED (see grpc.ts).
 */
import { randomUUID } from 'node:crypto';
import { invalidArgument, notFound, RpcError, status } from '../errors';
import type { Execution } from '../execution';
import {
  durationMs,
  encodeMessage,
  long,
  msDuration,
  msTimestamp,
  temporal,
  WorkflowExecutionStatus,
  type HistoryMsg,
} from '../proto';
import { normalizeRetryPolicy } from '../retry';
import type { Matching } from '../matching';
import { timeouts, type StartOptions, type Store } from '../store';
import { decodeToken } from '../tokens';
import { handler, type CallContext, type Handler } from './grpc';
import { updateService } from './update-service';
import { countAnswer, listPage, searchAttributeKeys } from './visibility-service';

import ws = temporal.api.workflowservice.v1;

const POLL_MS = 60_000; // the official server answers an empty poll after one minute
const HISTORY_WAIT_MS = 20_000;
const QUERY_WAIT_MS = 60_000;

function pollTimeout(ctx: CallContext): number {
  return Math.max(0, Math.min(POLL_MS, ctx.remainingMs() - 1000));
}

/** What both long polls read of their request. */
interface PollRequest {
  namespace?: string | null;
  taskQueue?: { name?: string | null } | null;
  identity?: string | null;
}

/**
 * Both long polls (workflow and activity tasks): the namespace must exist, then the caller waits on
 * that kind of task's queue until a task or the poll's deadline (an empty answer, as the real server).
 */
async function longPoll<R>(
  store: Store,
  matching: Matching<R>,
  req: PollRequest,
  ctx: CallContext,
): Promise<R | Record<string, never>> {
  store.requireNamespace(req.namespace);
  const queue = required(req.taskQueue?.name, 'TaskQueue');
  return (
    (await matching.poll(
      store.queueKey(req.namespace ?? '', queue),
      req.identity ?? '',
      pollTimeout(ctx),
      ctx.onCancel,
    )) ?? {}
  );
}

function required(value: string | null | undefined, what: string): string {
  if (!value) throw invalidArgument(`${what} is not set on request`);
  return value;
}

export function workflowService(store: Store, serverVersion: string): Record<string, Handler> {
  const clusterId = randomUUID();
  const runFromToken = (runId: string): Execution => {
    const run = store.runById(runId);
    if (!run) throw notFound('Workflow execution not found');
    return run;
  };

  const activityFromToken = (
    bytes: Uint8Array | null | undefined,
  ): { run: Execution; act: ReturnType<Execution['activityForToken']> } => {
    const t = decodeToken(bytes);
    if (t.t !== 'a') throw invalidArgument('Not an activity task token');
    const run = runFromToken(t.r);
    return { run, act: run.activityForToken(t.s, t.a) };
  };

  const activityById = (req: {
    namespace?: string | null;
    workflowId?: string | null;
    runId?: string | null;
    activityId?: string | null;
  }): { run: Execution; act: ReturnType<Execution['activityById']> } => {
    store.requireNamespace(req.namespace);
    const run = store.getRun(req.namespace ?? '', { workflowId: req.workflowId, runId: req.runId });
    return { run, act: run.activityById(required(req.activityId, 'ActivityId')) };
  };

  const startOptions = (
    req: ws.IStartWorkflowExecutionRequest | ws.ISignalWithStartWorkflowExecutionRequest,
  ): StartOptions => {
    const namespace = req.namespace ?? '';
    store.requireNamespace(namespace);
    return {
      params: {
        namespace,
        workflowId: required(req.workflowId, 'WorkflowId'),
        workflowType: required(req.workflowType?.name, 'WorkflowType'),
        taskQueue: required(req.taskQueue?.name, 'TaskQueue'),
        input: req.input,
        header: req.header,
        memo: req.memo,
        searchAttributes: req.searchAttributes,
        ...timeouts(req.workflowExecutionTimeout, req.workflowRunTimeout, req.workflowTaskTimeout),
        identity: req.identity ?? '',
        requestId: req.requestId ?? '',
        retryPolicy: req.retryPolicy ? normalizeRetryPolicy(req.retryPolicy) : undefined,
        backoffMs: durationMs(req.workflowStartDelay),
        priority: req.priority,
      },
      reusePolicy: req.workflowIdReusePolicy ?? 0,
      conflictPolicy: req.workflowIdConflictPolicy ?? 0,
    };
  };

  return {
    ...updateService(store, startOptions),

    GetSystemInfo: handler<ws.IGetSystemInfoRequest>(() => ({
      serverVersion,
      capabilities: {
        signalAndQueryHeader: true,
        internalErrorDifferentiation: true,
        activityFailureIncludeHeartbeat: true,
        supportsSchedules: false,
        encodedFailureAttributes: true,
        buildIdBasedVersioning: false,
        upsertMemo: true,
        eagerWorkflowStart: true,
        sdkMetadata: true,
        countGroupByExecutionStatus: true,
        nexus: false,
      },
    })),

    GetClusterInfo: handler<ws.IGetClusterInfoRequest>(() => ({
      // What a single-node dev server reports; clients and the UI read the version and names.
      supportedClients: {
        'temporal-cli': '<2.0.0',
        'temporal-go': '<2.0.0',
        'temporal-java': '<2.0.0',
        'temporal-php': '<2.0.0',
        'temporal-server': '<2.0.0',
        'temporal-typescript': '<2.0.0',
        'temporal-ui': '<3.0.0',
      },
      serverVersion,
      clusterId,
      clusterName: 'active',
      historyShardCount: 1,
      persistenceStore: store.journal ? 'journal' : 'memory',
      visibilityStore: 'memory',
      initialFailoverVersion: long(1),
      failoverVersionIncrement: long(10),
    })),

    DescribeTaskQueue: handler<ws.IDescribeTaskQueueRequest>((req) => {
      store.requireNamespace(req.namespace);
      const queue = required(req.taskQueue?.name, 'TaskQueue');
      const matching =
        req.taskQueueType === temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY
          ? store.actMatching
          : store.wfMatching;
      return {
        pollers: matching.pollers(store.queueKey(req.namespace ?? '', queue)).map((p) => ({
          identity: p.identity,
          lastAccessTime: msTimestamp(p.lastAccessMs),
          ratePerSecond: 100_000,
        })),
      };
    }),

    // No schedules exist here (capabilities say so): every list is empty.
    ListSchedules: handler<ws.IListSchedulesRequest>((req) => {
      store.requireNamespace(req.namespace);
      return { schedules: [] };
    }),

    CountSchedules: handler<ws.ICountSchedulesRequest>((req) => {
      store.requireNamespace(req.namespace);
      return { count: long(0) };
    }),

    DescribeNamespace: handler<ws.IDescribeNamespaceRequest>((req) => {
      const ns = req.id
        ? [...store.namespaces.values()].find((n) => n.id === req.id)
        : store.namespaces.get(req.namespace ?? '');
      if (!ns) throw notFound(`Namespace ${req.namespace || req.id} is not found`);
      return namespaceDescription(ns);
    }),

    ListNamespaces: handler<ws.IListNamespacesRequest>(() => ({
      namespaces: [...store.namespaces.values()].map(namespaceDescription),
    })),

    RegisterNamespace: handler<ws.IRegisterNamespaceRequest>((req) => {
      store.registerNamespace(
        required(req.namespace, 'Namespace'),
        req.description ?? '',
        durationMs(req.workflowExecutionRetentionPeriod) || 24 * 3600 * 1000,
      );
      return {};
    }),

    StartWorkflowExecution: handler<ws.IStartWorkflowExecutionRequest>((req) => {
      const { run, started } = store.startWorkflow(startOptions(req));
      // Eager start: the first workflow task goes back to the starter (whose client shares a
      // worker's connection) in this answer instead of through the task queue.
      const eagerWorkflowTask =
        req.requestEagerExecution && started ? run.takeFirstWorkflowTaskEagerly(req.identity ?? '') : null;
      return { runId: run.runId, started, eagerWorkflowTask };
    }),

    SignalWithStartWorkflowExecution: handler<ws.ISignalWithStartWorkflowExecutionRequest>((req) => {
      const signal = {
        name: required(req.signalName, 'SignalName'),
        input: req.signalInput,
        header: req.header,
        identity: req.identity ?? '',
      };
      const opts = startOptions(req);
      const current = store.findRun(opts.params.namespace, opts.params.workflowId, '');
      if (current?.isOpen) {
        current.signal({
          signalName: signal.name,
          input: signal.input,
          header: signal.header,
          identity: signal.identity,
          requestId: req.requestId ?? '',
        });
        current.endStartDelay();
        return { runId: current.runId, started: false };
      }
      const { run, started } = store.startWorkflow({ ...opts, signal });
      return { runId: run.runId, started };
    }),

    SignalWorkflowExecution: handler<ws.ISignalWorkflowExecutionRequest>((req) => {
      store.requireNamespace(req.namespace);
      const run = store.getRun(req.namespace ?? '', req.workflowExecution);
      run.signal({
        signalName: required(req.signalName, 'SignalName'),
        input: req.input,
        header: req.header,
        identity: req.identity ?? '',
        requestId: req.requestId ?? '',
      });
      return {};
    }),

    PollWorkflowTaskQueue: handler<ws.IPollWorkflowTaskQueueRequest>((req, ctx) =>
      longPoll(store, store.wfMatching, req, ctx),
    ),

    RespondWorkflowTaskCompleted: handler<ws.IRespondWorkflowTaskCompletedRequest>((req) => {
      const t = decodeToken(req.taskToken);
      if (t.t !== 'w') throw invalidArgument('Not a workflow task token');
      const run = runFromToken(t.r);
      const activityTasks = run.completeWorkflowTask(t.s, t.a, req);
      const workflowTask = req.returnNewWorkflowTask ? run.takeNextWorkflowTaskInline(req.identity ?? '') : null;
      return { activityTasks, workflowTask };
    }),

    RespondWorkflowTaskFailed: handler<ws.IRespondWorkflowTaskFailedRequest>((req) => {
      const t = decodeToken(req.taskToken);
      if (t.t !== 'w') throw invalidArgument('Not a workflow task token');
      runFromToken(t.r).failWorkflowTask(t.s, t.a, req);
      return {};
    }),

    PollActivityTaskQueue: handler<ws.IPollActivityTaskQueueRequest>((req, ctx) =>
      longPoll(store, store.actMatching, req, ctx),
    ),

    RecordActivityTaskHeartbeat: handler<ws.IRecordActivityTaskHeartbeatRequest>((req) => {
      const { run, act } = activityFromToken(req.taskToken);
      return { cancelRequested: run.heartbeatActivity(act, req.details) };
    }),

    RecordActivityTaskHeartbeatById: handler<ws.IRecordActivityTaskHeartbeatByIdRequest>((req) => {
      const { run, act } = activityById(req);
      return { cancelRequested: run.heartbeatActivity(act, req.details) };
    }),

    RespondActivityTaskCompleted: handler<ws.IRespondActivityTaskCompletedRequest>((req) => {
      const { run, act } = activityFromToken(req.taskToken);
      run.completeActivity(act, req.result, req.identity ?? '');
      return {};
    }),

    RespondActivityTaskCompletedById: handler<ws.IRespondActivityTaskCompletedByIdRequest>((req) => {
      const { run, act } = activityById(req);
      run.completeActivity(act, req.result, req.identity ?? '');
      return {};
    }),

    RespondActivityTaskFailed: handler<ws.IRespondActivityTaskFailedRequest>((req) => {
      const { run, act } = activityFromToken(req.taskToken);
      run.failActivity(act, req.failure, req.identity ?? '', req.lastHeartbeatDetails);
      return {};
    }),

    RespondActivityTaskFailedById: handler<ws.IRespondActivityTaskFailedByIdRequest>((req) => {
      const { run, act } = activityById(req);
      run.failActivity(act, req.failure, req.identity ?? '', req.lastHeartbeatDetails);
      return {};
    }),

    RespondActivityTaskCanceled: handler<ws.IRespondActivityTaskCanceledRequest>((req) => {
      const { run, act } = activityFromToken(req.taskToken);
      run.cancelActivityReported(act, req.details, req.identity ?? '');
      return {};
    }),

    RespondActivityTaskCanceledById: handler<ws.IRespondActivityTaskCanceledByIdRequest>((req) => {
      const { run, act } = activityById(req);
      run.cancelActivityReported(act, req.details, req.identity ?? '');
      return {};
    }),

    QueryWorkflow: handler<ws.IQueryWorkflowRequest>(async (req, ctx) => {
      store.requireNamespace(req.namespace);
      const run = store.getRun(req.namespace ?? '', req.execution);
      required(req.query?.queryType, 'QueryType');
      const reject = req.queryRejectCondition ?? 0;
      const RC = temporal.api.enums.v1.QueryRejectCondition;
      if (
        (reject === RC.QUERY_REJECT_CONDITION_NOT_OPEN && !run.isOpen) ||
        (reject === RC.QUERY_REJECT_CONDITION_NOT_COMPLETED_CLEANLY &&
          !run.isOpen &&
          run.status !== WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED)
      ) {
        return { queryRejected: { status: run.status } };
      }
      // No worker may ever answer: give up like the real frontend does instead of hanging forever.
      let giveUp: () => void = () => {};
      const timedOut = new Promise<'timeout'>((resolve) => {
        const t = setTimeout(() => resolve('timeout'), Math.max(0, Math.min(QUERY_WAIT_MS, ctx.remainingMs() - 500)));
        giveUp = () => clearTimeout(t);
      });
      const cancelQuery: (() => void)[] = [];
      const outcome = await Promise.race([
        store.query(run, req.query ?? {}, (cb) => {
          cancelQuery.push(cb);
          ctx.onCancel(cb);
        }),
        timedOut,
      ]);
      giveUp();
      if (outcome === 'timeout') {
        for (const cb of cancelQuery) cb();
        throw new RpcError(status.DEADLINE_EXCEEDED, 'query timed out: no worker answered in time');
      }
      if (outcome.errorMessage !== undefined) throw invalidArgument(outcome.errorMessage);
      return { queryResult: outcome.answer ?? {} };
    }),

    RespondQueryTaskCompleted: handler<ws.IRespondQueryTaskCompletedRequest>((req) => {
      const t = decodeToken(req.taskToken);
      if (t.t !== 'q') throw invalidArgument('Not a query task token');
      const q = store.queries.get(t.q);
      if (!q || q.done) throw notFound('Query not found (already answered or expired)');
      q.done = true;
      if (req.completedType === temporal.api.enums.v1.QueryResultType.QUERY_RESULT_TYPE_ANSWERED) {
        q.resolve({ answer: req.queryResult });
      } else {
        q.resolve({ errorMessage: req.errorMessage || 'query failed', failure: req.failure });
      }
      return {};
    }),

    GetWorkflowExecutionHistory: handler<ws.IGetWorkflowExecutionHistoryRequest>(async (req, ctx) => {
      store.requireNamespace(req.namespace);
      const run = store.getRun(req.namespace ?? '', req.execution);
      const closeOnly =
        req.historyEventFilterType ===
        temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;
      // Histories are answered from each event's cached encoding (RunHistory.message), without
      // unpacking a closed run's packed history for its close event or a full read.
      if (closeOnly) {
        if (!run.isOpen) return { history: closeHistory(run) };
        if (!req.waitNewEvent) return { history: { events: [] } };
        await run.waitUntil(() => !run.isOpen, Math.min(HISTORY_WAIT_MS, ctx.remainingMs()), ctx.onCancel);
        if (!run.isOpen) return { history: closeHistory(run) };
        // Empty answer with a token: the client asks again.
        return { history: { events: [] }, nextPageToken: Buffer.from('wait') };
      }
      const from = parseFromToken(req.nextPageToken);
      if (req.waitNewEvent) {
        await run.waitUntil(
          () => run.log.length >= from || !run.isOpen,
          Math.min(HISTORY_WAIT_MS, ctx.remainingMs()),
          ctx.onCancel,
        );
        const history = run.log.message(from - 1);
        const next = run.isOpen ? Buffer.from(`from:${run.log.length + 1}`) : Buffer.alloc(0);
        return { history, nextPageToken: next };
      }
      const pageSize = req.maximumPageSize && req.maximumPageSize > 0 ? req.maximumPageSize : Infinity;
      const length = run.log.length;
      const end = Math.max(from - 1, Math.min(length, from - 1 + pageSize));
      const next = end < length ? Buffer.from(`from:${end + 1}`) : Buffer.alloc(0);
      return { history: run.log.message(from - 1, end), nextPageToken: next };
    }),

    GetWorkflowExecutionHistoryReverse: handler<ws.IGetWorkflowExecutionHistoryReverseRequest>((req) => {
      store.requireNamespace(req.namespace);
      const run = store.getRun(req.namespace ?? '', req.execution);
      // Pages run from the newest event back; the token names the first event id not yet sent.
      const end = parseBeforeToken(req.nextPageToken) ?? run.log.length;
      const pageSize = req.maximumPageSize && req.maximumPageSize > 0 ? req.maximumPageSize : Infinity;
      const start = Math.max(0, end - pageSize); // 0-based: events [start, end)
      const page = temporal.api.history.v1.History.decode(
        encodeMessage(temporal.api.history.v1.History, run.log.message(start, end)),
      );
      const next = start > 0 ? Buffer.from(`before:${start + 1}`) : Buffer.alloc(0);
      return { history: { events: page.events.reverse() }, nextPageToken: next };
    }),

    DescribeWorkflowExecution: handler<ws.IDescribeWorkflowExecutionRequest>((req) => {
      store.requireNamespace(req.namespace);
      return store.getRun(req.namespace ?? '', req.execution).describe();
    }),

    TerminateWorkflowExecution: handler<ws.ITerminateWorkflowExecutionRequest>((req) => {
      store.requireNamespace(req.namespace);
      const run = store.getRun(req.namespace ?? '', req.workflowExecution);
      run.terminate(req.reason ?? '', req.details, req.identity ?? '');
      return {};
    }),

    RequestCancelWorkflowExecution: handler<ws.IRequestCancelWorkflowExecutionRequest>((req) => {
      store.requireNamespace(req.namespace);
      const run = store.getRun(req.namespace ?? '', req.workflowExecution);
      run.requestCancel(req.reason ?? '', req.identity ?? '');
      return {};
    }),

    ListWorkflowExecutions: handler<ws.IListWorkflowExecutionsRequest>((req) => listPage(store, req)),
    // Deprecated twin of List (unordered in the real server); same filter, same pages.
    ScanWorkflowExecutions: handler<ws.IScanWorkflowExecutionsRequest>((req) => listPage(store, req)),

    CountWorkflowExecutions: handler<ws.ICountWorkflowExecutionsRequest>((req) => {
      store.requireNamespace(req.namespace);
      return countAnswer(store.visibility.count(req.namespace ?? '', req.query ?? ''));
    }),

    GetSearchAttributes: handler<ws.IGetSearchAttributesRequest>(() => ({ keys: searchAttributeKeys(store) })),

    ShutdownWorker: handler<ws.IShutdownWorkerRequest>((req) => {
      store.requireNamespace(req.namespace);
      if (req.stickyTaskQueue) store.releaseStickyQueue(req.namespace ?? '', req.stickyTaskQueue);
      return {};
    }),

    ResetStickyTaskQueue: handler<ws.IResetStickyTaskQueueRequest>((req) => {
      store.requireNamespace(req.namespace);
      const run = store.getRun(req.namespace ?? '', req.execution);
      run.clearStickyQueue();
      return {};
    }),
  };
}

function namespaceDescription(ns: {
  name: string;
  id: string;
  description: string;
  retentionMs: number;
}): ws.IDescribeNamespaceResponse {
  return {
    namespaceInfo: {
      name: ns.name,
      id: ns.id,
      description: ns.description,
      state: temporal.api.enums.v1.NamespaceState.NAMESPACE_STATE_REGISTERED,
      supportsSchedules: false,
    },
    config: { workflowExecutionRetentionTtl: msDuration(ns.retentionMs) },
    isGlobalNamespace: false,
  };
}

function parseFromToken(token: Uint8Array | null | undefined): number {
  if (!token || token.length === 0) return 1;
  const m = /^from:(\d+)$/.exec(Buffer.from(token).toString('utf8'));
  if (!m) throw invalidArgument('Malformed next page token');
  return Math.max(1, Number(m[1]));
}

/** Reverse history pages: `before:<event id>`, the 0-based end of the next page; undefined for the first. */
function parseBeforeToken(token: Uint8Array | null | undefined): number | undefined {
  if (!token || token.length === 0) return undefined;
  const m = /^before:(\d+)$/.exec(Buffer.from(token).toString('utf8'));
  if (!m) throw invalidArgument('Malformed next page token');
  return Math.max(0, Number(m[1]) - 1);
}

/** A closed run's close event (its last), as the one-event history the result long poll expects. */
function closeHistory(run: Execution): HistoryMsg {
  const n = run.log.length;
  return n > 0 ? run.log.message(n - 1, n) : { events: [] };
}
