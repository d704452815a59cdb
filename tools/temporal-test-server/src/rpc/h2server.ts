/**
 * gRPC over cleartext HTTP/2 (h2c) served directly on `node:http2`, unary methods only — all the
 * Temporal API needs. grpc-js's server costs several stream objects, interceptor layers and
 * metadata conversions per call; this path reads the one request frame, calls the handler and
 * writes one response frame plus trailers (the measured saving is in the README's benchmark
 * section).
 *
 * Wire format (gRPC over HTTP/2 spec): POST `/<package.Service>/<Method>`, `content-type:
 * application/grpc`; body = 1-byte compressed flag + 4-byte big-endian length + message;
 * `grpc-encoding` names the request compression (the Rust-core client always gzips); the answer
 * is headers, one frame, then trailers `grpc-status` / `grpc-message` (percent-encoded), or a
 * trailers-only answer for errors. `grpc-timeout` gives the caller's deadline; a stream reset
 * before the answer cancels the call (long polls drop their place in line).
 */
import http2 from 'node:http2';
import zlib from 'node:zlib';
import { status } from '@grpc/grpc-js';
import type { Logger } from '../logger';
import { invoke, type CallContext, type UnaryMethod } from './grpc';

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
  const m = /^(\d{1,8})([HMSmun])$/.exec(v);
  if (!m) return Infinity;
  const n = Number(m[1]);
  const scale: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };
  return n * scale[m[2]];
}

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

  constructor(private readonly opts: H2ServerOptions) {
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
    stream.on('error', () => undefined);
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
    const started = Date.now();
    const deadline = started + parseGrpcTimeout(headers['grpc-timeout']);
    const encoding = String(headers['grpc-encoding'] ?? 'identity');
    const cancelCbs: (() => void)[] = [];
    let answered = false;
    let cancelled = false;
    stream.on('close', () => {
      if (answered) return;
      cancelled = true;
      for (const cb of cancelCbs.splice(0)) {
        try {
          cb();
        } catch (err) {
          this.opts.logger.error({ method: m.name, err: String(err) }, 'cancel callback failed');
        }
      }
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size > this.opts.maxReceiveBytes + 5) tooLarge = true;
      else chunks.push(c);
    });
    stream.on('end', () => {
      if (tooLarge) {
        this.fail(stream, status.RESOURCE_EXHAUSTED, `Received message larger than max (${size} vs. ${this.opts.maxReceiveBytes})`);
        return;
      }
      const ctx: CallContext = {
        method: m.name,
        remainingMs: () => deadline - Date.now(),
        onCancel: (cb) => {
          if (cancelled) cb();
          else cancelCbs.push(cb);
        },
      };
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const done = (r: Awaited<ReturnType<typeof invoke>>): void => {
        answered = true;
        if (r.ok) this.reply(stream, r.bytes);
        else this.fail(stream, r.code, r.details);
      };
      const failed = (err: unknown): void => {
        answered = true;
        if (err instanceof CallError) this.fail(stream, err.code, err.message);
        else this.fail(stream, status.INTERNAL, `${m.name}: ${err instanceof Error ? err.message : String(err)}`);
      };
      // No promise hops beyond the handler's own: most requests are small and inflated synchronously.
      let msg: Uint8Array | Promise<Uint8Array>;
      try {
        msg = this.message(body, encoding);
      } catch (err) {
        failed(err);
        return;
      }
      if (msg instanceof Promise) msg.then((bytes) => invoke(m, bytes, ctx, this.opts.logger)).then(done, failed);
      else invoke(m, msg, ctx, this.opts.logger).then(done, failed);
    });
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

  private reply(stream: http2.ServerHttp2Stream, bytes: Uint8Array): void {
    if (stream.destroyed || stream.closed) return;
    const frame = Buffer.allocUnsafe(5 + bytes.length);
    frame[0] = 0;
    frame.writeUInt32BE(bytes.length, 1);
    frame.set(bytes, 5);
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-accept-encoding': 'identity', 'grpc-encoding': 'identity' },
      { waitForTrailers: true },
    );
    stream.once('wantTrailers', () => {
      stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': '' });
    });
    stream.end(frame);
  }

  /** Trailers-only error answer. */
  private fail(stream: http2.ServerHttp2Stream, code: number, details: string): void {
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
