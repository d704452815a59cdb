/**
 * Queries of a run (QueryWorkflow): attached to the scheduled workflow task, held until the
 * running one completes, or sent as a legacy query task when no task is pending (also to a
 * closed run). Answered from the worker's task completion or RespondQueryTaskCompleted.
 */
import { failedPrecondition } from '../errors';
import { long, msTimestamp, TaskQueueKind, temporal, type Failure, type Payloads } from '../proto';
import { encodeToken } from '../tokens';
import type { Execution } from '../execution';
import type { CompleteWftRequest, WorkflowTask } from './workflow-tasks';

type PollWftResponse = temporal.api.workflowservice.v1.PollWorkflowTaskQueueResponse.$Properties;
type WorkflowQuery = temporal.api.query.v1.IWorkflowQuery;

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

export class Queries {
  /** Waiting for the next workflow task, or for a legacy query task. */
  private pending: PendingQuery[] = [];

  constructor(private readonly run: Execution) {}

  /** Route a query: ride the scheduled task, wait for the running one, or go as a legacy query task. */
  route(q: PendingQuery): void {
    const run = this.run;
    const wft = run.tasks.wft;
    if (run.isOpen && wft?.state === 'scheduled') {
      wft.queries.push(q);
    } else if (run.isOpen && wft?.state === 'started') {
      this.pending.push(q);
    } else if (run.isOpen && run.backoffTimer) {
      throw failedPrecondition('Workflow has not started its first workflow task yet');
    } else {
      this.pending.push(q);
      this.dispatchLegacy();
    }
  }

  get isEmpty(): boolean {
    return this.pending.length === 0;
  }

  /** The queries a newly scheduled workflow task carries. */
  takePending(): PendingQuery[] {
    return this.pending.splice(0);
  }

  /** Unanswered queries of a task that ended go first next time. */
  requeue(qs: PendingQuery[]): void {
    this.pending.unshift(...qs.filter((q) => !q.done));
  }

  answer(wft: WorkflowTask, req: CompleteWftRequest): void {
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
    this.requeue(wft.queries);
    wft.queries = [];
  }

  dispatchLegacy(): void {
    const run = this.run;
    const store = run.store;
    const qs = this.pending.splice(0).filter((q) => !q.done);
    for (const q of qs) {
      store.queries.set(q.id, q);
      const sticky = run.tasks.sticky;
      const key = sticky ? store.queueKey(run.namespace, sticky.queue) : run.tasks.normalKey();
      const task = { take: (identity: string) => this.legacyTask(q, key, identity) };
      store.wfMatching.add(key, task);
      if (sticky) {
        // No sticky poller in time: the normal queue gets it, with full history.
        store.clock.schedule(sticky.scheduleToStartMs || 5000, () => {
          if (q.done || q.taken) return;
          const nk = run.tasks.normalKey();
          store.wfMatching.add(nk, { take: (identity: string) => this.legacyTask(q, nk, identity) });
        });
      }
    }
  }

  private legacyTask(q: PendingQuery, key: string, _identity: string): PollWftResponse | null {
    if (q.done || q.taken) return null;
    q.taken = true;
    const run = this.run;
    const sticky = key !== run.tasks.normalKey();
    return {
      taskToken: encodeToken({ t: 'q', q: q.id }),
      workflowExecution: run.execution,
      workflowType: { name: run.workflowType },
      previousStartedEventId: long(run.tasks.lastCompletedStartedId),
      startedEventId: long(0),
      attempt: 1,
      history: sticky && run.isOpen ? { events: [] } : run.log.message(),
      query: q.query,
      workflowExecutionTaskQueue: { name: run.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      scheduledTime: msTimestamp(run.store.clock.now()),
      startedTime: msTimestamp(run.store.clock.now()),
    };
  }
}
