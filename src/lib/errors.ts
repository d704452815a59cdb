/**
 * Errors a service raises to say *why* a request cannot be served. Services speak in codes from
 * the catalogue in src/contracts/errors.ts (docs/api.md "Errors"), never in HTTP statuses: each code
 * has its status there, and the HTTP error middleware answers `{message, code, requestId, param?}`.
 * Any other thrown value is a bug and becomes a logged 500 whose body never carries internals.
 *
 * The message is shown to the client as-is, so it must never hold secrets, SQL or internal names.
 */
import { statusOf, type ErrorCode } from '../contracts/errors';

export type { ErrorCode } from '../contracts/errors';

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

  /** The HTTP status of the code (src/contracts/errors.ts). */
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
