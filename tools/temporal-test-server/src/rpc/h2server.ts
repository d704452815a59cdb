/**
 * gRPC over cleartext HTTP/2 (h2c) served directly on `node:http2`, unary methods only — all the
 * Temporal API needs. grpc-js's server costs several stream objects, interceptor layers and
 * metadata conversions per call; this path reads the one request frame, calls the handler and
 * writes one response frame plus trailers (the measured saving is in the README's benchmark
 * section).
 *
 * Wire format (gRPC over HTTP/2 spec): POST `/<package.Service>/<Method>`, `content-type:
 * application/grpc`; body = 1-byte compressed flag + 4-byte big-endian length + message;
 * `grpc-encoding` names the request compression (gzip and deflate are inflated; the SDK's Rust
 * core is asked to stop, see `retriesUncompressed`); the answer is headers, one frame, then
 * trailers `grpc-status` (and `grpc-message`, percent-encoded, on errors), or a trailers-only
 * answer for errors. `grpc-timeout` gives the caller's deadline; a stream reset
 * before the answer cancels the call (long polls drop their place in line).
 */
import http2 from 'node:http2';
import zlib from 'node:zlib';
import { status } from '../errors';
import type { Logger } from '../logger';
import { invoke, type CallContext, type CallResult, type UnaryMethod } from './grpc';

/** Compressed requests up to this size are inflated synchronously (cheaper than zlib streams). */
const SYNC_INFLATE_LIMIT = 64 * 1024;

export interface H2ServerOptions {
  /** Largest request message accepted (after decompression). */
  maxReceiveBytes: number;
  logger: Logger;
}

/** `grpc-timeout`: digits and a unit (H, M, S, m, u, n) → ms; Infinity when absent or malformed. */
export function parseGrpcTimeout(v: string | string[] | undefined): number {
  if (typeof v !== 'string') return Infinity;
  const m = GRPC_TIMEOUT.exec(v);
  if (!m) return Infinity;
  return Number(m[1]) * TIMEOUT_UNIT_MS[m[2] as keyof typeof TIMEOUT_UNIT_MS];
}

const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const TIMEOUT_UNIT_MS = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

function inflate(encoding: string, data: Buffer, max: number): Buffer | Promise<Buffer> {
  const opts = { maxOutputLength: max };
  if (data.length <= SYNC_INFLATE_LIMIT) {
    // Output buffers sized to the message (zlib's default chunk is 16 KiB, mostly garbage).
    const sized = { ...opts, chunkSize: Math.min(64 * 1024, Math.max(1024, data.length * 4)) };
    return encoding === 'gzip' ? zlib.gunzipSync(data, sized) : zlib.inflateSync(data, sized);
  }
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, out: Buffer): void => (err ? reject(err) : resolve(out));
    if (encoding === 'gzip') zlib.gunzip(data, opts, done);
    else zlib.inflate(data, opts, done);
  });
}

/**
 * Clients known to connect again without compression when their first call (GetSystemInfo) is
 * refused with UNIMPLEMENTED naming "grpc-encoding": the Rust core's `Connection::connect` in the
 * TypeScript SDK from 1.24 (`crates/client/src/lib.rs`, which ignores the server's
 * `grpc-accept-encoding` otherwise and gzips every request). The SDK worker's and the test
 * environment's native connections are such clients; inflating their requests cost 5-10 % of
 * this server's CPU and deflating them the worker's too (README, "Server CPU per workflow").
 * Every other client, and every other method, keeps getting its compressed requests served.
 */
export function retriesUncompressed(headers: http2.IncomingHttpHeaders): boolean {
  if (headers['client-name'] !== 'temporal-typescript') return false;
  const ua = headers['user-agent'];
  if (typeof ua !== 'string' || !ua.startsWith('tonic/')) return false;
  const v = /^(\d+)\.(\d+)\./.exec(String(headers['client-version'] ?? ''));
  if (!v) return false;
  const major = Number(v[1]);
  return major > 1 || (major === 1 && Number(v[2]) >= 24);
}

class CallError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class H2Server {
  private readonly server: http2.Http2Server;
  private readonly methods = new Map<string, UnaryMethod>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();

  constructor(readonly opts: H2ServerOptions) {
    this.server = http2.createServer({
      // Histories of long workflows can be large and many long polls are open at once.
      maxSessionMemory: 256,
      settings: { maxConcurrentStreams: 100_000, maxHeaderListSize: 1 << 20 },
    });
    this.server.on('session', (s) => {
      this.sessions.add(s);
      s.on('close', () => this.sessions.delete(s));
      s.on('error', () => undefined);
    });
    this.server.on('stream', (stream, headers) => this.onStream(stream, headers));
    this.server.on('error', (err) => opts.logger.error({ err: String(err) }, 'http2 server error'));
  }

