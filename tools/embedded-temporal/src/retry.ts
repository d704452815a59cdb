/**
 * Retry-policy arithmetic for activities (and workflow retries), as pure functions.
 * Defaults follow the Temporal server: initial 1 s, coefficient 2, maximum 100 × initial,
 * unlimited attempts.
 */
import { durationMs, msDuration, RetryState, type Failure, type RetryPolicyMsg } from './proto';

export interface RetryPolicy {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  /** 0 = unlimited */
  maximumAttempts: number;
  nonRetryableErrorTypes: string[];
}

export function normalizeRetryPolicy(p: RetryPolicyMsg | null | undefined): RetryPolicy {
  const initialIntervalMs = durationMs(p?.initialInterval) || 1000;
  const coefficient = p?.backoffCoefficient && p.backoffCoefficient >= 1 ? p.backoffCoefficient : 2;
  return {
    initialIntervalMs,
    backoffCoefficient: coefficient,
    maximumIntervalMs: durationMs(p?.maximumInterval) || 100 * initialIntervalMs,
    maximumAttempts: Math.max(0, p?.maximumAttempts ?? 0),
    nonRetryableErrorTypes: [...(p?.nonRetryableErrorTypes ?? [])],
  };
}

export function retryPolicyMsg(p: RetryPolicy): RetryPolicyMsg {
  return {
    initialInterval: msDuration(p.initialIntervalMs),
    backoffCoefficient: p.backoffCoefficient,
    maximumInterval: msDuration(p.maximumIntervalMs),
    maximumAttempts: p.maximumAttempts,
    nonRetryableErrorTypes: p.nonRetryableErrorTypes,
  };
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; state: temporalRetryState };

type temporalRetryState = (typeof RetryState)[keyof typeof RetryState];

/** Backoff before attempt `attempt + 1`, given the failed attempt number (1-based). */
export function backoffMs(p: RetryPolicy, attempt: number): number {
  const raw = p.initialIntervalMs * Math.pow(p.backoffCoefficient, Math.max(0, attempt - 1));
  return Math.min(raw, p.maximumIntervalMs);
}

/** The failure's type for non-retryable matching: ApplicationFailure type, else "". */
function failureType(f: Failure | null | undefined): string {
  return f?.applicationFailureInfo?.type ?? '';
}

/**
 * Should a failed attempt be retried?
 * @param failure the attempt's failure (null for timeouts, which are never "non-retryable")
 * @param expiresAtMs schedule-to-close deadline (0 = none)
 */
export function decideRetry(opts: {
  policy: RetryPolicy;
  attempt: number;
  failure: Failure | null;
  nowMs: number;
  expiresAtMs: number;
}): RetryDecision {
  const { policy, attempt, failure, nowMs, expiresAtMs } = opts;
  if (failure) {
    if (failure.applicationFailureInfo?.nonRetryable) {
      return { retry: false, state: RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE };
    }
    const type = failureType(failure);
    if (type && policy.nonRetryableErrorTypes.includes(type)) {
      return { retry: false, state: RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE };
    }
  }
  if (policy.maximumAttempts > 0 && attempt >= policy.maximumAttempts) {
    return { retry: false, state: RetryState.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED };
  }
  const explicit = durationMs(failure?.applicationFailureInfo?.nextRetryDelay);
  const delayMs = explicit > 0 ? explicit : backoffMs(policy, attempt);
  if (expiresAtMs > 0 && nowMs + delayMs >= expiresAtMs) {
    return { retry: false, state: RetryState.RETRY_STATE_TIMEOUT };
  }
  return { retry: true, delayMs };
}
