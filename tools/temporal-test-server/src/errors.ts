/** Errors that become gRPC statuses. Anything else thrown by a handler is reported as INTERNAL. */
import { status } from '@grpc/grpc-js';

export class RpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
  }
}

export const invalidArgument = (msg: string): RpcError => new RpcError(status.INVALID_ARGUMENT, msg);
export const notFound = (msg: string): RpcError => new RpcError(status.NOT_FOUND, msg);
export const alreadyExists = (msg: string): RpcError => new RpcError(status.ALREADY_EXISTS, msg);
export const failedPrecondition = (msg: string): RpcError => new RpcError(status.FAILED_PRECONDITION, msg);
export const unimplemented = (msg: string): RpcError => new RpcError(status.UNIMPLEMENTED, msg);
