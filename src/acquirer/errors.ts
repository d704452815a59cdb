/**
 * Typed acquirer failures. `retryable` tells the caller (a Temporal activity's retry policy, or the
 * charge creation path) whether the same request may succeed later: timeouts, connection errors,
 * 5xx, 408 and 429 can; any other 4xx, a malformed answer, or a request we refused to send cannot.
 *
 * Every call the client makes is idempotent by construction (txid, devolução id, transfer
 * idempotency key), so retrying a "retryable" failure never moves money twice.
 */

export type AcquirerErrorCode =
  /** No answer within ACQUIRER_TIMEOUT_MS. The request may or may not have been applied. */
  | 'TIMEOUT'
  /** Connection refused / reset / DNS: the request most likely never arrived. */
  | 'NETWORK'
  /** 5xx or 408. */
  | 'UNAVAILABLE'
  /** 429. */
  | 'RATE_LIMITED'
  /** 401/403 even with a fresh token: credentials or scopes are wrong. */
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  /** Any other 4xx: the acquirer refused this request (schema, state, amount, replayed key...). */
  | 'REJECTED'
  /** The acquirer answered 2xx with something that is not the protocol. */
  | 'INVALID_RESPONSE'
  /** Our own input failed validation before anything was sent. */
  | 'INVALID_REQUEST';

const RETRYABLE: Record<AcquirerErrorCode, boolean> = {
  TIMEOUT: true,
  NETWORK: true,
  UNAVAILABLE: true,
  RATE_LIMITED: true,
  UNAUTHORIZED: false,
  NOT_FOUND: false,
  REJECTED: false,
  INVALID_RESPONSE: false,
  INVALID_REQUEST: false,
};

/** A BCB problem-details body (RFC 7807 with `violacoes`), when the acquirer sent one. */
export interface AcquirerProblem {
  type?: string;
  title?: string;
  detail?: string;
  violacoes?: Array<{ razao?: string; propriedade?: string; valor?: string }>;
}

export class AcquirerError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly code: AcquirerErrorCode,
    message: string,
    readonly status?: number,
    readonly problem?: AcquirerProblem,
  ) {
    super(message);
    this.retryable = RETRYABLE[code];
    // The name is what Temporal matches against nonRetryableErrorTypes (workflows/charge.ts).
    this.name = this.retryable ? 'AcquirerUnavailableError' : 'AcquirerRejectedError';
  }
}

export function codeForStatus(status: number): AcquirerErrorCode {
  if (status >= 500 || status === 408) return 'UNAVAILABLE';
  if (status === 429) return 'RATE_LIMITED';
  if (status === 401 || status === 403) return 'UNAUTHORIZED';
  if (status === 404) return 'NOT_FOUND';
  return 'REJECTED';
}

/** Builds the error for a non-2xx answer, keeping the problem details when the body is one. */
export function errorForResponse(status: number, what: string, bodyText: string): AcquirerError {
  const problem = parseProblem(bodyText);
  const why = problem?.detail ?? problem?.title ?? bodyText;
  return new AcquirerError(
    codeForStatus(status),
    `acquirer answered ${status} to ${what}: ${why}`.slice(0, 500),
    status,
    problem,
  );
}

function parseProblem(text: string): AcquirerProblem | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const o = v as Record<string, unknown>;
    const str = (k: string): string | undefined => (typeof o[k] === 'string' ? o[k] : undefined);
    const violacoes = Array.isArray(o.violacoes) ? (o.violacoes as AcquirerProblem['violacoes']) : undefined;
    return { type: str('type'), title: str('title'), detail: str('detail'), violacoes };
  } catch {
    return undefined;
  }
}
