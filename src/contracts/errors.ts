/**
 * The catalogue of error codes (docs/api.md "Errors"): every error answer is
 * `{message, code, requestId}` plus `param` when one field is at fault. Each code has one HTTP
 * status; codes are stable, so integrators may branch on them. The list is the single source:
 * src/lib/errors.ts raises them, the error middleware answers with them, the OpenAPI document
 * enumerates them and a test checks the table in docs/api.md against it.
 */
import { z } from 'zod';

export interface ErrorCodeEntry {
  status: number;
  description: string;
}

export const ERROR_CODES = {
  validation_error: {
    status: 400,
    description:
      'A body field, query parameter, path parameter or header is missing or wrong; `param` names the first one',
  },
  invalid_request: {
    status: 400,
    description: 'Well-formed input that a rule refuses (e.g. canceling a charge that is not PENDING)',
  },
  insufficient_balance: {
    status: 400,
    description: 'The balance does not cover the withdrawal, refund or adjustment',
  },
  malformed_json: { status: 400, description: 'The body is not a JSON object (or array)' },
  malformed_body: {
    status: 400,
    description: 'The body does not match its Content-Encoding or length, or the upload was aborted',
  },
  unauthorized: {
    status: 401,
    description: 'Missing, malformed, invalid, expired, revoked or deleted credential or signature',
  },
  forbidden: {
    status: 403,
    description:
      'Authenticated but not allowed: a charge prerequisite, an API key where a JWT is required, not an operator, a disabled user or suspended merchant',
  },
  not_found: {
    status: 404,
    description: 'An unknown id, one that belongs to another merchant, or an unknown route',
  },
  method_not_allowed: { status: 405, description: 'The route exists but not with this method' },
  conflict: {
    status: 409,
    description: 'A duplicate unique value (e-mail, document, PIX key) or a state clash (a delivery in progress)',
  },
  idempotency_key_in_use: {
    status: 409,
    description:
      'The first request with this idempotency key is still in flight, or the key was used on another resource',
  },
  length_required: { status: 411, description: 'A body was sent without a usable length' },
  payload_too_large: { status: 413, description: 'The body is over BODY_LIMIT_BYTES (counted decompressed)' },
  unsupported_content_encoding: {
    status: 415,
    description: 'A Content-Encoding other than gzip, deflate or br',
  },
  unsupported_file_type: {
    status: 415,
    description: "A defense's file is not a PDF, PNG or JPEG by its content (`param` names it)",
  },
  idempotency_key_reused: {
    status: 422,
    description:
      'The idempotency key was already used with a different request body (withdrawals, refunds, adjustments; a charge replays)',
  },
  invalid_document: {
    status: 422,
    description: 'The payer document is neither a valid CPF nor a valid CNPJ',
  },
  infraction_closed: {
    status: 422,
    description: 'The infraction was already analysed (or closed): it takes no defense',
  },
  defense_deadline_passed: {
    status: 422,
    description: "The infraction's defenseDeadline has passed",
  },
  defense_already_submitted: {
    status: 422,
    description: 'The infraction already has its one defense',
  },
  rate_limited: { status: 429, description: 'Rate limited; retry after `Retry-After` seconds' },
  internal_error: { status: 500, description: 'A bug on our side; quote the requestId to support' },
  not_implemented: { status: 501, description: 'The method is not implemented by this server' },
  upstream_error: { status: 502, description: 'The acquirer failed (the charge is kept FAILED)' },
  webhook_secret_unavailable: {
    status: 503,
    description:
      "A webhook's signing secret is encrypted under a key this server does not hold (named in the message); an operator must restore it",
  },
  service_unavailable: {
    status: 503,
    description: 'The database (or another dependency) is unreachable; retry after `Retry-After` seconds',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const errorCode = z.enum(ERROR_CODE_NAMES);

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

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
