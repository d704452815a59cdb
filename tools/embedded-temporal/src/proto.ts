/**
 * The protobuf definitions this server speaks, taken from the SDK's own compiled root so that the
 * wire format always matches the installed @temporalio packages (no vendored .proto copies).
 * Also small converters between protobuf Duration/Timestamp/int64 and plain milliseconds.
 */
import { createRequire } from 'node:module';
import Long from 'long';
import { google, temporal } from '@temporalio/proto';

export { google, temporal, Long };

export type Payloads = temporal.api.common.v1.IPayloads;
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
export type Failure = temporal.api.failure.v1.IFailure;
export type RetryPolicyMsg = temporal.api.common.v1.IRetryPolicy;
export type TaskQueueMsg = temporal.api.taskqueue.v1.ITaskQueue;
/**
 * A `History` message as handed to the encoder: either event objects, or events already encoded
 * as `History` fields (`$unknowns`, see `rawHistory`).
 */
export type HistoryMsg = temporal.api.history.v1.IHistory & { $unknowns?: Uint8Array[] };

export const EventType = temporal.api.enums.v1.EventType;
export const CommandType = temporal.api.enums.v1.CommandType;
export const RetryState = temporal.api.enums.v1.RetryState;
export const TimeoutType = temporal.api.enums.v1.TimeoutType;
export const WorkflowExecutionStatus = temporal.api.enums.v1.WorkflowExecutionStatus;
export const TaskQueueKind = temporal.api.enums.v1.TaskQueueKind;

/** int64 fields decode as Long (or number when small); everything here works in plain numbers. */
export function toNum(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v);
  if (Long.isLong(v)) return (v as Long).toNumber();
  return 0;
}

/**
 * An int64 field's value. protobufjs encodes a plain number in an int64 field exactly as it does a
 * Long (exact up to 2^53, far above any id or time here), so no Long object is allocated per
 * event id, task id and timestamp; the generated typings only name Long.
 */
export function long(n: number): Long {
  return Math.trunc(n) as unknown as Long;
}

