/**
 * JSON bodies only (the API speaks JSON), capped at BODY_LIMIT_BYTES: a larger body is 413 and a
 * malformed one 400 (both mapped by the error middleware). Other content types are left unparsed,
 * so the route's schema rejects them as a missing JSON object.
 *
 * Acquirer callbacks (`/v1/acquirer/*`) are left unread here: their route reads the exact bytes
 * and verifies the HMAC over them before anything parses them (src/http/routes/acquirer-callbacks.ts).
 */
import { koaBody } from 'koa-body';
import type { AppMiddleware } from '../types';

export const RAW_BODY_PREFIX = '/v1/acquirer/';

/** koa-body's default `parsedMethods`. */
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * A charge batch (docs/api.md "Charge batches") carries up to 1,000 charge bodies: its route alone
 * takes up to this much, or BODY_LIMIT_BYTES when that is larger.
 */
export const BATCH_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
const BATCH_PATH = '/v1/charges/batch';

export function jsonBody(limitBytes: number): AppMiddleware {
  const parserOf = (jsonLimit: number): AppMiddleware =>
    koaBody({ json: true, jsonStrict: true, jsonLimit, urlencoded: false, text: false, multipart: false });
  const small = parserOf(limitBytes);
  const batch = parserOf(Math.max(limitBytes, BATCH_BODY_LIMIT_BYTES));
  const parse: AppMiddleware = (ctx, next) => (ctx.path.toLowerCase() === BATCH_PATH ? batch : small)(ctx, next);
  // The router matches paths case-insensitively, so /V1/ACQUIRER/pix reaches the callback route
  // too: it must find its body unread as well. koa-body reads bodies of these methods only; the
  // others (the GETs every integration polls) skip its content-type checks.
  return (ctx, next) =>
    !PARSED_METHODS.has(ctx.method) || ctx.path.toLowerCase().startsWith(RAW_BODY_PREFIX) ? next() : parse(ctx, next);
}
