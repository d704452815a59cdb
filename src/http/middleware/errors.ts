/**
 * The single place where failures become responses: `{message}` with the status codes from
 * docs/api.md "Errors". Known failures (AppError from services, HTTP errors raised by the body parser or
 * the router) keep their status and a fixed, safe message; anything else is a bug, logged in full
 * and answered with a bare 500 so internals never reach the client.
 */
import { isAppError, type ErrorKind } from '../../lib/errors';
import { isDatabaseUnavailable } from '../../db/unavailable';
import type { AppContext, AppMiddleware } from '../types';

const STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  upstream: 502,
};

/** Messages for client errors raised by libraries (koa-body/co-body, router) rather than by us. */
const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Not authenticated',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  411: 'Length required',
  413: 'Request body too large',
  415: 'Unsupported content encoding',
  501: 'Not implemented',
};

interface HttpLikeError {
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  expose?: unknown;
  code?: unknown;
}

/**
 * Maps a client error raised outside our services (co-body/raw-body in the body parser, the
 * router, `ctx.throw`) to a status and a message that is safe to show.
 */
function libraryClientError(err: unknown): { status: number; message: string } | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as HttpLikeError;
  // A body whose Content-Encoding (gzip, deflate, br) does not match its bytes: zlib fails while
  // the body parser inflates it, with a code but no HTTP status. The client sent it wrong.
  if (isZlibError(err)) return { status: 400, message: 'Malformed body: it does not match its Content-Encoding' };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  // co-body raises a SyntaxError with status 400 for unparsable JSON and, in strict mode, for JSON
  // that is not an object or array. Its message would quote the input, so it is replaced.
  if (err instanceof SyntaxError) return { status: 400, message: 'Malformed JSON body: expected a JSON object' };
  if (status === 413) return { status, message: DEFAULT_MESSAGES[413] as string };
  if (e.type === 'request.aborted') return { status: 400, message: 'Request aborted' };
  // http-errors marks messages written for clients with expose (e.g. ctx.throw(400, '…')).
  if (e.expose === true && err instanceof Error && err.message) return { status, message: err.message };
  return { status, message: DEFAULT_MESSAGES[status] ?? 'Bad request' };
}

function isZlibError(err: object): boolean {
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  return (
    typeof errno === 'number' && typeof code === 'string' && (/^Z_/.test(code) || /^ERR_(_ERROR|BROTLI)/.test(code))
  );
}

function send(ctx: AppContext, status: number, message: string): void {
  ctx.status = status;
  ctx.body = { message };
}

export function errorHandler(): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      // Nothing answered (unknown route → 404) or the router set a bare 405/501: give it a body.
      if (ctx.status >= 400 && ctx.body == null) {
        send(ctx, ctx.status, DEFAULT_MESSAGES[ctx.status] ?? 'Error');
      }
    } catch (err) {
      if (isAppError(err)) {
        for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
        send(ctx, STATUS_BY_KIND[err.kind], err.message);
        return;
      }
      const known = libraryClientError(err);
      if (known) {
        send(ctx, known.status, known.message);
        return;
      }
      if (isDatabaseUnavailable(err)) {
        // PostgreSQL is down or restarting: a retryable 503, not a bug (docs/production.md "Database outages").
        ctx.state.log.warn({ err }, 'database unavailable');
        ctx.set('Retry-After', '5');
        send(ctx, 503, 'Service temporarily unavailable; retry shortly');
        return;
      }
      ctx.state.log.error({ err }, 'unhandled error');
      send(ctx, 500, 'Internal server error');
    }
  };
}
