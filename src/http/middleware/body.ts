/**
 * JSON bodies only (the API speaks JSON), capped at BODY_LIMIT_BYTES: a larger body is 413 and a
 * malformed one 400 (both mapped by the error middleware). Other content types are left unparsed,
 * so the route's schema rejects them as a missing JSON object. The raw text is kept on
 * `ctx.request.rawBody` for routes that verify an HMAC over the exact bytes (acquirer callbacks).
 */
import { koaBody } from 'koa-body';
import type { AppMiddleware } from '../types';

export function jsonBody(limitBytes: number): AppMiddleware {
  return koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
    includeUnparsed: true,
  });
}
