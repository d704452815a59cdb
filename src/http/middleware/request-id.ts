/**
 * Request ids: honour a caller's `x-request-id` when it is short and plain (so ids can be followed
 * across services), else mint one; echo it back and bind it to a per-request child logger.
 */
import crypto from 'node:crypto';
import type { Logger } from '../../lib/logger';
import type { AppMiddleware } from '../types';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(logger: Logger): AppMiddleware {
  return (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = ACCEPTABLE.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = id;
    // The child logger is made on first use: most requests log nothing below the configured level
    // (README "Where a read's time goes"), and a pino child costs its bindings' serialisation.
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      get: () => (log ??= logger.child({ reqId: id })),
      set: (l: Logger) => void (log = l),
      enumerable: true,
      configurable: true,
    });
    ctx.set('x-request-id', id);
    return next();
  };
}
