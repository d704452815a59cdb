/**
 * One run's history and the single path every event takes into it.
 *
 * The concern modules of a run (workflow tasks, commands, timers, activities, children, queries)
 * write events only through `HistoryWriter`: `append` for events that belong where they are
 * caused (command events, task events), `external` for events caused from outside the workflow
 * task (signals, timer fires, activity and child results), which are buffered while a task runs
 * and written after its completion (temporal-history-contract.md §0). Every append marks the run
 * dirty for the durable journal (src/persistence/journal.ts), so a new kind of event is persisted
 * with no code of its own.
 */
import {
  encodeEventField,
  EventType,
  long,
  msTimestamp,
  rawHistorySupported,
  temporal,
  toNum,
  type HistoryEvent,
  type HistoryMsg,
} from '../proto';

export interface HistoryWriter {
  /** Writes one event now (ids and time assigned here) and returns it. */
  append(e: HistoryEvent): HistoryEvent;
  /**
   * An outside event: `emit` (which must only append events) runs now and a workflow task is
   * scheduled, or, while a workflow task runs, later, when that task completes.
   */
  external(emit: () => void, timerId?: string): void;
}

interface Buffered {
  emit: () => void;
  /** Lets CancelTimer drop a fire that was buffered but not yet written. */
  timerId?: string;
  /** Durable mode: the events `emit` will write, captured when buffered (see src/persistence). */
  events?: HistoryEvent[];
}

/** Placeholder event ids of captured (buffered, not yet written) events; far above any real id. */
export const CAPTURE_ID_BASE = 2 ** 40;

export class RunHistory {
  private list: HistoryEvent[] = [];
  /**
   * A closed run's history, packed: one encoded `History` instead of ~20 objects per event, so
   * the many finished runs a test run or `npm start` keeps for reading stay out of the garbage
   * collector's way. Unpacked again on the rare read that needs more than the close event.
   */
  private packed: Uint8Array | null = null;
  private packedCount = 0;
  private lastEvent: HistoryEvent | undefined;
  /** A packed run's close event, encoded (its result long poll may come after the packing). */
  private lastField: Uint8Array | undefined;
  /**
   * Each event encoded as a `History` field (`encodeEventField`), by position, made on first
   * need. Events never change once appended and positions only grow (append, restore), so an
   * event is encoded once however often it is sent: the first poll answer, the sticky poll's
   * partial history, the result long poll, the journal and the packing all reuse these bytes
   * (docs/performance.md "Server CPU per workflow: encode once").
   */
  private fields: (Uint8Array | undefined)[] = [];
  private buffered: Buffered[] = [];
  /** Durable mode: set while a buffered event's `emit` runs against a capture buffer. */
  private capturing: HistoryEvent[] | null = null;
  /** Placeholder ids of captured events are unique per run, so one buffered item may refer to another's. */
  private captureSeq = 0;
  /**
   * Restored buffered events: placeholder id → real id once written. This and `listeners` are
   * made on first use: every run is kept for the whole process, and a closed run holding fewer
   * objects costs the garbage collector less (docs/performance.md "Server CPU per workflow: encode once").
   */
  private recordedIds: Map<number, number> | undefined;
  private listeners: Set<() => void> | undefined;

  constructor(
    private readonly now: () => number,
    /** Marks the run dirty for the durable journal. */
    private readonly touched: () => void,
  ) {}

  get events(): HistoryEvent[] {
    if (this.packed) this.unpack();
    return this.list;
  }

  get length(): number {
    return this.packed ? this.packedCount : this.list.length;
  }

  /** The last event, without unpacking (a closed run's close event, decoded from its bytes once packed). */
  get last(): HistoryEvent | undefined {
    if (!this.packed) return this.list[this.list.length - 1];
    if (!this.lastEvent && this.lastField) {
      this.lastEvent = temporal.api.history.v1.History.decode(this.lastField).events[0];
    }
    return this.lastEvent;
  }

  /**
   * Call only for a closed run (nothing is appended any more); reads keep working. A `History`'s
   * bytes are its event fields one after another, so packing is one copy of the encoded events.
   */
  pack(): void {
    if (this.packed || this.list.length === 0) return;
    const n = this.list.length;
    const fields = this.encodedRange(0, n);
    // The close event is kept encoded only; `last` decodes it on the rare read (a parent's
    // notification reads it at the close, before packing).
    this.lastEvent = undefined;
    this.packedCount = n;
    const packed = Buffer.concat(fields);
    this.packed = packed;
    // A view into the packed bytes, not the event's own small buffer: that one is a slice of
    // Node's shared 8 KiB allocation pool, and keeping it for the run's lifetime would pin the
    // whole pool chunk.
    this.lastField = packed.subarray(packed.length - fields[n - 1].length);
    this.list = [];
    this.fields = [];
  }

  private unpack(): void {
    const packed = this.packed;
    if (!packed) return;
    this.packed = null;
    this.lastEvent = undefined;
    this.lastField = undefined;
    this.list = temporal.api.history.v1.History.decode(packed).events;
    this.fields = [];
  }

  /** Event at `i` (0-based) encoded as a `History` field. */
  private encodedAt(i: number): Uint8Array {
    let f = this.fields[i];
    if (f === undefined) {
      f = encodeEventField(this.list[i]);
      this.fields[i] = f;
    }
    return f;
  }

