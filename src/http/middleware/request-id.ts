/**
 * Request ids: honour a caller's `x-request-id` when it is short and plain (so ids can be followed
 * across services), else mint one; echo it back and bind it to a per-request child logger.
 */
import crypto from 'node:crypto';
import type { Logger } from '../../lib/logger';
import type { AppMiddleware } from '../types';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(logger: Logger): AppMiddleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = ACCEPTABLE.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = logger.child({ reqId: id });
    ctx.set('x-request-id', id);
    await next();
  };
}
