/**
 * Binds the request id to every log line written while the request is served, including by
 * services that log through the process logger (src/lib/log-context.ts).
 */
import { withLogContext } from '../../lib/log-context';
import type { AppMiddleware } from '../types';

export function requestLogContext(): AppMiddleware {
  return (ctx, next) => withLogContext({ reqId: ctx.state.requestId }, next);
}
