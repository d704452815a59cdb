/**
 * One cleartext HTTP/2 connection (RFC 9113, prior knowledge, as gRPC clients connect), server
 * side, reduced to what unary gRPC uses: a request is a HEADERS block (plus CONTINUATIONs) and
 * DATA; an answer is HEADERS, DATA and trailing HEADERS, or one trailers-only HEADERS. Frames are
 * parsed straight from the socket's chunks and the answers of one event-loop turn leave in one
 * write; there is no stream object, event emitter or header object per call beyond the decoded
 * header list (docs/performance.md "gRPC on our own HTTP/2 framing").
 *
 * Flow control: we advertise the largest windows HTTP/2 allows, so peers never wait on us (the
 * connection window is topped up as data arrives); our own DATA obeys the peer's windows and
 * maximum frame size, queued per stream until WINDOW_UPDATEs make room.
 */
import type net from 'node:net';
import { encodeHeaderBlock, HpackDecoder, HpackError, type HeaderList } from './hpack';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

const enum Frame {
  DATA = 0,
  HEADERS = 1,
  PRIORITY = 2,
  RST_STREAM = 3,
  SETTINGS = 4,
  PUSH_PROMISE = 5,
  PING = 6,
  GOAWAY = 7,
  WINDOW_UPDATE = 8,
  CONTINUATION = 9,
}

const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY_FLAG = 0x20;

/** HTTP/2 error codes (RFC 9113 section 7). */
export const h2error = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FLOW_CONTROL_ERROR: 3,
  STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
} as const;

const MAX_WINDOW = 2 ** 31 - 1;
const DEFAULT_WINDOW = 65_535;
/** Largest frame we accept (advertised): a 4 MiB request needs only four DATA frames. */
const LOCAL_MAX_FRAME = 1 << 20;
const MAX_HEADER_LIST = 1 << 20;
/** The connection receive window is topped up once this much has arrived. */
const WINDOW_REFILL = 1 << 30;
/** Writes up to this size are merged into one buffer; larger turns go out as a writev. */
const MERGE_LIMIT = 256 * 1024;

class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** One request stream; the gRPC layer's call extends it. */
export abstract class H2Stream {
  /** Our send window on this stream (the peer's receive window). */
  sendWindow: number;
  /** The peer has sent END_STREAM. */
  remoteEnded = false;
  /** Response data waiting for window, from `pendingOff` on, then the trailers block. */
  pending: Buffer | undefined;
  pendingOff = 0;
  pendingTrailers: Buffer | undefined;

  constructor(
    readonly conn: H2Connection,
    readonly id: number,
  ) {
    this.sendWindow = conn.peerInitialWindow;
  }

  /** A DATA payload of the request. */
  abstract data(chunk: Buffer): void;
  /** The request is complete (END_STREAM). */
  abstract end(): void;
  /** Reset by the peer or lost with the connection before it was answered. */
  abstract closed(): void;
}

export interface StreamOpener {
  /**
   * A new stream's request headers. Returns the stream, or undefined when it was answered at once
   * (its remaining frames are then ignored).
   */
  open(conn: H2Connection, id: number, headers: HeaderList, endStream: boolean): H2Stream | undefined;
  /** Errors of the connection itself (logged; the connection is dropped). */
  connectionError(err: Error): void;
}

const OK_HEADERS = encodeHeaderBlock([
  [':status', '200'],
  ['content-type', 'application/grpc'],
  ['grpc-accept-encoding', 'identity'],
]);
const OK_TRAILERS = encodeHeaderBlock([['grpc-status', '0']]);

/** A 9-byte frame header written into `buf` at `at`. */
function frameHeader(buf: Buffer, at: number, length: number, type: number, flags: number, id: number): void {
  buf[at] = length >>> 16;
  buf[at + 1] = (length >>> 8) & 0xff;
  buf[at + 2] = length & 0xff;
  buf[at + 3] = type;
  buf[at + 4] = flags;
  buf.writeUInt32BE(id, at + 5);
}

function frame(type: number, flags: number, id: number, payload: Buffer | undefined): Buffer {
  const len = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(9 + len);
  frameHeader(out, 0, len, type, flags, id);
  payload?.copy(out, 9);
  return out;
}

