/**
 * gRPC over HTTP/2 (cleartext h2c, or TLS with ALPN h2 and optional client certificates and API
 * key), unary methods only — all the Temporal API needs — on this
 * package's own HTTP/2 framing (`h2connection.ts`, `hpack.ts`). grpc-js's server, and then
 * `node:http2`, cost several stream objects, events, header objects and frames written one by one
 * per call; this path reads the one request frame, calls the handler and writes headers, one
 * response frame and trailers in one buffer (the measured saving is in the README's benchmark
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
import crypto from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import zlib from 'node:zlib';
import { status } from '../errors';
import type { Logger } from '../logger';
import { invoke, type CallContext, type CallResult, type UnaryMethod } from './grpc';
import { H2Connection, H2Stream, type StreamOpener } from './h2connection';
import type { HeaderList } from './hpack';

/** Compressed requests up to this size are inflated synchronously (cheaper than zlib streams). */
const SYNC_INFLATE_LIMIT = 64 * 1024;

export interface H2ServerOptions {
  /** Largest request message accepted (after decompression). */
  maxReceiveBytes: number;
  logger: Logger;
  /** gRPC over TLS (ALPN h2) instead of cleartext HTTP/2 (README "TLS and API keys"). */
  tls?: ServerTlsOptions;
  /** Every call must carry `authorization: Bearer <apiKey>`, else UNAUTHENTICATED. */
  apiKey?: string;
}

export interface ServerTlsOptions {
  /** PEM certificate chain and private key of the server. */
  cert: string | Buffer;
  key: string | Buffer;
  /** PEM CA certificate(s): when set, a client certificate issued by one of them is required (mTLS). */
  clientCa?: string | Buffer;
}