  addMethods(methods: UnaryMethod[]): void {
    for (const m of methods) this.methods.set(m.path, m);
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        const addr = this.server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : port);
      });
    });
  }

  /** Stop accepting; give open sessions `graceMs` to finish, then drop them. */
  close(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        for (const s of this.sessions) s.destroy();
      }, graceMs);
      t.unref();
      this.server.close(() => {
        clearTimeout(t);
        resolve();
      });
      for (const s of this.sessions) s.close();
    });
  }

  private onStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    stream.on('error', ignore);
    const path = headers[':path'] ?? '';
    const ct = headers['content-type'] ?? '';
    if (headers[':method'] !== 'POST' || !ct.startsWith('application/grpc')) {
      if (!stream.destroyed) stream.respond({ ':status': ct.startsWith('application/grpc') ? 405 : 415 }, { endStream: true });
      return;
    }
    const m = this.methods.get(path);
    if (!m) {
      const name = path.split('/').pop() ?? path;
      this.fail(stream, status.UNIMPLEMENTED, `${name || path} is not implemented by the pixflow test server`);
      stream.resume();
      return;
    }
    const encoding = headers['grpc-encoding'];
    if (encoding !== undefined && encoding !== 'identity' && m.name === 'GetSystemInfo' && retriesUncompressed(headers)) {
      // See `retriesUncompressed`: the answer a server without gzip gives, so that this client
      // connects again without compressing its requests.
      this.fail(stream, status.UNIMPLEMENTED, `This server prefers uncompressed requests from this client (grpc-encoding "${String(encoding)}" on GetSystemInfo); compressed ones are still accepted`);
      stream.resume();
      return;
    }
    const call = new Call(this, stream, m, Date.now() + parseGrpcTimeout(headers['grpc-timeout']), String(encoding ?? 'identity'));
    (stream as CallStream)[kCall] = call;
    stream.on('data', onCallData);
    stream.on('end', onCallEnd);
  }

  /** @internal Called by `Call` when the request is complete. */
  run(call: Call, body: Buffer): void {
    if (call.size > this.opts.maxReceiveBytes + 5) {
      this.fail(call.stream, status.RESOURCE_EXHAUSTED, `Received message larger than max (${call.size} vs. ${this.opts.maxReceiveBytes})`);
      return;
    }
    // No promise hops beyond the handler's own: most requests are small and inflated synchronously,
    // and a synchronous handler answers synchronously.
    let msg: Uint8Array | Promise<Uint8Array>;
    try {
      msg = this.message(body, call.encoding);
    } catch (err) {
      call.failed(err);
      return;
    }
    if (msg instanceof Promise) {
      msg.then((bytes) => invoke(call.m, bytes, call, this.opts.logger)).then(
        (r) => call.done(r),
        (err: unknown) => call.failed(err),
      );
      return;
    }
    const r = invoke(call.m, msg, call, this.opts.logger);
    if (r instanceof Promise) {
      r.then(
        (v) => call.done(v),
        (err: unknown) => call.failed(err),
      );
    } else {
      call.done(r);
    }
  }

  /** The request's one length-prefixed message, decompressed. */
  private message(body: Buffer, encoding: string): Uint8Array | Promise<Uint8Array> {
    if (body.length < 5) throw new CallError(status.INTERNAL, 'No request message received');
    const compressed = body[0] === 1;
    const len = body.readUInt32BE(1);
    if (body.length !== 5 + len) throw new CallError(status.INTERNAL, 'Unary call got more or less than one request message');
    const data = body.subarray(5);
    if (!compressed) return data;
    if (encoding !== 'gzip' && encoding !== 'deflate') {
      throw new CallError(status.UNIMPLEMENTED, `Received message compressed with unsupported encoding "${encoding}"`);
    }
    const failed = (err: unknown): never => {
      const tooBig = err instanceof RangeError || /maxOutputLength|buffer/i.test(String(err));
      throw tooBig
        ? new CallError(status.RESOURCE_EXHAUSTED, 'Received message larger than max after decompression')
        : new CallError(status.INTERNAL, `Failed to decompress the request: ${err instanceof Error ? err.message : String(err)}`);
    };
    try {
      const out = inflate(encoding, data, this.opts.maxReceiveBytes);
      return out instanceof Promise ? out.catch(failed) : out;
    } catch (err) {
      return failed(err);
    }
  }

  /** @internal */
  reply(stream: http2.ServerHttp2Stream, frame: Buffer): void {
    if (stream.destroyed || stream.closed) return;
    // Constant header and trailer objects (Node copies them) and no `date` header: a few hundred
    // ns and three allocations per call, on every call (README, "Server CPU per workflow").
    stream.respond(OK_HEADERS, RESPOND_WITH_TRAILERS);
    // 'on', not 'once' (no wrapper per call): a stream asks for its trailers once.
    stream.on('wantTrailers', sendOkTrailers);
    stream.end(frame);
  }

  /** Trailers-only error answer. */
  fail(stream: http2.ServerHttp2Stream, code: number, details: string): void {
    if (stream.destroyed || stream.closed || stream.headersSent) return;
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc',
        'grpc-accept-encoding': 'identity',
        'grpc-status': String(code),
        'grpc-message': encodeURIComponent(details),
      },
      { endStream: true },
    );
  }
}

