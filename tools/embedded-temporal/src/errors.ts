/** Errors that become gRPC statuses. Anything else thrown by a handler is reported as INTERNAL. */

/**
 * gRPC status codes (numbers fixed by the gRPC protocol). Defined here rather than imported from
 * @grpc/grpc-js: loading grpc-js (its channel and subchannel modules) was about a sixth of the
 * server's start-up CPU, for these constants alone (docs/performance.md "Server CPU per workflow: encode once").
 */
export const status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type Status = (typeof status)[keyof typeof status];

export class RpcError extends Error {
  constructor(
    readonly code: Status,
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
