/**
 * Fields every log line written while serving one request or running one activity carries
 * (docs/operations.md "Metrics and logs"): the request id, or the workflow id and activity type. Code deep in
 * the services logs through the process logger it was built with; the logger's mixin adds the
 * fields of the unit of work the current async call chain belongs to, so no logger is threaded
 * through every call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface LogContext {
  reqId?: string;
  workflowId?: string;
  runId?: string;
  activityType?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `fields` added to every log line written inside it (nested contexts merge). */
export function withLogContext<T>(fields: LogContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...fields }, fn);
}

export function currentLogContext(): LogContext {
  return storage.getStore() ?? {};
}