// No `grpc-encoding` (the message is not compressed, identity is the default) and no empty
// `grpc-message`: both optional in gRPC over HTTP/2, and each header costs on every call.
const OK_HEADERS: http2.OutgoingHttpHeaders = { ':status': 200, 'content-type': 'application/grpc', 'grpc-accept-encoding': 'identity' };
const OK_TRAILERS: http2.OutgoingHttpHeaders = { 'grpc-status': '0' };
const RESPOND_WITH_TRAILERS = { waitForTrailers: true, sendDate: false };

function sendOkTrailers(this: http2.ServerHttp2Stream): void {
  this.sendTrailers(OK_TRAILERS);
}

const kCall = Symbol('call');
type CallStream = http2.ServerHttp2Stream & { [kCall]: Call };

// Shared stream listeners (no closures per call): the call hangs off the stream.
function onCallClose(this: CallStream): void {
  this[kCall].closed();
}
function onCallData(this: CallStream, c: Buffer): void {
  this[kCall].data(c);
}
function onCallEnd(this: CallStream): void {
  this[kCall].end();
}

/** One unary call in progress; it is also the handler's `CallContext`. */
class Call implements CallContext {
  readonly method: string;
  size = 0;
  private chunks: Buffer | Buffer[] | undefined;
  private cancelCbs: (() => void)[] | undefined;
  private answered = false;
  private cancelled = false;

  constructor(
    private readonly server: H2Server,
    readonly stream: http2.ServerHttp2Stream,
    readonly m: UnaryMethod,
    private readonly deadline: number,
    readonly encoding: string,
  ) {
    this.method = m.name;
  }

  remainingMs(): number {
    return this.deadline - Date.now();
  }

  /** A field, not a method: handlers pass `ctx.onCancel` on by itself. */
  readonly onCancel = (cb: () => void): void => {
    if (this.cancelled) {
      cb();
      return;
    }
    if (this.cancelCbs === undefined) {
      // Only calls that wait (long polls) ask to hear of a cancel: the 'close' listener is added
      // then, not on every call.
      if (this.stream.closed || this.stream.destroyed) {
        this.cancelled = !this.answered;
        if (this.cancelled) cb();
        return;
      }
      this.cancelCbs = [];
      // 'on', not 'once': a stream closes once, and `once` wraps the listener in a new closure.
      this.stream.on('close', onCallClose);
    }
    this.cancelCbs.push(cb);
  };

  data(c: Buffer): void {
    this.size += c.length;
    if (this.size > this.server.opts.maxReceiveBytes + 5) return;
    if (this.chunks === undefined) this.chunks = c;
    else if (Array.isArray(this.chunks)) this.chunks.push(c);
    else this.chunks = [this.chunks, c];
  }

  end(): void {
    const c = this.chunks;
    this.chunks = undefined;
    this.server.run(this, c === undefined ? EMPTY : Array.isArray(c) ? Buffer.concat(c) : c);
  }

  closed(): void {
    if (this.answered) return;
    this.cancelled = true;
    const cbs = this.cancelCbs;
    this.cancelCbs = undefined;
    for (const cb of cbs ?? []) {
      try {
        cb();
      } catch (err) {
        this.server.opts.logger.error({ method: this.method, err: String(err) }, 'cancel callback failed');
      }
    }
  }

  done(r: CallResult): void {
    this.answered = true;
    if (r.ok) this.server.reply(this.stream, r.frame);
    else this.server.fail(this.stream, r.code, r.details);
  }

  failed(err: unknown): void {
    this.answered = true;
    if (err instanceof CallError) this.server.fail(this.stream, err.code, err.message);
    else this.server.fail(this.stream, status.INTERNAL, `${this.method}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const EMPTY = Buffer.alloc(0);

function ignore(): void {
  // Stream errors surface as 'close' (the call is cancelled); nothing else to do.
}
