import assert from 'node:assert/strict';
import { withWorker } from '../src/testing';
import { makeActivities, workflowsPath } from './support';
import { cancelRunningActivity, heartbeatTimeout, nonRetryable, retriesThenFails } from './workflows';

describe('embedded-temporal: activities', () => {
  it('retries with exponential backoff, then surfaces the final failure to the workflow', async () => {
    const activities = makeActivities();
    const report = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(retriesThenFails, { taskQueue, workflowId: `retry-${Date.now()}`, args: [4] }),
    );
    assert.equal(activities.calls.alwaysFails, 4);
    assert.equal(report.retryState, 'MAXIMUM_ATTEMPTS_REACHED');
    assert.equal(report.causeType, 'ApplicationFailure');
    assert.equal(report.causeMessage, 'failure #4');
    // Attempts scheduled 1 s, 2 s, 4 s apart in virtual time.
    const gaps = activities.attemptTimes.slice(1).map((t, i) => t - activities.attemptTimes[i]);
    assert.equal(gaps.length, 3);
    [1000, 2000, 4000].forEach((expected, i) =>
      assert.ok(gaps[i] >= expected && gaps[i] < expected + 1000, `gap ${i}: ${gaps[i]}`),
    );
  });

  it('does not retry a non-retryable ApplicationFailure', async () => {
    const activities = makeActivities();
    const report = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(nonRetryable, { taskQueue, workflowId: `nonretry-${Date.now()}`, args: ['flag'] }),
    );
    assert.equal(activities.calls.failsNonRetryable, 1);
    assert.equal(report.retryState, 'NON_RETRYABLE_FAILURE');
    assert.equal(report.causeMessage, 'do not retry me');
  });

  it("does not retry an error type listed in the policy's nonRetryableErrorTypes", async () => {
    const activities = makeActivities();
    const report = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(nonRetryable, { taskQueue, workflowId: `nonretry-type-${Date.now()}`, args: ['type'] }),
    );
    assert.equal(activities.calls.alwaysFails, 1);
    assert.equal(report.retryState, 'NON_RETRYABLE_FAILURE');
  });

  it('times out an activity that stops heartbeating', async () => {
    const activities = makeActivities();
    const report = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(heartbeatTimeout, { taskQueue, workflowId: `hb-${Date.now()}` }),
    );
    assert.equal(report.causeType, 'TimeoutFailure');
    assert.equal(report.timeoutType, 'HEARTBEAT');
    assert.equal(report.retryState, 'MAXIMUM_ATTEMPTS_REACHED');
  });

  it('delivers activity cancellation through the heartbeat response', async () => {
    const activities = makeActivities();
    const out = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(cancelRunningActivity, { taskQueue, workflowId: `actcancel-${Date.now()}` }),
    );
    assert.equal(out, 'cancelled');
    assert.equal(activities.cancelSeen, true);
  });
});
