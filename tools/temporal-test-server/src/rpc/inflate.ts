/**
 * Cheaper request decompression for grpc-js servers.
 *
 * The SDK's Rust-core connection gzip-compresses every request (its `grpcCompression` default) and
 * ignores the server's `grpc-accept-encoding`, so the server cannot ask it not to. grpc-js 1.x
 * inflates each message through a fresh `zlib.createGunzip()` stream (stream objects, event
 * listeners and a thread-pool round trip per message); under load that was the largest single
 * item in the server's CPU profile (about a quarter of its busy time).
 *
 * For the small messages workers send we inflate synchronously with a bounded output size
 * instead. Anything unusual (large input, output above the bound, corrupt data, other encodings)
 * goes to grpc-js's own implementation, so limits and error statuses stay exactly as grpc-js
 * reports them. If a future grpc-js no longer has the private method, nothing is patched.
 */
import zlib from 'node:zlib';
import serverInterceptors = require('@grpc/grpc-js/build/src/server-interceptors');

/** Compressed requests up to this size are inflated synchronously. */
const SYNC_INPUT_LIMIT = 64 * 1024;
/** ...as long as they inflate to at most this much (else grpc-js's streaming path decides). */
const SYNC_OUTPUT_LIMIT = 4 * 1024 * 1024;

type Decompress = (message: Buffer, encoding: string) => Buffer | Promise<Buffer>;

interface PatchableCall {
  decompressMessage?: Decompress;
  maxReceiveMessageSize?: number;
}

let installed = false;

export function installFastInflate(): boolean {
  if (installed) return true;
  const proto = serverInterceptors.BaseServerInterceptingCall.prototype as unknown as PatchableCall;
  const original = proto.decompressMessage;
  if (typeof original !== 'function' || original.length !== 2) return false;
  proto.decompressMessage = function fastDecompress(this: PatchableCall, message: Buffer, encoding: string) {
    if ((encoding === 'gzip' || encoding === 'deflate') && message.length - 5 <= SYNC_INPUT_LIMIT) {
      const max = this.maxReceiveMessageSize ?? -1;
      const limit = max >= 0 ? Math.min(max, SYNC_OUTPUT_LIMIT) : SYNC_OUTPUT_LIMIT;
      try {
        const body = message.subarray(5);
        // Output buffers sized to the message (zlib's default is 16 KiB per call, mostly garbage).
        const opts = { maxOutputLength: limit, chunkSize: Math.min(64 * 1024, Math.max(1024, body.length * 4)) };
        return encoding === 'gzip' ? zlib.gunzipSync(body, opts) : zlib.inflateSync(body, opts);
      } catch {
        // Too large for the fast path or corrupt: let grpc-js produce its usual result.
      }
    }
    return original.call(this, message, encoding);
  };
  installed = true;
  return true;
}
