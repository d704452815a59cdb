/**
 * The single place where failures become responses: `{message, code, requestId, param?}` with the
 * codes and statuses of src/lib/errors.ts (docs/api.md "Errors"). Known failures (AppError
 * from services, HTTP errors raised by the body parser or the router) keep their status and a fixed,
 * safe message; anything else is a bug, logged in full and answered with a bare 500 so internals
 * never reach the client. The requestId is the request's `x-request-id`, the one its log lines carry.
 */
import type { IncomingMessage } from 'node:http';
import { codeForStatus, statusOf, type ErrorBody, type ErrorCode } from '../../contracts/errors';
import { isAppError } from '../../lib/errors';
import { isDatabaseUnavailable } from '../../db/unavailable';
import type { AppContext, AppMiddleware } from '../types';

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
function libraryClientError(
  err: unknown,
  req: IncomingMessage,
): { status: number; message: string; code?: ErrorCode } | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as HttpLikeError;
  // The client closed the connection mid-body (raw-body's request.aborted) or before the body
  // parser ran (its stream.not.readable, on a request already destroyed): its doing, not ours.
  if (e.type === 'request.aborted' || (e.type === 'stream.not.readable' && req.destroyed))
    return { status: 400, message: 'Request aborted', code: 'malformed_body' };
  // A body whose Content-Encoding (gzip, deflate, br) does not match its bytes: zlib fails while
  // the body parser inflates it, with a code but no HTTP status. The client sent it wrong.
  if (isZlibError(err))
    return { status: 400, message: 'Malformed body: it does not match its Content-Encoding', code: 'malformed_body' };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  // co-body raises a SyntaxError with status 400 for unparsable JSON and, in strict mode, for JSON
  // that is not an object or array. Its message would quote the input, so it is replaced.
  if (err instanceof SyntaxError)
    return { status: 400, message: 'Malformed JSON body: expected a JSON object', code: 'malformed_json' };
  if (status === 413) return { status, message: DEFAULT_MESSAGES[413] as string };
  // raw-body: a body shorter or longer than its Content-Length.
  if (e.type === 'request.size.invalid')
    return { status: 400, message: 'Request body size did not match Content-Length', code: 'malformed_body' };
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

/** Answers an error; exported for the few routes that answer one without throwing (e.g. /readyz). */
export function errorAnswer(ctx: AppContext, code: ErrorCode, message: string, param?: string): ErrorBody {
  return { message, code, requestId: ctx.state.requestId, ...(param !== undefined ? { param } : {}) };
}

function send(ctx: AppContext, status: number, message: string, code: ErrorCode, param?: string): void {
  ctx.status = status;
  ctx.body = errorAnswer(ctx, code, message, param);
}

export function errorHandler(): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      // Nothing answered (unknown route → 404) or the router set a bare 405/501: give it a body.
      if (ctx.status >= 400 && ctx.body == null) {
        send(ctx, ctx.status, DEFAULT_MESSAGES[ctx.status] ?? 'Error', codeForStatus(ctx.status));
      }
    } catch (err) {
      if (isAppError(err)) {
        for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
        send(ctx, statusOf(err.code), err.message, err.code, err.param);
        return;
      }
      const known = libraryClientError(err, ctx.req);
      if (known) {
        send(ctx, known.status, known.message, known.code ?? codeForStatus(known.status));
        return;
      }
      if (isDatabaseUnavailable(err)) {
        // PostgreSQL is down or restarting: a retryable 503, not a bug (docs/production.md "Database outages").
        ctx.state.log.warn({ err }, 'database unavailable');
        ctx.set('Retry-After', '5');
        send(ctx, 503, 'Service temporarily unavailable; retry shortly', 'service_unavailable');
        return;
      }
      ctx.state.log.error({ err }, 'unhandled error');
      send(ctx, 500, 'Internal server error', 'internal_error');
    }
  };
}