function u32s(...vs: number[]): Buffer {
  const b = Buffer.allocUnsafe(4 * vs.length);
  vs.forEach((v, i) => b.writeUInt32BE(v, 4 * i));
  return b;
}

const SERVER_PREFACE = Buffer.concat([
  frame(
    Frame.SETTINGS,
    0,
    0,
    Buffer.concat(
      [
        [0x3, 100_000], // MAX_CONCURRENT_STREAMS: long polls wait in the hundreds
        [0x4, MAX_WINDOW], // INITIAL_WINDOW_SIZE
        [0x5, LOCAL_MAX_FRAME], // MAX_FRAME_SIZE
        [0x6, MAX_HEADER_LIST], // MAX_HEADER_LIST_SIZE
      ].map(([k, v]) => {
        const b = Buffer.allocUnsafe(6);
        b.writeUInt16BE(k, 0);
        b.writeUInt32BE(v, 2);
        return b;
      }),
    ),
  ),
  frame(Frame.WINDOW_UPDATE, 0, 0, u32s(MAX_WINDOW - DEFAULT_WINDOW)),
]);
const SETTINGS_ACK = frame(Frame.SETTINGS, ACK, 0, undefined);

export class H2Connection {
  peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = 16_384;
  private sendWindow = DEFAULT_WINDOW;
  private received = 0;
  private readonly decoder = new HpackDecoder();
  private readonly streams = new Map<number, H2Stream>();
  private lastStreamId = 0;
  private preface = false;
  /** Unparsed input: chunks and their total length, and the length needed to make progress. */
  private chunks: Buffer[] = [];
  private chunkBytes = 0;
  private need = PREFACE.length;
  /** A header block waiting for its CONTINUATION frames. */
  private block: { id: number; flags: number; parts: Buffer[]; size: number } | undefined;
  private out: Buffer[] = [];
  private outBytes = 0;
  private flushing = false;
  /** Streams whose answer waits for window, in order. */
  private blocked: H2Stream[] = [];
  private goingAway = false;
  private dead = false;

