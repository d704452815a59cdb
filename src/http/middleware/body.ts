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

export function jsonBody(limitBytes: number): AppMiddleware {
  const parse: AppMiddleware = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
  });
  // The router matches paths case-insensitively, so /V1/ACQUIRER/pix reaches the callback route
  // too: it must find its body unread as well. koa-body reads bodies of these methods only; the
  // others (the GETs every integration polls) skip its content-type checks.
  return (ctx, next) =>
    !PARSED_METHODS.has(ctx.method) || ctx.path.toLowerCase().startsWith(RAW_BODY_PREFIX) ? next() : parse(ctx, next);
}
