import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  sleep,
  TimeoutFailure,
} from '@temporalio/workflow';

export interface ConformanceActivities {
  alwaysFails(kind: string): Promise<string>;
  failsNonRetryable(): Promise<string>;
  heartbeatsOnceThenStalls(): Promise<string>;
  heartbeatsUntilCancelled(): Promise<string>;
  double(n: number): Promise<number>;
}

export interface FailureReport {
  message: string;
  retryState: string;
  causeType: string;
  causeMessage: string;
  timeoutType?: string;
}

function report(err: unknown): FailureReport {
  if (!(err instanceof ActivityFailure)) throw err;
  const cause = err.cause;
  return {
    message: err.message,
    retryState: String(err.retryState),
    causeType: cause?.constructor.name ?? '',
    causeMessage: cause?.message ?? '',
    timeoutType: cause instanceof TimeoutFailure ? String(cause.timeoutType) : undefined,
  };
}

/** Retried with backoff (1 s, 2 s, 4 s) until maximumAttempts, then the failure reaches the workflow. */
export async function retriesThenFails(maximumAttempts: number): Promise<FailureReport> {
  const { alwaysFails } = proxyActivities<ConformanceActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts },
  });
  try {
    await alwaysFails('Flaky');
    throw ApplicationFailure.nonRetryable('activity unexpectedly succeeded');
  } catch (err) {
    return report(err);
  }
}

/** Non-retryable: by ApplicationFailure flag, or by the policy's nonRetryableErrorTypes. */
export async function nonRetryable(which: 'flag' | 'type'): Promise<FailureReport> {
  const acts = proxyActivities<ConformanceActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 5, nonRetryableErrorTypes: ['Fatal'] },
  });
  try {
    if (which === 'flag') await acts.failsNonRetryable();
    else await acts.alwaysFails('Fatal');
    throw ApplicationFailure.nonRetryable('activity unexpectedly succeeded');
  } catch (err) {
    return report(err);
  }
}

export async function heartbeatTimeout(): Promise<FailureReport> {
  const { heartbeatsOnceThenStalls } = proxyActivities<ConformanceActivities>({
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: '1 second',
    retry: { maximumAttempts: 1 },
  });
  try {
    await heartbeatsOnceThenStalls();
    throw ApplicationFailure.nonRetryable('activity unexpectedly succeeded');
  } catch (err) {
    return report(err);
  }
}

/** Cancels a running, heartbeating activity and waits for the activity to acknowledge it. */
export async function cancelRunningActivity(): Promise<string> {
  const { heartbeatsUntilCancelled } = proxyActivities<ConformanceActivities>({
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: '5 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const scope = new CancellationScope();
  const p = scope.run(() => heartbeatsUntilCancelled());
  await sleep(2000); // in virtual time; the running activity holds the clock, so this is ~2 s real
  scope.cancel();
  try {
    await p;
    return 'not cancelled';
  } catch (err) {
    return isCancellation(err) ? 'cancelled' : `other: ${String(err)}`;
  }
}

/** Three activities in sequence: n → 2n → 4n → 8n. */
export async function threeActivities(n: number): Promise<number> {
  const { double } = proxyActivities<ConformanceActivities>({ startToCloseTimeout: '30 seconds' });
  return await double(await double(await double(n)));
}

export async function oneActivity(n: number): Promise<number> {
  const { double } = proxyActivities<ConformanceActivities>({ startToCloseTimeout: '30 seconds' });
  return await double(n);
}
