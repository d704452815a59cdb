/**
 * Idle runs kept small (docs/performance.md "Memory per idle run").
 *
 * A run with nothing in flight (no workflow task, activity, child, update, query, history waiter
 * or buffered event) is fully described by its history, as a restart already shows
 * (src/persistence/replay.ts rebuilds runs from it): one in its start delay (a pixflow charge
 * waits out its expiry this way) or a retry or continue-as-new backoff, and one that has run its
 * workflow tasks and now waits on its timers or for a signal (a paid charge waiting out its
 * settlement delay); and, in durable mode, a closed run kept for its namespace's retention. Such a
 * run is parked: the store keeps a `DormantRun` (its ids, the fields
 * visibility filters on, its sticky queue, its next deadline and where its history is) in place of
 * the `Execution` with its eight sub-objects and the decoded events' protobuf objects: ≈ 1 KB
 * instead of ≈ 8 KB for a started event alone, ≈ 14 KB for a charge that was paid. Its first
 * touch (any request that reaches the run, or its own deadline) rebuilds the `Execution` exactly
 * as a restart does, so a parked run behaves in every way as one that stayed in memory.
 */
import type { TimerHandle } from './clock';
import type { HistorySpans, Journal } from './persistence/journal';
import type { WorkflowTasks } from './run/workflow-tasks';
import { decodeMessage, temporal, WorkflowExecutionStatus, type HistoryEvent } from './proto';

const History = temporal.api.history.v1.History;

/** What the store's lookups and visibility filters read from a run, live or parked. */
export interface RunView {
  readonly namespace: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly workflowType: string;
  readonly taskQueue: string;
  readonly status: number;
  readonly isOpen: boolean;
  readonly startTime: number;
}

export class DormantRun implements RunView {
  /** Fires at the run's next deadline (end of the delay, a timer, the run timeout): the run wakes. */
  timer: TimerHandle | undefined;
  /** The worker's sticky queue the run's next workflow task goes to, kept across the parking. */
  sticky: WorkflowTasks['sticky'] = null;

  constructor(
    readonly namespace: string,
    readonly workflowId: string,
    readonly runId: string,
    readonly requestId: string,
    readonly workflowType: string,
    readonly taskQueue: string,
    readonly startTime: number,
    /**
     * The run's `History` message: in durable mode where the journal file has it (a few numbers),
     * else its bytes as a latin1 string (one byte per byte in a single heap object, where a Buffer
     * would cost a JS object and an off-heap allocation).
     */
    private readonly history: HistorySpans | string,
    /** A closed run (durable mode) is parked too, until its retention ends: its status and close time. */
    readonly status: number = WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING,
    readonly closeTime = 0,
  ) {}

  get isOpen(): boolean {
    return this.status === WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
  }

  /** Where the journal holds the history, if it is kept there. */
  get spans(): HistorySpans | undefined {
    return typeof this.history === 'string' ? undefined : this.history;
  }

  static encode(historyBytes: Uint8Array): string {
    return Buffer.from(historyBytes.buffer, historyBytes.byteOffset, historyBytes.byteLength).toString('latin1');
  }

  /** The run's history, decoded afresh; `journal` reads it from the file if it is there. */
  events(journal: Journal | undefined): HistoryEvent[] {
    const h = this.history;
    let bytes: Buffer;
    if (typeof h === 'string') bytes = Buffer.from(h, 'latin1');
    else if (journal) bytes = journal.read(h);
    else throw new Error(`parked run ${this.runId} is in a journal that is not open`);
    return decodeMessage(History, bytes).events;
  }
}

export function isDormant(run: RunView): run is DormantRun {
  return run instanceof DormantRun;
}
