import assert from 'node:assert/strict';
import { testEnv, uniqueTaskQueue, withWorker } from '../src/testing';
import { makeActivities, waitFor, workflowsPath } from './support';
import { accumulator, addSignal, finishSignal, infoQuery, totalQuery, waitForFinish } from './workflows';

describe('embedded-temporal: signals, queries, conditions', () => {
  it('keeps a signal sent before any worker polls, and takes signals while the workflow runs', async () => {
    const env = await testEnv();
    const taskQueue = uniqueTaskQueue();
    const handle = await env.client.workflow.start(accumulator, { taskQueue, workflowId: `acc-${Date.now()}` });
    await handle.signal(addSignal, 1); // no worker yet
    const out = await withWorker({ workflowsPath, activities: makeActivities(), taskQueue }, async () => {
      await waitFor(async () => (await handle.query(totalQuery)) === 1, 10_000, 'first signal applied');
      await handle.signal(addSignal, 10); // while running
      await waitFor(async () => (await handle.query(totalQuery)) === 11, 10_000, 'second signal applied');
      await handle.signal(finishSignal);
      return await handle.result();
    });
    assert.equal(out, 11);
  });

  it('answers queries through the worker, including failed ones', async () => {
    const env = await testEnv();
    const taskQueue = uniqueTaskQueue();
    const workflowId = `q-${Date.now()}`;
    const handle = await env.client.workflow.start(accumulator, { taskQueue, workflowId });
    await withWorker({ workflowsPath, activities: makeActivities(), taskQueue }, async () => {
      await handle.signal(addSignal, 7);
      await waitFor(async () => (await handle.query(totalQuery)) === 7, 10_000, 'query');
      const info = await handle.query(infoQuery);
      assert.equal(info.workflowId, workflowId);
      await assert.rejects(handle.query('no-such-query'), /no-such-query|did not register|not registered/i);
      await handle.signal(finishSignal);
      await handle.result();
    });
    // A closed workflow is still queryable (legacy query task on the normal queue).
    const closedAnswer = await withWorker({ workflowsPath, activities: makeActivities(), taskQueue }, () =>
      handle.query(totalQuery),
    );
    assert.equal(closedAnswer, 7);
  });

  it('condition() with a timeout: signalled in time → true; otherwise false after virtual time', async () => {
    const results = await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const a = await client.workflow.start(waitForFinish, {
        taskQueue,
        workflowId: `cond-a-${Date.now()}`,
        args: [3_600_000],
      });
      await a.signal(finishSignal);
      const b = client.workflow.execute(waitForFinish, {
        taskQueue,
        workflowId: `cond-b-${Date.now()}`,
        args: [86_400_000],
      });
      return [await a.result(), await b];
    });
    assert.equal(results[0], true);
    // false after one virtual day, without a day's wait (time skipped).
    assert.equal(results[1], false);
  });

  it('signal-with-start starts once, then signals the running workflow', async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const workflowId = `sws-${Date.now()}`;
      const h1 = await client.workflow.signalWithStart(accumulator, {
        taskQueue,
        workflowId,
        signal: addSignal,
        signalArgs: [2],
      });
      const h2 = await client.workflow.signalWithStart(accumulator, {
        taskQueue,
        workflowId,
        signal: addSignal,
        signalArgs: [3],
      });
      assert.equal(h1.signaledRunId, h2.signaledRunId);
      await h1.signal(finishSignal);
      return await h1.result();
    });
    assert.equal(out, 5);
  });

  it('rejects a signal to a closed workflow with NOT_FOUND', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const h = await client.workflow.start(accumulator, { taskQueue, workflowId: `closed-${Date.now()}` });
      await h.signal(finishSignal);
      await h.result();
      await assert.rejects(h.signal(addSignal, 1), (err: Error) => err.name === 'WorkflowNotFoundError');
    });
  });
});
