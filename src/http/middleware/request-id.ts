/**
 * Request ids: honour a caller's `x-request-id` when it is short and plain (so ids can be followed
 * across services), else mint one; echo it back and bind it to a per-request child logger.
 */
import crypto from 'node:crypto';
import type { Logger } from '../../lib/logger';
import type { AppMiddleware, AppState, Principal } from '../types';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request's `ctx.state`. The child logger is made on first use: most requests log nothing below
 * the configured level (docs/performance.md "Where a read's time goes"), and a pino child costs its bindings'
 * serialisation. A class, so that the lazy getter lives on its prototype: no closures and no
 * property definition per request.
 */
class RequestState implements AppState {
  principal?: Principal;
  #log: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly logger: Logger,
  ) {}

  get log(): Logger {
    return (this.#log ??= this.logger.child({ reqId: this.requestId }));
  }

  set log(log: Logger) {
    this.#log = log;
  }
}

export function requestId(logger: Logger): AppMiddleware {
  return (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = ACCEPTABLE.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state = new RequestState(id, logger);
    ctx.set('x-request-id', id);
    return next();
  };
}