  constructor(
    private readonly socket: net.Socket,
    private readonly opener: StreamOpener,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (c: Buffer) => this.input(c));
    socket.on('error', () => this.lost());
    socket.on('close', () => this.lost());
    this.write(SERVER_PREFACE);
  }

  get closed(): boolean {
    return this.dead;
  }

  /** Answers a stream: headers, its response frame as DATA, trailers `grpc-status: 0`. */
  respond(s: H2Stream, message: Buffer): void {
    if (this.dead) return;
    this.streams.delete(s.id);
    const len = message.length;
    if (len <= this.sendWindow && len <= s.sendWindow && len <= this.peerMaxFrame) {
      // The common case: one buffer with all three frames.
      const out = Buffer.allocUnsafe(27 + OK_HEADERS.length + len + OK_TRAILERS.length);
      let at = 0;
      frameHeader(out, at, OK_HEADERS.length, Frame.HEADERS, END_HEADERS, s.id);
      at += 9 + OK_HEADERS.copy(out, at + 9);
      frameHeader(out, at, len, Frame.DATA, 0, s.id);
      at += 9 + message.copy(out, at + 9);
      frameHeader(out, at, OK_TRAILERS.length, Frame.HEADERS, END_HEADERS | END_STREAM, s.id);
      OK_TRAILERS.copy(out, at + 9);
      this.sendWindow -= len;
      s.sendWindow -= len;
      this.write(out);
    } else {
      this.write(frame(Frame.HEADERS, END_HEADERS, s.id, OK_HEADERS));
      s.pending = message;
      s.pendingOff = 0;
      s.pendingTrailers = OK_TRAILERS;
      this.blocked.push(s);
      this.drain();
    }
    this.finish(s);
  }

  /**
   * A trailers-only answer (gRPC errors, refusals): one HEADERS frame ending the stream. `s` is a
   * stream, or the id of one being refused as it opens (then `remoteEnded` says whether its
   * request is complete).
   */
  respondTrailersOnly(s: H2Stream | number, headers: readonly (readonly [string, string])[], remoteEnded = true): void {
    if (this.dead) return;
    const id = typeof s === 'number' ? s : s.id;
    this.streams.delete(id);
    this.write(frame(Frame.HEADERS, END_HEADERS | END_STREAM, id, encodeHeaderBlock(headers)));
    if (typeof s !== 'number') this.finish(s);
    else if (!remoteEnded) this.write(frame(Frame.RST_STREAM, 0, id, u32s(h2error.NO_ERROR)));
  }

  /** Starts a graceful close: no new streams; the socket ends once open ones are answered. */
  goAway(): void {
    if (this.dead || this.goingAway) return;
    this.goingAway = true;
    this.write(frame(Frame.GOAWAY, 0, 0, u32s(this.lastStreamId, h2error.NO_ERROR)));
    this.endIfIdle();
  }

  destroy(): void {
    this.socket.destroy();
    this.lost();
  }

  /** After the answer: a request still being sent is told to stop (gRPC answers may come early). */
  private finish(s: H2Stream): void {
    if (!s.remoteEnded) this.write(frame(Frame.RST_STREAM, 0, s.id, u32s(h2error.NO_ERROR)));
    this.endIfIdle();
  }

  private endIfIdle(): void {
    if (this.goingAway && this.streams.size === 0 && this.blocked.length === 0) {
      this.flush();
      this.socket.end();
    }
  }

  private input(chunk: Buffer): void {
    if (this.dead) return;
    this.chunks.push(chunk);
    this.chunkBytes += chunk.length;
    if (this.chunkBytes < this.need) return;
    const buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.chunkBytes);
    this.chunks = [];
    this.chunkBytes = 0;
    let off = 0;
    try {
      if (!this.preface) {
        if (!buf.subarray(0, PREFACE.length).equals(PREFACE))
          throw new ConnectionError(h2error.PROTOCOL_ERROR, 'not an HTTP/2 client preface');
        this.preface = true;
        off = PREFACE.length;
      }
      this.need = 9;
      while (buf.length - off >= 9) {
        const len = (buf[off] << 16) | (buf[off + 1] << 8) | buf[off + 2];
        if (len > LOCAL_MAX_FRAME) throw new ConnectionError(h2error.FRAME_SIZE_ERROR, `frame of ${len} bytes`);
        if (buf.length - off - 9 < len) {
          this.need = 9 + len;
          break;
        }
        const type = buf[off + 3];
        const flags = buf[off + 4];
        const id = buf.readUInt32BE(off + 5) & 0x7fffffff;
        const payload = buf.subarray(off + 9, off + 9 + len);
        off += 9 + len;
        this.frame(type, flags, id, payload);
        if (this.dead) return;
      }
    } catch (err) {
      this.fatal(err);
      return;
    }
    if (off < buf.length) {
      this.chunks.push(buf.subarray(off));
      this.chunkBytes = buf.length - off;
    }
  }

  private frame(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.block !== undefined && (type !== Frame.CONTINUATION || id !== this.block.id)) {
      throw new ConnectionError(h2error.PROTOCOL_ERROR, 'header block interrupted');
    }
    switch (type) {
      case Frame.DATA:
        return this.onData(flags, id, payload);
      case Frame.HEADERS:
        return this.onHeaders(flags, id, payload);
      case Frame.CONTINUATION:
        return this.onContinuation(flags, id, payload);
      case Frame.RST_STREAM:
        return this.onReset(id, payload);
      case Frame.SETTINGS:
        return this.onSettings(flags, id, payload);
      case Frame.PING:
        if (payload.length !== 8) throw new ConnectionError(h2error.FRAME_SIZE_ERROR, 'PING of the wrong size');
        if (!(flags & ACK)) this.write(frame(Frame.PING, ACK, 0, payload));
        return;
      case Frame.WINDOW_UPDATE:
        return this.onWindowUpdate(id, payload);
      case Frame.PUSH_PROMISE:
        throw new ConnectionError(h2error.PROTOCOL_ERROR, 'PUSH_PROMISE from a client');
      default:
        // PRIORITY, GOAWAY (the peer's open streams still get their answers) and unknown types.
        return;
    }
  }

  /** Strips padding (and, for HEADERS, the priority fields) from a payload. */
  private static unpad(flags: number, payload: Buffer, priority: boolean): Buffer {
    let start = 0;
    let end = payload.length;
    if (flags & PADDED) {
      if (payload.length < 1) throw new ConnectionError(h2error.PROTOCOL_ERROR, 'padded frame without pad length');
      end -= payload[0];
      start = 1;
    }
    if (priority && flags & PRIORITY_FLAG) start += 5;
    if (end < start) throw new ConnectionError(h2error.PROTOCOL_ERROR, 'padding exceeds the frame');
    return start === 0 && end === payload.length ? payload : payload.subarray(start, end);
  }

  private onData(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(h2error.PROTOCOL_ERROR, 'DATA on stream 0');
    this.received += payload.length;
    if (this.received >= WINDOW_REFILL) {
      this.write(frame(Frame.WINDOW_UPDATE, 0, 0, u32s(this.received)));
      this.received = 0;
    }
    const s = this.streams.get(id);
    // Data of streams already answered or reset is dropped (it still counted against the window).
    if (s === undefined || s.remoteEnded) return;
    const data = H2Connection.unpad(flags, payload, false);
    if (data.length > 0) s.data(data);
    if (flags & END_STREAM) {
      s.remoteEnded = true;
      s.end();
    }
  }

  private onHeaders(flags: number, id: number, payload: Buffer): void {
    if (id === 0 || id % 2 === 0) throw new ConnectionError(h2error.PROTOCOL_ERROR, `HEADERS on stream ${id}`);
    const fragment = H2Connection.unpad(flags, payload, true);
    if (flags & END_HEADERS) this.onBlock(id, flags, fragment);
    else this.block = { id, flags, parts: [fragment], size: fragment.length };
  }

  private onContinuation(flags: number, id: number, payload: Buffer): void {
    const b = this.block;
    if (b === undefined) throw new ConnectionError(h2error.PROTOCOL_ERROR, 'CONTINUATION without HEADERS');
    b.parts.push(payload);
    b.size += payload.length;
    if (b.size > MAX_HEADER_LIST) throw new ConnectionError(h2error.PROTOCOL_ERROR, 'header block too large');
    if (flags & END_HEADERS) {
      this.block = undefined;
      this.onBlock(id, b.flags, Buffer.concat(b.parts, b.size));
    }
  }

  private onBlock(id: number, flags: number, block: Buffer): void {
    let headers: HeaderList;
    try {
      // Every block is decoded, even of streams we drop: the dynamic table must stay in step.
      headers = this.decoder.decode(block);
    } catch (err) {
      throw new ConnectionError(h2error.COMPRESSION_ERROR, err instanceof HpackError ? err.message : String(err));
    }
    const endStream = (flags & END_STREAM) !== 0;
    const open = this.streams.get(id);
    if (open !== undefined) {
      // Trailers of a request: gRPC clients send none, but they would end the stream.
      if (endStream && !open.remoteEnded) {
        open.remoteEnded = true;
        open.end();
      }
      return;
    }
    if (id <= this.lastStreamId) return; // a stream already answered or reset
    this.lastStreamId = id;
    if (this.goingAway) {
      this.write(frame(Frame.RST_STREAM, 0, id, u32s(h2error.REFUSED_STREAM)));
      return;
    }
    const s = this.opener.open(this, id, headers, endStream);
    if (s === undefined) return;
    if (endStream) s.remoteEnded = true;
    this.streams.set(id, s);
    if (endStream) s.end();
  }

  private onReset(id: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(h2error.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong size');
    const s = this.streams.get(id);
    if (s === undefined) {
      // Reset while its answer waited for window.
      const i = this.blocked.findIndex((b) => b.id === id);
      if (i >= 0) this.blocked.splice(i, 1);
      this.endIfIdle();
      return;
    }
    this.streams.delete(id);
    s.closed();
    this.endIfIdle();
  }

  private onSettings(flags: number, id: number, payload: Buffer): void {
    if (id !== 0) throw new ConnectionError(h2error.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if (flags & ACK) return;
    if (payload.length % 6 !== 0) throw new ConnectionError(h2error.FRAME_SIZE_ERROR, 'SETTINGS of the wrong size');
    for (let at = 0; at < payload.length; at += 6) {
      const key = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (key === 0x4) {
        if (value > MAX_WINDOW) throw new ConnectionError(h2error.FLOW_CONTROL_ERROR, 'INITIAL_WINDOW_SIZE too large');
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const s of this.streams.values()) s.sendWindow += delta;
        for (const s of this.blocked) if (!this.streams.has(s.id)) s.sendWindow += delta;
      } else if (key === 0x5) {
        if (value < 16_384 || value > 16_777_215)
          throw new ConnectionError(h2error.PROTOCOL_ERROR, 'MAX_FRAME_SIZE out of range');
        this.peerMaxFrame = value;
      }
      // HEADER_TABLE_SIZE does not matter (we never index); the rest does not apply to a server.
    }
    this.write(SETTINGS_ACK);
    this.drain();
  }

  private onWindowUpdate(id: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(h2error.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong size');
    const inc = payload.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) this.sendWindow += inc;
    else {
      const s = this.streams.get(id) ?? this.blocked.find((b) => b.id === id);
      if (s !== undefined) s.sendWindow += inc;
    }
    if (this.blocked.length > 0) this.drain();
  }

  /** Sends what the windows allow of the answers waiting for them, oldest first. */
  private drain(): void {
    if (this.blocked.length > 0) {
      const waiting: H2Stream[] = [];
      for (const s of this.blocked) {
        const msg = s.pending as Buffer;
        while (s.pendingOff < msg.length && this.sendWindow > 0 && s.sendWindow > 0) {
          const n = Math.min(msg.length - s.pendingOff, this.sendWindow, s.sendWindow, this.peerMaxFrame);
          const head = Buffer.allocUnsafe(9);
          frameHeader(head, 0, n, Frame.DATA, 0, s.id);
          this.write(head);
          this.write(msg.subarray(s.pendingOff, s.pendingOff + n));
          s.pendingOff += n;
          this.sendWindow -= n;
          s.sendWindow -= n;
        }
        if (s.pendingOff < msg.length) {
          waiting.push(s);
          continue;
        }
        this.write(frame(Frame.HEADERS, END_HEADERS | END_STREAM, s.id, s.pendingTrailers));
        s.pending = undefined;
        s.pendingTrailers = undefined;
      }
      this.blocked = waiting;
    }
    this.endIfIdle();
  }

  private write(b: Buffer): void {
    if (this.dead) return;
    this.out.push(b);
    this.outBytes += b.length;
    if (!this.flushing) {
      this.flushing = true;
      // After the event loop's I/O phase, not at the end of this tick: answers to requests read
      // from several chunks leave in one write (a quarter fewer writes than per tick).
      setImmediate(flushConnection, this);
    }
  }

  /** @internal Writes out what this turn produced. */
  flush(): void {
    this.flushing = false;
    const out = this.out;
    if (out.length === 0 || this.dead) return;
    const bytes = this.outBytes;
    this.out = [];
    this.outBytes = 0;
    if (out.length === 1) this.socket.write(out[0]);
    else if (bytes <= MERGE_LIMIT) this.socket.write(Buffer.concat(out, bytes));
    else {
      this.socket.cork();
      for (const b of out) this.socket.write(b);
      this.socket.uncork();
    }
  }

  private fatal(err: unknown): void {
    const code = err instanceof ConnectionError ? err.code : h2error.INTERNAL_ERROR;
    if (!(err instanceof ConnectionError))
      this.opener.connectionError(err instanceof Error ? err : new Error(String(err)));
    const reason = Buffer.from(err instanceof Error ? err.message : String(err), 'utf8').subarray(0, 256);
    this.write(frame(Frame.GOAWAY, 0, 0, Buffer.concat([u32s(this.lastStreamId, code), reason])));
    this.flush();
    this.socket.end();
    this.lost();
  }

  /** The connection is gone: open streams are cancelled. */
  private lost(): void {
    if (this.dead) return;
    this.dead = true;
    this.out = [];
    const open = [...this.streams.values()];
    this.streams.clear();
    this.blocked = [];
    for (const s of open) s.closed();
  }
}

function flushConnection(c: H2Connection): void {
  c.flush();
}
