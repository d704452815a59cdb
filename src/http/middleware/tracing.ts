/**
 * The server span of each request (docs/operations.md "Tracing"), continuing the caller's W3C
 * `traceparent` (the acquirer's callback, a merchant's client). A middleware of our own rather
 * than @opentelemetry/instrumentation-http and -koa: those patch `http` and `koa` through require
 * hooks that must run before the modules load, which the tsx loader of `npm start` and the tests
 * does not guarantee; this needs nothing but the OpenTelemetry API. Named after the router's
 * pattern (never the raw URL, which holds ids) once routing is done. A no-op when tracing is off.
 */
import { SpanKind, SpanStatusCode, inSpan, tracingActive } from '../../observability/tracing';
import type { AppMiddleware } from '../types';

export function traceRequests(): AppMiddleware {
  return (ctx, next) => {
    if (!tracingActive()) return next();
    return inSpan(
      ctx.method,
      {
        kind: SpanKind.SERVER,
        parentHeaders: ctx.headers,
        attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path },
      },
      async (span) => {
        try {
          await next();
        } finally {
          const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
          if (typeof route === 'string') {
            span.updateName(`${ctx.method} ${route}`);
            span.setAttribute('http.route', route);
          }
          span.setAttribute('http.response.status_code', ctx.status);
          if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          if (typeof ctx.state.requestId === 'string') span.setAttribute('pixflow.request_id', ctx.state.requestId);
        }
      },
    );
  };
}
