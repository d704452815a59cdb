/**
 * `pixkey-<id>` with stubbed activities (docs/testing.md "Workflow branches with stubbed activities"): each outcome of the registration, the
 * retry policy (a transient failure is retried, AcquirerRejectedError is final at once), the
 * per-attempt timeout and the overall 6-hour limit, all on virtual time. The end-to-end suite is
 * test/workflow/pix-key-activation.test.ts.
 */
import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { pixKeyRegistrationWorkflow } from '../../workflows';
import type { PixKeyActivities } from '../../activities/pix-keys';

type PixKeyRegistrationOutcome = Awaited<ReturnType<PixKeyActivities['registerPixKey']>>;
import { testEnv } from '../support/temporal';
import {
  activityAttempts,
  activityTimeouts,
  failure,
  recordCalls,
  retryPolicies,
  withStubWorker,
} from '../support/stub-activities';

describe('pix key registration workflow (stubbed activities)', function () {
  this.timeout(60_000);

  const run = (activities: PixKeyActivities, pixKeyId = 'key-1') =>
    withStubWorker(activities, async ({ client, taskQueue, workflowId }) => {
      const handle = await client.workflow.start(pixKeyRegistrationWorkflow, {
        taskQueue,
        workflowId,
        args: [{ pixKeyId }],
      });
      const result = await handle.result().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      return { result, history: await handle.fetchHistory() };
    });

  for (const outcome of ['registered', 'refused', 'skipped'] as const) {
    it(`returns the activity's outcome as it is: ${outcome}`, async () => {
      const stub = recordCalls<PixKeyActivities>({
        registerPixKey: async (): Promise<PixKeyRegistrationOutcome> => outcome,
      });
      const { result } = await run(stub.activities, 'key-42');
      assert.deepEqual(result, { ok: true, value: outcome });
      assert.deepEqual(
        stub.calls.map((c) => [c.name, c.args, c.attempt]),
        [['registerPixKey', ['key-42'], 1]],
      );
    });
  }

  it('schedules the registration with the acquirer policy: 30 s per attempt, 6 hours overall, AcquirerRejectedError final', async () => {
    const stub = recordCalls<PixKeyActivities>({ registerPixKey: async () => 'registered' });
    const { history } = await run(stub.activities);
    assert.deepEqual(activityTimeouts(history).get('registerPixKey'), {
      startToClose: 30_000,
      scheduleToClose: 6 * 3_600_000,
    });
    const policy = retryPolicies(history).get('registerPixKey');
    assert.deepEqual(policy?.nonRetryableErrorTypes, ['AcquirerRejectedError']);
    assert.equal(policy?.backoffCoefficient, 2);
  });

  it('an acquirer outage only delays it: transient failures are retried until the acquirer answers', async () => {
    let failures = 3;
    const stub = recordCalls<PixKeyActivities>({
      registerPixKey: async () => {
        if (failures-- > 0) throw new Error('connect ECONNREFUSED (stub)');
        return 'registered';
      },
    });
    const { result } = await run(stub.activities);
    assert.deepEqual(result, { ok: true, value: 'registered' });
    assert.deepEqual(
      stub.calls.map((c) => c.attempt),
      [1, 2, 3, 4],
    );
  });

  it('AcquirerRejectedError (bad credentials, off-protocol answer) is final at once: one attempt, the workflow fails with it', async () => {
    const stub = recordCalls<PixKeyActivities>({
      registerPixKey: async () => {
        throw failure('AcquirerRejectedError', 'acquirer answered 401');
      },
    });
    const { result } = await run(stub.activities);
    assert.equal(result.ok, false);
    const err = !result.ok ? result.error : undefined;
    assert.ok(err instanceof WorkflowFailedError);
    assert.ok(err.cause instanceof ActivityFailure);
    assert.equal(err.cause.retryState, RetryState.NON_RETRYABLE_FAILURE);
    assert.ok(err.cause.cause instanceof ApplicationFailure);
    assert.equal(err.cause.cause.type, 'AcquirerRejectedError');
    assert.equal(stub.calls.length, 1);
  });

  it('an attempt slower than 30 s times out and the next attempt runs', async () => {
    const env = await testEnv();
    const stub = recordCalls<PixKeyActivities>({
      registerPixKey: async () => {
        if (stub.calls.length === 1) await env.sleep('31 seconds'); // virtual time: the server times it out meanwhile
        return 'registered';
      },
    });
    const { result, history } = await run(stub.activities);
    assert.deepEqual(result, { ok: true, value: 'registered' });
    assert.deepEqual(
      stub.calls.map((c) => c.attempt),
      [1, 2],
    );
    assert.deepEqual(activityAttempts(history), [2], 'the history records the attempt that completed');
  });

  it('gives up after 6 hours of failures: the workflow fails with the timeout (the reconciler starts it again later)', async () => {
    const stub = recordCalls<PixKeyActivities>({
      registerPixKey: async () => {
        throw new Error('acquirer unavailable (stub)');
      },
    });
    const { result } = await run(stub.activities);
    const err = !result.ok ? result.error : undefined;
    assert.ok(err instanceof WorkflowFailedError, String(err));
    assert.ok(err.cause instanceof ActivityFailure);
    // As Temporal does when the next retry would pass the schedule-to-close limit: the last failure,
    // with the retry state saying why retrying stopped.
    assert.equal(err.cause.retryState, RetryState.TIMEOUT);
    assert.ok(err.cause.cause instanceof ApplicationFailure);
    assert.equal(err.cause.cause.message, 'acquirer unavailable (stub)');
    // 1 s doubling to the 5-minute cap fills 6 hours with about 80 attempts, none of them real waits.
    assert.ok(stub.calls.length > 60 && stub.calls.length < 100, `attempts: ${stub.calls.length}`);
  });
});