/** Duration → ms; absent or malformed is 0 (protobuf's "unset"). */
export function durationMs(d: google.protobuf.IDuration | null | undefined): number {
  if (!d) return 0;
  const ms = toNum(d.seconds) * 1000 + Math.floor((d.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

export function msDuration(ms: number): google.protobuf.IDuration {
  const whole = Math.max(0, Math.floor(ms));
  return { seconds: long(Math.floor(whole / 1000)), nanos: (whole % 1000) * 1e6 };
}

export function msTimestamp(ms: number): google.protobuf.ITimestamp {
  const whole = Math.floor(ms);
  return { seconds: long(Math.floor(whole / 1000)), nanos: (((whole % 1000) + 1000) % 1000) * 1e6 };
}

export function timestampMs(t: google.protobuf.ITimestamp | null | undefined): number {
  if (!t) return 0;
  return toNum(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

/** A protobuf message type as exposed by the compiled root: encode/decode plus a name. */
export interface MessageType {
  /** `writer`: an instance of the generated code's own protobufjs writer (see rpc/grpc.ts). */
  encode(message: object, writer?: unknown): { finish(): Uint8Array };
  /** `reader`: bytes, or an instance of the generated code's own protobufjs reader (`decodeMessage`). */
  decode(reader: Uint8Array | object): object;
  verify?(message: object): string | null;
}

interface BufferReaderShape {
  buf: Uint8Array;
  pos: number;
  len: number;
  size(): number;
}

/**
 * A reader whose strings are flat. protobufjs 8 reads a proto3 string shorter than 64 bytes by
 * appending 8 characters at a time, so a workflow id arrives as a rope of ten string objects;
 * the server keeps ids, task queues and types for a run's whole life, and every Map lookup
 * flattens a rope again (docs/performance.md "Memory per idle run"). Here an ASCII string is one latin1 slice
 * (ASCII is its own UTF-8) and anything else goes through a fatal UTF-8 decoder, so invalid
 * UTF-8 is still refused as protobufjs refuses it. Made from the reader class of the protobufjs
 * that @temporalio/proto's code was generated with; should that change shape, messages are
 * decoded the ordinary way.
 */
const FlatStringReader: (new (buf: Buffer) => object) | undefined = (() => {
  try {
    const pb = createRequire(require.resolve('@temporalio/proto'))('protobufjs/minimal') as { BufferReader?: unknown };
    const Base = pb.BufferReader as (new (buf: Buffer) => BufferReaderShape) | undefined;
    if (typeof Base !== 'function' || typeof (Base.prototype as { stringVerify?: unknown }).stringVerify !== 'function')
      return undefined;
    const strict = new TextDecoder('utf-8', { fatal: true });
    return class extends Base {
      stringVerify(): string {
        const length = this.size();
        const start = this.pos;
        const end = start + length;
        if (end > this.len) throw new RangeError(`index out of range: ${start} + ${length} > ${this.len}`);
        this.pos = end;
        const buf = this.buf as Buffer;
        for (let i = start; i < end; i++) {
          if (buf[i] & 0x80) return strict.decode(buf.subarray(start, end));
        }
        return buf.toString('latin1', start, end);
      }
    };
  } catch {
    return undefined;
  }
})();

/** `bytes` decoded as `type`, with flat strings where possible (see FlatStringReader). */
export function decodeMessage<T extends object>(
  type: { decode(reader: Uint8Array | object): T },
  bytes: Uint8Array,
): T {
  if (FlatStringReader && Buffer.isBuffer(bytes)) return type.decode(new FlatStringReader(bytes));
  return type.decode(bytes);
}

interface ReusableWriter {
  buf: Uint8Array;
  pos: number;
  states: number[] | null;
  view: DataView | null;
}

/**
 * One writer for every encoding on the hot paths (responses, packed histories): protobufjs grows a
 * fresh writer from 128 bytes by doubling (a copy per step) and copies again in `finish()`, about
 * half the time of encoding a ten-event history. This one keeps its buffer; the result is the one
 * copy out (docs/performance.md "Server CPU per workflow: fixed and marginal cost"). Encoding is synchronous, so sharing it is safe.
 * It is an instance of the writer class of the protobufjs that @temporalio/proto's code was
 * generated with (protobufjs 8: one growable `buf`, a `pos` and a fork stack); should that change
 * shape, messages are encoded the ordinary way.
 */
const sharedWriter: ReusableWriter | undefined = (() => {
  const w: unknown = google.protobuf.Empty.encode({});
  return typeof w === 'object' &&
    w !== null &&
    'buf' in w &&
    'pos' in w &&
    'states' in w &&
    w.buf instanceof Uint8Array &&
    typeof w.pos === 'number'
    ? (w as ReusableWriter)
    : undefined;
})();
/** A writer grown past this by one large history is replaced after use rather than kept. */
const KEEP_WRITER_BYTES = 1 << 20;

/** `message` encoded into a new Buffer, after `offset` bytes left for the caller (a frame prefix). */
export function encodeMessage(type: MessageType, message: object, offset = 0): Buffer {
  const w = sharedWriter;
  if (!w) {
    const bytes = type.encode(message).finish();
    const out = Buffer.allocUnsafe(offset + bytes.length);
    out.set(bytes, offset);
    return out;
  }
  w.pos = offset;
  w.states = null;
  try {
    type.encode(message, w);
    const out = Buffer.allocUnsafe(w.pos);
    out.set(w.buf.subarray(offset, w.pos), offset);
    return out;
  } finally {
    w.pos = 0;
    w.states = null;
    if (w.buf.length > KEEP_WRITER_BYTES) {
      w.buf = Buffer.allocUnsafe(1024);
      w.view = null;
    }
  }
}

/**
 * One event encoded as a field of `History` (tag 1, length, the event's bytes): what a `History`
 * message's bytes are made of, so a run can encode each event once and hand the same bytes to
 * every poll answer, history read, packed history and journal record (README, "Server CPU per
 * workflow: encode once").
 */
export function encodeEventField(e: HistoryEvent): Buffer {
  return encodeMessage(temporal.api.history.v1.History, { events: [e] });
}

/**
 * Whether the generated encoders write a message's `$unknowns` (raw field bytes, kept by
 * protobufjs 8 for unknown fields) verbatim after its known fields: the way pre-encoded events
 * reach the wire inside any message that holds a `History`. Checked once at start; with an
 * encoder that does not, histories are encoded from their event objects as before.
 */
export const rawHistorySupported: boolean = (() => {
  const field = Uint8Array.of(0x0a, 0x02, 0x08, 0x01); // History.events[0] = { eventId: 1 }
  const msg: HistoryMsg = { $unknowns: [field] };
  const out = temporal.api.history.v1.History.encode(msg).finish();
  return out.length === field.length && out.every((b, i) => b === field[i]);
})();
