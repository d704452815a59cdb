import assert from 'node:assert/strict';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure, TerminatedFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { withWorker } from '../src/testing';
import { makeActivities, waitFor, workflowsPath } from './support';
import {
  abandonsOrTerminatesChild,
  accumulator,
  countdown,
  failsUntilAttempt,
  finishSignal,
  parentOfDoubler,
  parentOfFailingChild,
  signalSibling,
  sleeper,
  threeActivities,
} from './workflows';

const WEEK = 7 * 24 * 3600 * 1000;

describe('embedded-temporal: workflow lifecycle', () => {
  it('runs a child workflow and returns its result to the parent', async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, ({ client, taskQueue }) =>
      client.workflow.execute(parentOfDoubler, { taskQueue, workflowId: `parent-${Date.now()}`, args: [20] }),
    );
    assert.equal(out, 41);
  });

  it("surfaces a child's failure to the parent", async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, ({ client, taskQueue }) =>
      client.workflow.execute(parentOfFailingChild, { taskQueue, workflowId: `parentf-${Date.now()}` }),
    );
    assert.equal(out, 'child failed: child says no');
  });

  it('follows a continue-as-new chain to the final result', async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, ({ client, taskQueue }) =>
      client.workflow.execute(countdown, { taskQueue, workflowId: `can-${Date.now()}`, args: [5, 0, 0] }),
    );
    assert.deepEqual(out, { acc: 15, runs: 6, continued: true });
  });

  it('terminates a running workflow', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const h = await client.workflow.start(sleeper, { taskQueue, workflowId: `term-${Date.now()}`, args: [WEEK] });
      await waitFor(async () => (await h.describe()).historyLength >= 5, 10_000, 'timer started');
      await h.terminate('enough');
      const err = await h.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError);
      assert.ok(err.cause instanceof TerminatedFailure);
      assert.equal((await h.describe()).status.name, 'TERMINATED');
    });
  });

  it('cancels a running workflow', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const h = await client.workflow.start(sleeper, { taskQueue, workflowId: `cancel-${Date.now()}`, args: [WEEK] });
      await waitFor(async () => (await h.describe()).historyLength >= 5, 10_000, 'timer started');
      await h.cancel();
      const err = await h.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError);
      assert.ok(err.cause instanceof CancelledFailure);
      assert.equal((await h.describe()).status.name, 'CANCELLED');
    });
  });

  it('rejects a second start of a running workflow id, and applies the reuse policy after it closed', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const workflowId = `dup-${Date.now()}`;
      const h = await client.workflow.start(accumulator, { taskQueue, workflowId });
      await assert.rejects(
        client.workflow.start(accumulator, { taskQueue, workflowId }),
        WorkflowExecutionAlreadyStartedError,
      );
      await h.signal(finishSignal);
      await h.result();
      await assert.rejects(
        client.workflow.start(accumulator, { taskQueue, workflowId, workflowIdReusePolicy: 'REJECT_DUPLICATE' }),
        WorkflowExecutionAlreadyStartedError,
      );
      await assert.rejects(
        client.workflow.start(accumulator, {
          taskQueue,
          workflowId,
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        }),
        WorkflowExecutionAlreadyStartedError,
      );
      const again = await client.workflow.start(accumulator, { taskQueue, workflowId });
      assert.notEqual(again.firstExecutionRunId, h.firstExecutionRunId);
      // Conflict policy USE_EXISTING returns the running run instead of failing.
      const same = await client.workflow.start(accumulator, {
        taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      assert.equal(same.firstExecutionRunId, again.firstExecutionRunId);
      await again.terminate();
    });
  });

  it('retries a failing workflow per its retry policy (new runs, result of the last)', async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, ({ client, taskQueue }) =>
      client.workflow.execute(failsUntilAttempt, {
        taskQueue,
        workflowId: `wfretry-${Date.now()}`,
        args: [3],
        retry: { initialInterval: '1 minute', maximumAttempts: 5 },
      }),
    );
    assert.equal(out, 3);
  });

  it('signals another workflow through an external handle', async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const targetId = `target-${Date.now()}`;
      const target = await client.workflow.start(accumulator, { taskQueue, workflowId: targetId });
      assert.equal(
        await client.workflow.execute(signalSibling, {
          taskQueue,
          workflowId: `sender-${Date.now()}`,
          args: [targetId],
        }),
        'sent',
      );
      return await target.result();
    });
    assert.equal(out, 5);
  });

  it('applies parent-close policies: TERMINATE ends the child, ABANDON leaves it running', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const terminated = await client.workflow.execute(abandonsOrTerminatesChild, {
        taskQueue,
        workflowId: `pcp-t-${Date.now()}`,
        args: ['TERMINATE'],
      });
      const abandoned = await client.workflow.execute(abandonsOrTerminatesChild, {
        taskQueue,
        workflowId: `pcp-a-${Date.now()}`,
        args: ['ABANDON'],
      });
      assert.equal((await client.workflow.getHandle(terminated).describe()).status.name, 'TERMINATED');
      const child = client.workflow.getHandle(abandoned);
      assert.equal((await child.describe()).status.name, 'RUNNING');
      await child.signal(finishSignal);
      await child.result();
    });
  });

  it('describes, lists and counts executions', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const workflowId = `desc-${Date.now()}`;
      const h = await client.workflow.start(threeActivities, {
        taskQueue,
        workflowId,
        args: [1],
        memo: { purpose: 'test' },
      });
      assert.equal(await h.result(), 8);
      const d = await h.describe();
      assert.equal(d.type, 'threeActivities');
      assert.equal(d.status.name, 'COMPLETED');
      assert.equal(d.taskQueue, taskQueue);
      assert.deepEqual(d.memo, { purpose: 'test' });
      assert.ok(d.closeTime && d.closeTime >= d.startTime);
      const listed = [];
      for await (const info of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) listed.push(info);
      assert.equal(listed.length, 1);
      assert.equal(listed[0].runId, d.runId);
      const count = await client.workflow.count(`WorkflowType = 'threeActivities' AND ExecutionStatus = 'Completed'`);
      assert.ok(count.count >= 1);
      const running = await client.workflow.count(`WorkflowId = '${workflowId}' AND ExecutionStatus = 'Running'`);
      assert.equal(running.count, 0);
      // The full history is readable and well formed: ids 1..n, first Started, last Completed.
      const history = await h.fetchHistory();
      const events = history.events ?? [];
      events.forEach((e, i) => assert.equal(Number(e.eventId), i + 1));
      const ET = temporal.api.enums.v1.EventType;
      assert.equal(events[0].eventType, ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
      assert.equal(events[events.length - 1].eventType, ET.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    });
  });

  it('lists in keyset pages: terminating each listed run while walking the pages still reaches every run', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const ids = await Promise.all(
        Array.from(
          { length: 11 },
          async (_, i) =>
            (await client.workflow.start(sleeper, { taskQueue, workflowId: `page-${Date.now()}-${i}`, args: [WEEK] }))
              .workflowId,
        ),
      );
      const query = `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`;
      const seen: string[] = [];
      // Pages of 3 of a filter the terminated runs leave: an offset would skip runs here.
      for await (const wf of client.workflow.list({ query, pageSize: 3 })) {
        seen.push(wf.workflowId);
        await client.workflow.getHandle(wf.workflowId, wf.runId).terminate('walked');
      }
      assert.deepEqual([...seen].sort(), [...ids].sort());
      assert.equal((await client.workflow.count(query)).count, 0);
    });
  });

  it('the test helper terminates workflows a test left running on its generated task queue', async () => {
    let leftover = '';
    const env = await withWorker(
      { workflowsPath, activities: makeActivities() },
      async ({ env, client, taskQueue }) => {
        const h = await client.workflow.start(sleeper, {
          taskQueue,
          workflowId: `leftover-${Date.now()}`,
          args: [WEEK],
        });
        leftover = h.workflowId;
        return env;
      },
    );
    assert.equal((await env.client.workflow.getHandle(leftover).describe()).status.name, 'TERMINATED');
  });
});
