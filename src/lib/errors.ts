/**
 * Errors a service raises to say *why* a request cannot be served. Services speak in codes from
 * the catalogue below (docs/api.md "Errors"), never in HTTP statuses: each code has one status
 * there, and the HTTP error middleware answers `{message, code, requestId, param?}`.
 * Any other thrown value is a bug and becomes a logged 500 whose body never carries internals.
 *
 * The message is shown to the client as-is, so it must never hold secrets, SQL or internal names.
 */

/**
 * The catalogue of error codes: codes are stable, so integrators may branch on them. The list is
 * the single source: the errors below raise them, the error middleware answers with them, the
 * OpenAPI document enumerates them (schemas in src/contracts/errors.ts) and a test checks the
 * table in docs/api.md against it.
 */
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

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

export interface AppErrorOptions {
  /** Extra response headers (e.g. Retry-After on 429). */
  headers?: Record<string, string>;
  /** The one field at fault, as a path (`customer.document`, `items[0].amount`, `x-idempotency-key`). */
  param?: string;
}

export class AppError extends Error {
  readonly headers: Record<string, string>;
  readonly param: string | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.headers = options.headers ?? {};
    this.param = options.param;
  }

  /** The HTTP status of the code (`ERROR_CODES`). */
  get status(): number {
    return statusOf(this.code);
  }
}

/** 400: a rule refuses the input (`invalid_request` unless a more precise 400 code is given). */
export const invalid = (
  message: string,
  code: Extract<
    ErrorCode,
    'invalid_request' | 'insufficient_balance' | 'malformed_json' | 'malformed_body'
  > = 'invalid_request',
  param?: string,
): AppError => new AppError(code, message, { param });
/** 400 `validation_error`: one field, query parameter, path parameter or header is wrong. */
export const validationError = (message: string, param?: string): AppError =>
  new AppError('validation_error', message, { param });
export const unauthenticated = (message = 'Not authenticated'): AppError => new AppError('unauthorized', message);
export const forbidden = (message: string): AppError => new AppError('forbidden', message);
export const notFound = (message: string): AppError => new AppError('not_found', message);
export const conflict = (
  message: string,
  code: Extract<ErrorCode, 'conflict' | 'idempotency_key_in_use'> = 'conflict',
): AppError => new AppError(code, message);
export const unprocessable = (
  message: string,
  code: Extract<
    ErrorCode,
    | 'idempotency_key_reused'
    | 'invalid_document'
    | 'infraction_closed'
    | 'defense_deadline_passed'
    | 'defense_already_submitted'
  >,
  param?: string,
): AppError => new AppError(code, message, { param });
/** 413: the body (or, for a multipart upload, its files together) is over its limit. */
export const tooLarge = (message: string, param?: string): AppError =>
  new AppError('payload_too_large', message, { param });
/** 415: an uploaded file is not of a type the route takes. */
export const unsupportedFile = (message: string, param?: string): AppError =>
  new AppError('unsupported_file_type', message, { param });
export const upstream = (message: string): AppError => new AppError('upstream_error', message);
/** 503 that no retry cures: the server lacks something an operator must restore. */
export const unavailable = (message: string, code: Extract<ErrorCode, 'webhook_secret_unavailable'>): AppError =>
  new AppError(code, message);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
