/**
 * Turns a protobuf service from the SDK's compiled root into a grpc-js service definition whose
 * handlers decode/encode with that root.
 *
 * Messages cross grpc-js as raw bytes; decoding happens inside our wrapper so that a malformed
 * request becomes INVALID_ARGUMENT (grpc-js would answer INTERNAL), and every method we do not
 * implement answers UNIMPLEMENTED naming the method. No handler error can escape to the process.
 */
import * as grpc from '@grpc/grpc-js';
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

const identityOnly = new grpc.Metadata();
identityOnly.set('grpc-accept-encoding', 'identity');

export function buildService(
  serviceName: string,
  impl: Record<string, Handler>,
  logger: Logger,
): { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation } {
  const service = root.lookupService(serviceName).resolveAll();
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(service.methods)) {
    const reqType = method.resolvedRequestType;
    const respType = method.resolvedResponseType;
    if (method.requestStream || method.responseStream || !reqType || !respType) continue;
    definition[name] = {
      path: `/${service.fullName.replace(/^\./, '')}/${name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
      originalName: name,
    };
    const fn = impl[name];
    const unary: grpc.handleUnaryCall<Buffer, Buffer> = (call, callback) => {
      // Advertise identity only (grpc-js advertises gzip by default). Clients that honour it skip
      // compression; the Rust-core client compresses regardless, see inflate.ts.
      call.sendMetadata(identityOnly);
      if (!fn) {
        callback({ code: grpc.status.UNIMPLEMENTED, details: `${name} is not implemented by the pixflow test server` });
        return;
      }
      let req: object;
      try {
        req = reqType.decode(call.request);
      } catch (err) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: `Malformed ${name} request: ${errMessage(err)}` });
        return;
      }
      const cancelCbs: (() => void)[] = [];
      call.on('cancelled', () => {
        for (const cb of cancelCbs.splice(0)) {
          try {
            cb();
          } catch (err) {
            logger.error({ method: name, err: errMessage(err) }, 'cancel callback failed');
          }
        }
      });
      const ctx: CallContext = {
        method: name,
        remainingMs: () => {
          const d = call.getDeadline();
          const t = d instanceof Date ? d.getTime() : d;
          return Number.isFinite(t) ? t - Date.now() : Infinity;
        },
        onCancel: (cb) => {
          if (call.cancelled) cb();
          else cancelCbs.push(cb);
        },
      };
      Promise.resolve()
        .then(() => fn(req, ctx))
        .then(
          (resp) => {
            let bytes: Buffer;
            try {
              bytes = Buffer.from(respType.encode(resp).finish());
            } catch (err) {
              logger.error({ method: name, err: errMessage(err) }, 'response encoding failed');
              callback({ code: grpc.status.INTERNAL, details: `${name}: response encoding failed` });
              return;
            }
            callback(null, bytes);
          },
          (err: unknown) => {
            if (err instanceof RpcError) {
              callback({ code: err.code, details: err.message });
              return;
            }
            logger.error({ method: name, err: errMessage(err), stack: err instanceof Error ? err.stack : undefined }, 'handler failed');
            callback({ code: grpc.status.INTERNAL, details: `${name}: ${errMessage(err)}` });
          },
        );
    };
    implementation[name] = unary;
  }
  return { definition, implementation };
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
