/**
 * Typed acquirer failures. `retryable` tells the caller (a Temporal activity's retry policy, or the
 * charge creation path) whether trying again can help: timeouts, connection errors, 5xx and 429 can;
 * a 4xx answer or a malformed response cannot.
 */
export class AcquirerError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    readonly code: string = retryable ? 'ACQUIRER_UNAVAILABLE' : 'ACQUIRER_REJECTED',
  ) {
    super(message);
    // The name is what Temporal matches against nonRetryableErrorTypes.
    this.name = retryable ? 'AcquirerUnavailableError' : 'AcquirerRejectedError';
  }
}

export function errorForStatus(status: number, detail: string): AcquirerError {
  const retryable = status >= 500 || status === 429 || status === 408;
  return new AcquirerError(`acquirer answered ${status}: ${detail}`.slice(0, 300), retryable, status);
}