/** `grpc-timeout`: digits and a unit (H, M, S, m, u, n) → ms; Infinity when absent or malformed. */
export function parseGrpcTimeout(v: string | undefined): number {
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
 * this server's CPU and deflating them the worker's too (docs/performance.md "Server CPU per workflow: fixed and marginal cost").
 * Every other client, and every other method, keeps getting its compressed requests served.
 */
export function retriesUncompressed(headers: HeaderList): boolean {
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

export class H2Server implements StreamOpener {
  private readonly server: net.Server;
  private readonly methods = new Map<string, UnaryMethod>();
  private readonly connections = new Set<H2Connection>();

  private readonly expectedAuthorization: Buffer | undefined;

  constructor(readonly opts: H2ServerOptions) {
    const accept = (socket: net.Socket): void => {
      const c = new H2Connection(socket, this);
      this.connections.add(c);
      socket.on('close', () => this.connections.delete(c));
    };
    if (opts.tls) {
      const t = opts.tls;
      this.server = tls.createServer(
        {
          cert: t.cert,
          key: t.key,
          // gRPC runs on HTTP/2 only: a client that does not offer h2 gets no connection.
          ALPNProtocols: ['h2'],
          ...(t.clientCa ? { ca: t.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
        },
        (socket) => {
          if (socket.alpnProtocol !== 'h2') socket.destroy();
          else accept(socket);
        },
      );
      // A refused handshake (no or wrong client certificate, unknown CA on the client's side).
      this.server.on('tlsClientError', (err: Error) => opts.logger.warn({ err: err.message }, 'TLS handshake refused'));
    } else {
      this.server = net.createServer(accept);
    }
    this.expectedAuthorization = opts.apiKey === undefined ? undefined : Buffer.from(`Bearer ${opts.apiKey}`);
    this.server.on('error', (err) => opts.logger.error({ err: String(err) }, 'server socket error'));
  }

  /** With an API key configured: does this request carry it (compared in constant time)? */
  private authorized(headers: HeaderList): boolean {
    const want = this.expectedAuthorization;
    if (want === undefined) return true;
    const got = Buffer.from(String(headers.authorization ?? ''));
    return got.length === want.length && crypto.timingSafeEqual(got, want);
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

  /** Stop accepting; give open connections `graceMs` to finish their calls, then drop them. */
  close(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        for (const c of this.connections) c.destroy();
      }, graceMs);
      t.unref();
      this.server.close(() => {
        clearTimeout(t);
        resolve();
      });
      for (const c of this.connections) c.goAway();
    });
  }

  connectionError(err: Error): void {
    this.opts.logger.error({ err: err.stack ?? String(err) }, 'http2 connection failed');
  }

  /** A new request: routed, refused at once, or a call waiting for its message. */
  open(conn: H2Connection, id: number, headers: HeaderList, endStream: boolean): H2Stream | undefined {
    const path = headers[':path'] ?? '';
    const ct = headers['content-type'] ?? '';
    if (headers[':method'] !== 'POST' || !ct.startsWith('application/grpc')) {
      conn.respondTrailersOnly(id, [[':status', ct.startsWith('application/grpc') ? '405' : '415']], endStream);
      return undefined;
    }
    if (!this.authorized(headers)) {
      conn.respondTrailersOnly(
        id,
        errorHeaders(status.UNAUTHENTICATED, 'Request unauthorized: missing or invalid API key'),
        endStream,
      );
      return undefined;
    }
    const m = this.methods.get(path);
    if (!m) {
      const name = path.split('/').pop() ?? path;
      conn.respondTrailersOnly(
        id,
        errorHeaders(status.UNIMPLEMENTED, `${name || path} is not implemented by the pixflow test server`),
        endStream,
      );
      return undefined;
    }
    const encoding = headers['grpc-encoding'];
    if (
      encoding !== undefined &&
      encoding !== 'identity' &&
      m.name === 'GetSystemInfo' &&
      retriesUncompressed(headers)
    ) {
      // See `retriesUncompressed`: the answer a server without gzip gives, so that this client
      // connects again without compressing its requests.
      conn.respondTrailersOnly(
        id,
        errorHeaders(
          status.UNIMPLEMENTED,
          `This server prefers uncompressed requests from this client (grpc-encoding "${encoding}" on GetSystemInfo); compressed ones are still accepted`,
        ),
        endStream,
      );
      return undefined;
    }
    return new Call(this, conn, id, m, Date.now() + parseGrpcTimeout(headers['grpc-timeout']), encoding ?? 'identity');
  }

  /** @internal Called by `Call` when the request is complete. */
  run(call: Call, body: Buffer): void {
    if (call.size > this.opts.maxReceiveBytes + 5) {
      call.fail(
        status.RESOURCE_EXHAUSTED,
        `Received message larger than max (${call.size} vs. ${this.opts.maxReceiveBytes})`,
      );
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
      msg
        .then((bytes) => invoke(call.m, bytes, call, this.opts.logger))
        .then(
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
    if (body.length !== 5 + len)
      throw new CallError(status.INTERNAL, 'Unary call got more or less than one request message');
    const data = body.subarray(5);
    if (!compressed) return data;
    if (encoding !== 'gzip' && encoding !== 'deflate') {
      throw new CallError(status.UNIMPLEMENTED, `Received message compressed with unsupported encoding "${encoding}"`);
    }
    const failed = (err: unknown): never => {
      const tooBig = err instanceof RangeError || /maxOutputLength|buffer/i.test(String(err));
      throw tooBig
        ? new CallError(status.RESOURCE_EXHAUSTED, 'Received message larger than max after decompression')
        : new CallError(
            status.INTERNAL,
            `Failed to decompress the request: ${err instanceof Error ? err.message : String(err)}`,
          );
    };
    try {
      const out = inflate(encoding, data, this.opts.maxReceiveBytes);
      return out instanceof Promise ? out.catch(failed) : out;
    } catch (err) {
      return failed(err);
    }
  }
}

/** Trailers-only error answer: status 200, gRPC status and percent-encoded message. */
function errorHeaders(code: number, details: string): [string, string][] {
  return [
    [':status', '200'],
    ['content-type', 'application/grpc'],
    ['grpc-accept-encoding', 'identity'],
    ['grpc-status', String(code)],
    // Bounded so that the answer fits one frame of the smallest size a peer may ask for.
    ['grpc-message', percentEncode(details.length > 2000 ? `${details.slice(0, 2000)}…` : details)],
  ];
}

/**
 * grpc-message as the gRPC spec encodes it: only '%' and bytes outside printable ASCII. grpc-js
 * (the TS client) decodes it with `decodeURI`, which leaves an encoded ':' or '=' as it is, so
 * encodeURIComponent showed a message like `invalid query%3A …` to every TS caller.
 */
function percentEncode(s: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(s)) return s;
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    out +=
      b >= 0x20 && b <= 0x7e && b !== 0x25
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** One unary call in progress; it is also the handler's `CallContext`. */
class Call extends H2Stream implements CallContext {
  readonly method: string;
  size = 0;
  private chunks: Buffer | Buffer[] | undefined;
  private cancelCbs: (() => void)[] | undefined;
  private answered = false;
  private cancelled = false;

  constructor(
    private readonly server: H2Server,
    conn: H2Connection,
    id: number,
    readonly m: UnaryMethod,
    private readonly deadline: number,
    readonly encoding: string,
  ) {
    super(conn, id);
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
    if (this.conn.closed) {
      this.cancelled = !this.answered;
      if (this.cancelled) cb();
      return;
    }
    (this.cancelCbs ??= []).push(cb);
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
    if (r.ok) {
      if (this.answered || this.cancelled) return;
      this.answered = true;
      this.conn.respond(this, r.frame);
    } else this.fail(r.code, r.details);
  }

  fail(code: number, details: string): void {
    if (this.answered || this.cancelled) return;
    this.answered = true;
    this.conn.respondTrailersOnly(this, errorHeaders(code, details));
  }

  failed(err: unknown): void {
    if (err instanceof CallError) this.fail(err.code, err.message);
    else this.fail(status.INTERNAL, `${this.method}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const EMPTY = Buffer.alloc(0);
