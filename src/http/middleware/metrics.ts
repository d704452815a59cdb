/**
 * Request latency histogram (docs/operations.md "Metrics and logs"), labelled by the route pattern the router
 * matched (`/v1/charges/:id`), so ids in URLs never become label values; requests no route
 * matched share the label `unmatched`.
 */
import { recordHttpRequest } from '../../observability/metrics';
import type { AppMiddleware } from '../types';

export function httpMetrics(): AppMiddleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const route = typeof matched === 'string' ? matched : 'unmatched';
      recordHttpRequest(ctx.method, route, ctx.status, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}
