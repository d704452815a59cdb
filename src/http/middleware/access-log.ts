/**
 * One JSON line per request once it is answered. Only the path is logged (no query string, no
 * headers, no body), so credentials sent by a client cannot end up in the log.
 */
import type { Logger } from '../../lib/logger';
import type { AppMiddleware } from '../types';

/** `logger` is the process logger: below level info the line is not even built. */
export function accessLog(logger: Logger): AppMiddleware {
  return async (ctx, next) => {
    if (!logger.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const principal = ctx.state.principal;
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          durationMs: Math.round(durationMs * 10) / 10,
          merchantId: principal?.merchantId ?? undefined,
          credential: principal?.kind,
        },
        'request',
      );
    }
  };
}
