/**
 * `webhook-delivery-<id>` with stubbed activities (docs/testing.md "Workflow branches with stubbed activities"): the attempt loop's branches —
 * delivered, given up, canceled, durable timers of the delays the activity asks for, a redelivery's
 * numbering, a failure of ours retried on the same attempt number, NotFoundError final — on virtual
 * time. The end-to-end suite is test/webhooks/delivery.test.ts.
 */
import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { webhookDeliveryWorkflow } from '../../workflows';
import type { WebhookActivities } from '../../activities/webhooks';
import type { WebhookAttemptOutcome, WebhookDeliveryInput } from '../../workflows/webhook-delivery-types';
import {
  activityTimeouts,
  failure,
  recordCalls,
  replay,
  retryPolicies,
  scheduledActivities,
  timersStarted,
  withStubWorker,
} from '../support/stub-activities';

describe('webhook delivery workflow (stubbed activities)', function () {
  this.timeout(60_000);

  /** Stub answering attempt after attempt from a script (the last answer repeats). */
  const scripted = (answers: Array<WebhookAttemptOutcome | Error>) => {
    let i = 0;
    return recordCalls<WebhookActivities>({
      attemptWebhookDelivery: async () => {
        const a = answers[Math.min(i++, answers.length - 1)];
        if (a instanceof Error) throw a;
        return a;
      },
    });
  };

  const run = (activities: WebhookActivities, input: WebhookDeliveryInput) =>
    withStubWorker(activities, async ({ client, taskQueue, workflowId }) => {
      const handle = await client.workflow.start(webhookDeliveryWorkflow, {
        taskQueue,
        workflowId,
        args: [input],
      });
      const result = await handle.result().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      return { result, history: await handle.fetchHistory(), workflowId: handle.workflowId };
    });

  it('delivered at the first attempt: SUCCEEDED, one activity, no timer', async () => {
    const stub = scripted([{ status: 'SUCCEEDED' }]);
    const { result, history } = await run(stub.activities, { deliveryId: 'd-1', firstAttempt: 1 });
    assert.deepEqual(result, { ok: true, value: { status: 'SUCCEEDED', lastAttempt: 1 } });
    assert.deepEqual(
      stub.calls.map((c) => c.args),
      [['d-1', 1]],
    );
    assert.deepEqual(timersStarted(history), []);
    assert.deepEqual(activityTimeouts(history).get('attemptWebhookDelivery'), {
      startToClose: 90_000,
      scheduleToClose: 3_600_000,
    });
    assert.deepEqual(retryPolicies(history).get('attemptWebhookDelivery')?.nonRetryableErrorTypes, ['NotFoundError']);
  });

  it('waits the delay each answer asks for on a durable timer, numbering attempts, until the activity gives up: FAILED', async () => {
    const stub = scripted([
      { status: 'RETRY', retryInSeconds: 60 },
      { status: 'RETRY', retryInSeconds: 600 },
      { status: 'RETRY', retryInSeconds: 3_600 },
      { status: 'FAILED' },
    ]);
    const { result, history, workflowId } = await run(stub.activities, { deliveryId: 'd-2', firstAttempt: 1 });
    assert.deepEqual(result, { ok: true, value: { status: 'FAILED', lastAttempt: 4 } });
    assert.deepEqual(
      stub.calls.map((c) => c.args),
      [
        ['d-2', 1],
        ['d-2', 2],
        ['d-2', 3],
        ['d-2', 4],
      ],
    );
    assert.deepEqual(timersStarted(history), [60_000, 600_000, 3_600_000]);
    assert.deepEqual(scheduledActivities(history), Array(4).fill('attemptWebhookDelivery'));
    await replay(history, workflowId);
  });

  it('succeeds after retries: the last attempt number is the one that succeeded', async () => {
    const stub = scripted([{ status: 'RETRY', retryInSeconds: 1 }, { status: 'SUCCEEDED' }]);
    const { result, history } = await run(stub.activities, { deliveryId: 'd-3', firstAttempt: 1 });
    assert.deepEqual(result, { ok: true, value: { status: 'SUCCEEDED', lastAttempt: 2 } });
    assert.deepEqual(timersStarted(history), [1_000]);
  });

  it('a webhook deleted or deactivated meanwhile: CANCELED, no further attempt', async () => {
    const stub = scripted([{ status: 'RETRY', retryInSeconds: 60 }, { status: 'CANCELED' }, { status: 'SUCCEEDED' }]);
    const { result } = await run(stub.activities, { deliveryId: 'd-4', firstAttempt: 1 });
    assert.deepEqual(result, { ok: true, value: { status: 'CANCELED', lastAttempt: 2 } });
    assert.equal(stub.calls.length, 2);
  });

  it('a redelivery (or a run restarted by the reconciler) continues the numbering from its first attempt', async () => {
    const stub = scripted([{ status: 'RETRY', retryInSeconds: 5 }, { status: 'SUCCEEDED' }]);
    const { result } = await run(stub.activities, { deliveryId: 'd-5', firstAttempt: 4 });
    assert.deepEqual(result, { ok: true, value: { status: 'SUCCEEDED', lastAttempt: 5 } });
    assert.deepEqual(
      stub.calls.map((c) => c.args[1]),
      [4, 5],
    );
  });

  it('a failure of ours (the database) is retried by Temporal on the same attempt number, not counted as a new attempt', async () => {
    const stub = scripted([
      new Error('connection terminated (stub)'),
      new Error('connection terminated (stub)'),
      { status: 'SUCCEEDED' },
    ]);
    const { result, history } = await run(stub.activities, { deliveryId: 'd-6', firstAttempt: 1 });
    assert.deepEqual(result, { ok: true, value: { status: 'SUCCEEDED', lastAttempt: 1 } });
    assert.deepEqual(
      stub.calls.map((c) => [c.args[1], c.attempt]),
      [
        [1, 1],
        [1, 2],
        [1, 3],
      ],
    );
    assert.deepEqual(scheduledActivities(history), ['attemptWebhookDelivery']);
    assert.deepEqual(timersStarted(history), [], 'retry backoff is the activity retry policy, not workflow timers');
  });

  it('NotFoundError (the delivery row is gone) is final at once: one attempt, the workflow fails', async () => {
    const stub = scripted([failure('NotFoundError', 'delivery d-7 not found')]);
    const { result } = await run(stub.activities, { deliveryId: 'd-7', firstAttempt: 1 });
    const err = !result.ok ? result.error : undefined;
    assert.ok(err instanceof WorkflowFailedError, String(err));
    assert.ok(err.cause instanceof ActivityFailure);
    assert.equal(err.cause.retryState, RetryState.NON_RETRYABLE_FAILURE);
    assert.ok(err.cause.cause instanceof ApplicationFailure);
    assert.equal(err.cause.cause.type, 'NotFoundError');
    assert.equal(stub.calls.length, 1);
  });

  it('a database down for more than the hour the attempt may take fails the run (the reconciler restarts it)', async () => {
    const stub = scripted([new Error('database down (stub)')]);
    const { result } = await run(stub.activities, { deliveryId: 'd-8', firstAttempt: 2 });
    const err = !result.ok ? result.error : undefined;
    assert.ok(err instanceof WorkflowFailedError, String(err));
    assert.ok(err.cause instanceof ActivityFailure);
    assert.equal(err.cause.retryState, RetryState.TIMEOUT);
    // 1 s doubling to 30 s fills an hour with about 120 attempts, all on the same delivery attempt.
    assert.ok(stub.calls.length > 100 && stub.calls.length < 140, `attempts: ${stub.calls.length}`);
    assert.ok(stub.calls.every((c) => c.args[1] === 2));
  });
});
