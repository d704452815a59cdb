/**
 * Idle runs kept small (README, "Memory per idle run").
 *
 * A run in its start delay (a pixflow charge waits out its expiry this way) or in a retry or
 * continue-as-new backoff has one event, WorkflowExecutionStarted, and nothing in flight: no
 * workflow task, activity, child, update, query or history waiter. Everything about it is in that
 * one event, as a restart already shows (src/persistence/replay.ts rebuilds such runs from it).
 * Such a run is parked: the store keeps a `DormantRun` (its ids, the fields visibility filters on,
 * its next deadline and the event's encoded bytes) in place of the `Execution` with its eight
 * sub-objects and the decoded event's protobuf objects: ≈ 1 KB instead of ≈ 8 KB. Its first touch
 * (any request that reaches the run, or its own deadline) rebuilds the `Execution` exactly as a
 * restart does, so a parked run behaves in every way as one that stayed in memory.
 */
import type { TimerHandle } from './clock';
import type { FileSpan, Journal } from './persistence/journal';
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
  readonly status = WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
  readonly isOpen = true;
  /** Fires at the run's next deadline (end of the delay, or the run timeout): the run wakes. */
  timer: TimerHandle | undefined;

  constructor(
    readonly namespace: string,
    readonly workflowId: string,
    readonly runId: string,
    readonly requestId: string,
    readonly workflowType: string,
    readonly taskQueue: string,
    readonly startTime: number,
    /**
     * The `History` message holding the started event: in durable mode where the journal file
     * has it (two numbers), else its bytes as a latin1 string (one byte per byte in a single heap
     * object, where a Buffer would cost a JS object and an off-heap allocation).
     */
    private readonly history: FileSpan | string,
  ) {}

  /** Where the journal holds the history, if it is kept there. */
  get span(): FileSpan | undefined {
    return typeof this.history === 'string' ? undefined : this.history;
  }

  static encode(historyBytes: Uint8Array): string {
    return Buffer.from(historyBytes.buffer, historyBytes.byteOffset, historyBytes.byteLength).toString('latin1');
  }

  /** The run's history (its one event), decoded afresh; `journal` reads it from the file if it is there. */
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
