/**
 * Errors a service raises to say *why* a request cannot be served. Services speak in kinds, not
 * HTTP; the HTTP error middleware maps each kind to the status code fixed in docs/api.md "Errors"
 * ("Status codes and errors"). Any other thrown value is a bug and becomes a logged 500 whose
 * body never carries internals.
 *
 * The message is shown to the client as-is, so it must never hold secrets, SQL or internal names.
 */
export type ErrorKind =
  | 'invalid' // 400: a field, query parameter or body is wrong; a business rule refused the input
  | 'unauthenticated' // 401: missing, invalid, expired or deleted credential
  | 'forbidden' // 403: authenticated but not allowed
  | 'not_found' // 404: unknown id, or one that belongs to another merchant
  | 'conflict' // 409: e.g. an idempotency key still in flight
  | 'too_large' // 413
  | 'unprocessable' // 422: e.g. invalid payer document on charges
  | 'rate_limited' // 429
  | 'upstream'; // 502: the acquirer failed

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Extra response headers (e.g. Retry-After on 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const invalid = (message: string): AppError => new AppError('invalid', message);
export const unauthenticated = (message = 'Not authenticated'): AppError => new AppError('unauthenticated', message);
export const forbidden = (message: string): AppError => new AppError('forbidden', message);
export const notFound = (message: string): AppError => new AppError('not_found', message);
export const conflict = (message: string): AppError => new AppError('conflict', message);
export const unprocessable = (message: string): AppError => new AppError('unprocessable', message);
export const upstream = (message: string): AppError => new AppError('upstream', message);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
