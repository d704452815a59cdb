import assert from 'node:assert/strict';
import Long from 'long';
import { RetryState } from '../src/proto';
import { backoffMs, decideRetry, normalizeRetryPolicy } from '../src/retry';

describe('embedded-temporal: retry policy arithmetic', () => {
  const policy = normalizeRetryPolicy({
    initialInterval: { seconds: Long.fromNumber(1) },
    backoffCoefficient: 2,
    maximumInterval: { seconds: Long.fromNumber(5) },
    maximumAttempts: 4,
    nonRetryableErrorTypes: ['Fatal'],
  });

  it('applies server defaults to an empty policy', () => {
    const p = normalizeRetryPolicy(null);
    assert.deepEqual(p, {
      initialIntervalMs: 1000,
      backoffCoefficient: 2,
      maximumIntervalMs: 100_000,
      maximumAttempts: 0,
      nonRetryableErrorTypes: [],
    });
  });

  it('backs off exponentially up to the maximum interval', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((a) => backoffMs(policy, a)),
      [1000, 2000, 4000, 5000, 5000],
    );
  });

  it('stops at maximum attempts, on non-retryable failures, and at the deadline', () => {
    const f = { message: 'x', applicationFailureInfo: { type: 'Boom' } };
    assert.deepEqual(decideRetry({ policy, attempt: 1, failure: f, nowMs: 0, expiresAtMs: 0 }), {
      retry: true,
      delayMs: 1000,
    });
    assert.deepEqual(decideRetry({ policy, attempt: 4, failure: f, nowMs: 0, expiresAtMs: 0 }), {
      retry: false,
      state: RetryState.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED,
    });
    const fatal = { message: 'x', applicationFailureInfo: { type: 'Fatal' } };
    assert.deepEqual(decideRetry({ policy, attempt: 1, failure: fatal, nowMs: 0, expiresAtMs: 0 }), {
      retry: false,
      state: RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE,
    });
    const flagged = { message: 'x', applicationFailureInfo: { type: 'Boom', nonRetryable: true } };
    assert.equal(decideRetry({ policy, attempt: 1, failure: flagged, nowMs: 0, expiresAtMs: 0 }).retry, false);
    assert.deepEqual(decideRetry({ policy, attempt: 2, failure: f, nowMs: 1000, expiresAtMs: 2500 }), {
      retry: false,
      state: RetryState.RETRY_STATE_TIMEOUT,
    });
  });

  it('honours next_retry_delay from the failure', () => {
    const f = {
      message: 'x',
      applicationFailureInfo: { type: 'Boom', nextRetryDelay: { seconds: Long.fromNumber(42) } },
    };
    assert.deepEqual(decideRetry({ policy, attempt: 1, failure: f, nowMs: 0, expiresAtMs: 0 }), {
      retry: true,
      delayMs: 42_000,
    });
  });
});
