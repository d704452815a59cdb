/**
 * The error answers' contract (docs/api.md "Errors"): every error answer is
 * `{message, code, requestId}` plus `param` when one field is at fault. The catalogue of codes is
 * `ERROR_CODES` in src/lib/errors.ts, beside the errors that raise them (the lowest layer, so
 * src/lib imports nothing of src/contracts); this module gives its schemas to the error middleware,
 * the OpenAPI document and a test that checks the table in docs/api.md.
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../lib/errors';

export { ERROR_CODES, statusOf, type ErrorCode, type ErrorCodeEntry } from '../lib/errors';

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const errorCode = z.enum(ERROR_CODE_NAMES);

/** The code answered for a status raised outside our own code (router, body parser, `ctx.throw`). */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 409:
      return 'conflict';
    case 411:
      return 'length_required';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_content_encoding';
    case 429:
      return 'rate_limited';
    case 501:
      return 'not_implemented';
    case 502:
      return 'upstream_error';
    case 503:
      return 'service_unavailable';
    default:
      return status >= 500 ? 'internal_error' : 'invalid_request';
  }
}

/** Every error answer's body (docs/api.md "Errors"): `message` always; the rest is our extension. */
export const errorBody = z
  .object({
    message: z.string(),
    code: errorCode,
    requestId: z.string(),
    param: z.string().optional(),
  })
  .describe('Every error has this shape (docs/api.md "Errors")');
export type ErrorBody = z.infer<typeof errorBody>;
