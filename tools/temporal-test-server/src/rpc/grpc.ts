/**
 * Protobuf services from the SDK's compiled root, as tables of unary methods for the HTTP/2
 * transport (h2server.ts): a malformed request becomes INVALID_ARGUMENT, every method we do not
 * implement answers UNIMPLEMENTED naming the method, and no handler error escapes to the process.
 */
import { status } from '@grpc/grpc-js';
import protoRoot = require('@temporalio/proto/protos/root');
import { RpcError } from '../errors';
import type { Logger } from '../logger';
import type { MessageType } from '../proto';

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
    out.push({ name, path: `/${service.fullName.replace(/^\./, '')}/${name}`, requestType, responseType, fn: impl[name] });
  }
  return out;
}

/**
 * Runs one decoded call: the handler's answer encoded, or an error status. No handler error
 * escapes; unexpected ones are logged and become INTERNAL.
 */
export async function invoke(
  m: UnaryMethod,
  body: Uint8Array,
  ctx: CallContext,
  logger: Logger,
): Promise<{ ok: true; bytes: Uint8Array } | { ok: false; code: number; details: string }> {
  if (!m.fn) return { ok: false, code: status.UNIMPLEMENTED, details: `${m.name} is not implemented by the pixflow test server` };
  let req: object;
  try {
    req = m.requestType.decode(body);
  } catch (err) {
    return { ok: false, code: status.INVALID_ARGUMENT, details: `Malformed ${m.name} request: ${errMessage(err)}` };
  }
  let resp: object;
  try {
    resp = await m.fn(req, ctx);
  } catch (err) {
    if (err instanceof RpcError) return { ok: false, code: err.code, details: err.message };
    logger.error({ method: m.name, err: errMessage(err), stack: err instanceof Error ? err.stack : undefined }, 'handler failed');
    return { ok: false, code: status.INTERNAL, details: `${m.name}: ${errMessage(err)}` };
  }
  try {
    return { ok: true, bytes: m.responseType.encode(resp).finish() };
  } catch (err) {
    logger.error({ method: m.name, err: errMessage(err) }, 'response encoding failed');
    return { ok: false, code: status.INTERNAL, details: `${m.name}: response encoding failed` };
  }
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