  /** Events [from, to) (0-based positions), each encoded as a `History` field; a packed history stays packed. */
  encodedRange(from: number, to: number): Uint8Array[] {
    const packed = this.packed;
    if (packed) {
      if (from === this.packedCount - 1 && to >= this.packedCount && this.lastField) return [this.lastField];
      return splitFields(packed).slice(Math.max(0, from), to);
    }
    const events = this.events;
    const end = Math.min(to, events.length);
    const out: Uint8Array[] = [];
    for (let i = Math.max(0, from); i < end; i++) out.push(this.encodedAt(i));
    return out;
  }

  /**
   * Events [from, to) (0-based positions) as a `History` message for an answer, made of the
   * events' cached encodings (`$unknowns`, written verbatim by the encoder) when the encoder
   * supports it, else of the event objects.
   */
  message(from = 0, to = Infinity): HistoryMsg {
    if (!rawHistorySupported) return { events: this.events.slice(from, to) };
    if (from >= Math.min(to, this.length)) return { $unknowns: [] };
    if (this.packed && from <= 0 && to >= this.packedCount) return { $unknowns: [this.packed] };
    return { $unknowns: this.encodedRange(from, to) };
  }

  append(e: HistoryEvent): HistoryEvent {
    if (this.capturing) return this.capture(e);
    const events = this.events;
    const id = events.length + 1;
    e.eventId = long(id);
    e.taskId = long(id);
    e.eventTime = msTimestamp(this.now());
    events.push(e);
    this.touched();
    return e;
  }

  // ---------------------------------------------------------------- waiters

  /** Re-checks every waiter's condition; a met one removes itself (see waitUntil). */
  notify(): void {
    const listeners = this.listeners;
    if (listeners === undefined || listeners.size === 0) return;
    // A met check deletes itself; deleting the current entry while iterating a Set is safe.
    for (const check of listeners) check();
  }

  /**
   * Resolves once `pred()` holds (checked on every history change or close) or `timeoutMs` of
   * wall time pass (history long poll). One timer per wait, not one per change.
   */
  waitUntil(pred: () => boolean, timeoutMs: number, onCancel: (cb: () => void) => void): Promise<void> {
    if (pred()) return Promise.resolve();
    const listeners = (this.listeners ??= new Set());
    return new Promise((resolve) => {
      let settled = false;
      const finish = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        listeners.delete(check);
        resolve();
      };
      const check = (): void => {
        if (pred()) finish();
      };
      const timer = setTimeout(finish, Math.max(0, timeoutMs));
      listeners.add(check);
      onCancel(finish);
    });
  }

  // ---------------------------------------------------------------- events buffered behind a running task

  /** `capture`: durable mode, record the events `emit` will write so the journal can keep them. */
  buffer(emit: () => void, timerId: string | undefined, capture: boolean): void {
    this.buffered.push({ emit, timerId, events: capture ? this.captureEvents(emit) : undefined });
  }

  hasWaiters(): boolean {
    return this.listeners !== undefined && this.listeners.size > 0;
  }

  hasBuffered(): boolean {
    return this.buffered.length > 0;
  }

  /** Writes every buffered event; true if there were any. */
  flush(): boolean {
    const b = this.buffered;
    if (b.length === 0) return false;
    this.buffered = [];
    for (const item of b) item.emit();
    return b.length > 0;
  }

  /** A timer cancelled after it fired but before its fire was written: never write Fired and Canceled. */
  dropTimerFire(timerId: string): void {
    this.buffered = this.buffered.filter((b) => b.timerId !== timerId);
  }

  clearBuffered(): void {
    if (this.buffered.length > 0) this.buffered = [];
  }

  /** Durable mode: per buffered item, the events it will write. */
  bufferedEvents(): HistoryEvent[][] {
    return this.buffered.map((b) => b.events ?? []);
  }

  /** After a restart: buffer again the events that were buffered at the crash. */
  restoreBuffered(items: HistoryEvent[][]): void {
    for (const events of items) {
      for (const e of events) this.captureSeq = Math.max(this.captureSeq, toNum(e.eventId) - CAPTURE_ID_BASE);
    }
    this.buffered = items.map((events) => ({
      emit: () => this.appendRecorded(events),
      events,
      timerId:
        events.find((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED)?.timerFiredEventAttributes?.timerId ??
        undefined,
    }));
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
    e.eventTime = msTimestamp(this.now());
    out.push(e);
    return e;
  }

  /** Re-append events captured while buffered, mapping their placeholder ids to the real ones. */
  private appendRecorded(events: HistoryEvent[]): void {
    const ids = (this.recordedIds ??= new Map());
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
}

/**
 * A packed `History`'s bytes split into its event fields (views, no copies). Packed histories are
 * made here from `encodeEventField` bytes (or decoded and packed again), so every field is tag 1
 * (one byte, 0x0a) and a varint length.
 */
function splitFields(packed: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let pos = 0;
  while (pos < packed.length) {
    const start = pos++;
    let len = 0;
    let scale = 1;
    let byte: number;
    do {
      byte = packed[pos++];
      len += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte & 0x80 && pos < packed.length);
    pos += len;
    out.push(packed.subarray(start, pos));
  }
  return out;
}
