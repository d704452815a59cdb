/**
 * Protobuf services from the SDK's compiled root, as tables of unary methods for the HTTP/2
 * transport (h2server.ts): a malformed request becomes INVALID_ARGUMENT, every method we do not
 * implement answers UNIMPLEMENTED naming the method, and no handler error escapes to the process.
 */
import protoRoot = require('@temporalio/proto/protos/root');
import { RpcError, status } from '../errors';
import type { Logger } from '../logger';
import { decodeMessage, encodeMessage, type MessageType } from '../proto';

interface ReflectedMethod {
  name: string;
  requestType: string;
  responseType: string;
  requestStream?: boolean;
  responseStream?: boolean;
  resolvedRequestType: (MessageType & { fullName: string }) | null;
  resolvedResponseType: (MessageType & { fullName: string }) | null;
}

interface ReflectedService {
  fullName: string;
  methods: Record<string, ReflectedMethod>;
  resolveAll(): ReflectedService;
}

interface ReflectedRoot {
  lookupService(path: string): ReflectedService;
}

const root = protoRoot as unknown as ReflectedRoot;

export interface CallContext {
  method: string;
  /** Milliseconds until the caller's deadline (Infinity when none was given). */
  remainingMs(): number;
  /** Called if the caller goes away before we answer (long polls drop their place in line). */
  onCancel(cb: () => void): void;
}

export type Handler = (req: object, ctx: CallContext) => Promise<object> | object;

/** Typed adapter: the wrapper guarantees `req` was decoded with the method's request type. */
export function handler<Req extends object>(fn: (req: Req, ctx: CallContext) => Promise<object> | object): Handler {
  return (req, ctx) => fn(req as Req, ctx);
}

/** One unary method of a service: its path, codecs and our handler (absent = UNIMPLEMENTED). */
export interface UnaryMethod {
  name: string;
  path: string;
  requestType: MessageType;
  responseType: MessageType;
  fn?: Handler;
}

/** The unary methods of a service from the SDK's compiled proto root, bound to `impl`. */
export function unaryMethods(serviceName: string, impl: Record<string, Handler>): UnaryMethod[] {
  const service = root.lookupService(serviceName).resolveAll();
  const out: UnaryMethod[] = [];
  for (const [name, method] of Object.entries(service.methods)) {
    const requestType = method.resolvedRequestType;
    const responseType = method.resolvedResponseType;
    if (method.requestStream || method.responseStream || !requestType || !responseType) continue;
    out.push({
      name,
      path: `/${service.fullName.replace(/^\./, '')}/${name}`,
      requestType,
      responseType,
      fn: impl[name],
    });
  }
  return out;
}

export type CallResult = { ok: true; frame: Buffer } | { ok: false; code: number; details: string };

/** The response message as one gRPC frame: uncompressed flag, 4-byte length, message. */
export function encodeFrame(type: MessageType, message: object): Buffer {
  const frame = encodeMessage(type, message, 5);
  frame[0] = 0;
  frame.writeUInt32BE(frame.length - 5, 1);
  return frame;
}

/**
 * Runs one decoded call: the handler's answer as an encoded frame, or an error status. No handler
 * error escapes; unexpected ones are logged and become INTERNAL. A handler that answers
 * synchronously gets a synchronous result (no promise per call).
 */
export function invoke(
  m: UnaryMethod,
  body: Uint8Array,
  ctx: CallContext,
  logger: Logger,
): CallResult | Promise<CallResult> {
  if (!m.fn)
    return {
      ok: false,
      code: status.UNIMPLEMENTED,
      details: `${m.name} is not implemented by the pixflow test server`,
    };
  let req: object;
  try {
    req = decodeMessage(m.requestType, body);
  } catch (err) {
    return { ok: false, code: status.INVALID_ARGUMENT, details: `Malformed ${m.name} request: ${errMessage(err)}` };
  }
  let resp: object;
  try {
    const r = m.fn(req, ctx);
    if (r instanceof Promise) {
      return r.then(
        (v: object) => encoded(m, v, logger),
        (err: unknown) => handlerFailed(m, err, logger),
      );
    }
    resp = r;
  } catch (err) {
    return handlerFailed(m, err, logger);
  }
  return encoded(m, resp, logger);
}

function encoded(m: UnaryMethod, resp: object, logger: Logger): CallResult {
  try {
    return { ok: true, frame: encodeFrame(m.responseType, resp) };
  } catch (err) {
    logger.error({ method: m.name, err: errMessage(err) }, 'response encoding failed');
    return { ok: false, code: status.INTERNAL, details: `${m.name}: response encoding failed` };
  }
}

function handlerFailed(m: UnaryMethod, err: unknown, logger: Logger): CallResult {
  if (err instanceof RpcError) return { ok: false, code: err.code, details: err.message };
  logger.error(
    { method: m.name, err: errMessage(err), stack: err instanceof Error ? err.stack : undefined },
    'handler failed',
  );
  return { ok: false, code: status.INTERNAL, details: `${m.name}: ${errMessage(err)}` };
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
