import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { testEnv, uniqueTaskQueue, withWorker, workflowBundle } from '../src/testing';
import { makeActivities, workflowsPath } from './support';
import {
  addDoubledUpdate,
  addUpdate,
  beginUpdate,
  earlyReturn,
  finishUpdatesSignal,
  untilFinishedUpdate,
  updatable,
  updateTotalQuery,
} from './workflows';

const ET = temporal.api.enums.v1.EventType;
type History = temporal.api.history.v1.IHistory;

function eventsOf(history: History, type: number): temporal.api.history.v1.IHistoryEvent[] {
  return (history.events ?? []).filter((e) => e.eventType === type);
}

/** The history must replay on a fresh worker without nondeterminism (what the real server guarantees). */
async function assertReplays(history: History, workflowId: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle(workflowsPath) }, history, workflowId);
}

describe('embedded-temporal: workflow updates', () => {
  it('an update is accepted and completed; ACCEPTED-stage handles and repeated update ids get the same outcome', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const workflowId = `upd-${Date.now()}`;
      const handle = await client.workflow.start(updatable, { taskQueue, workflowId });
      assert.equal(await handle.executeUpdate(addUpdate, { args: [5] }), 5);

      const accepted = await handle.startUpdate(addUpdate, {
        args: [3],
        updateId: 'add-3',
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      assert.equal(await accepted.result(), 8);
      // Same update id again: deduplicated, the handler does not run twice.
      assert.equal(await handle.executeUpdate(addUpdate, { args: [3], updateId: 'add-3' }), 8);
      assert.equal(await handle.getUpdateHandle<number>('add-3').result(), 8, 'PollWorkflowExecutionUpdate');
      assert.equal(await handle.query(updateTotalQuery), 8);

      await handle.signal(finishUpdatesSignal);
      assert.equal(await handle.result(), 8);
      const history = await handle.fetchHistory();
      const acc = eventsOf(history, ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
      const done = eventsOf(history, ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
      assert.equal(acc.length, 2);
      assert.equal(done.length, 2);
      const a3 = acc.find((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.protocolInstanceId === 'add-3');
      assert.ok(a3);
      assert.equal(a3.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name, 'add');
      const c3 = done.find((e) => e.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId === 'add-3');
      assert.equal(Number(c3?.workflowExecutionUpdateCompletedEventAttributes?.acceptedEventId), Number(a3.eventId));
      await assertReplays(history, workflowId);
    });
  });

  it('an update rejected by its validator fails without a trace in history, and the workflow goes on', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const workflowId = `upd-rej-${Date.now()}`;
      const handle = await client.workflow.start(updatable, { taskQueue, workflowId });
      await assert.rejects(handle.executeUpdate(addUpdate, { args: [-4] }), (err: unknown) => {
        assert.ok(err instanceof WorkflowUpdateFailedError, String(err));
        assert.match(String(err.cause?.message), /negative amounts are rejected: -4/);
        return true;
      });
      assert.equal(await handle.executeUpdate(addUpdate, { args: [2] }), 2);
      await handle.signal(finishUpdatesSignal);
      assert.equal(await handle.result(), 2);
      const history = await handle.fetchHistory();
      assert.equal(eventsOf(history, ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED).length, 1);
      await assertReplays(history, workflowId);
    });
  });

  it('an update handler that runs an activity and a timer completes with their result', async () => {
    const acts = makeActivities();
    await withWorker({ workflowsPath, activities: acts }, async ({ client, taskQueue }) => {
      const workflowId = `upd-act-${Date.now()}`;
      const handle = await client.workflow.start(updatable, { taskQueue, workflowId });
      assert.equal(await handle.executeUpdate(addDoubledUpdate, { args: [21] }), 42);
      assert.equal(acts.calls.double, 1);
      await handle.signal(finishUpdatesSignal);
      assert.equal(await handle.result(), 42);
      const types = ((await handle.fetchHistory()).events ?? []).map((e) => e.eventType);
      const accepted = types.indexOf(ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
      const completed = types.indexOf(ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
      assert.ok(accepted > 0 && accepted < types.indexOf(ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED));
      assert.ok(completed > types.indexOf(ET.EVENT_TYPE_TIMER_FIRED));
      await assertReplays(await handle.fetchHistory(), workflowId);
    });
  });

  it('an update to a finished workflow fails cleanly (workflow not found), its earlier updates stay readable', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const handle = await client.workflow.start(updatable, { taskQueue, workflowId: `upd-closed-${Date.now()}` });
      await handle.executeUpdate(addUpdate, { args: [1], updateId: 'before-close' });
      await handle.signal(finishUpdatesSignal);
      await handle.result();
      await assert.rejects(handle.executeUpdate(addUpdate, { args: [1] }), WorkflowNotFoundError);
      assert.equal(await handle.getUpdateHandle<number>('before-close').result(), 1);
    });
  });

  it('update-with-start returns early (first step done) while the workflow goes on', async () => {
    const acts = makeActivities();
    await withWorker({ workflowsPath, activities: acts }, async ({ client, taskQueue }) => {
      const workflowId = `uws-${Date.now()}`;
      const startWorkflowOperation = new WithStartWorkflowOperation(earlyReturn, {
        workflowId,
        taskQueue,
        workflowIdConflictPolicy: 'FAIL',
      });
      const early = await client.workflow.executeUpdateWithStart(beginUpdate, { args: [50], startWorkflowOperation });
      assert.equal(early, 100);
      const handle = await startWorkflowOperation.workflowHandle();
      assert.equal((await handle.describe()).status.name, 'RUNNING');

      // A second update-with-start with USE_EXISTING goes to the running workflow.
      const again = new WithStartWorkflowOperation(earlyReturn, {
        workflowId,
        taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      const upd = await client.workflow.startUpdateWithStart(beginUpdate, {
        args: [7],
        startWorkflowOperation: again,
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      assert.equal((await (await again.workflowHandle()).describe()).runId, (await handle.describe()).runId);
      assert.equal(await upd.result(), 100);

      await handle.signal(finishUpdatesSignal);
      assert.equal(await handle.result(), 'finished 100');
      assert.equal(acts.calls.double, 1);
      await assertReplays(await handle.fetchHistory(), workflowId);
    });
  });
});

describe('embedded-temporal: workflow updates, delivery and closing', () => {
  it('an update sent before any worker polls rides the first workflow task', async () => {
    const env = await testEnv();
    const taskQueue = uniqueTaskQueue();
    const workflowId = `upd-early-${Date.now()}`;
    const handle = await env.client.workflow.start(updatable, { taskQueue, workflowId });
    const pending = handle.executeUpdate(addUpdate, { args: [9] }); // waits for a worker
    await withWorker({ workflowsPath, activities: makeActivities(), taskQueue }, async () => {
      assert.equal(await pending, 9);
      await handle.signal(finishUpdatesSignal);
      assert.equal(await handle.result(), 9);
    });
    await assertReplays(await handle.fetchHistory(), workflowId);
  });

  it('an accepted update whose workflow closes first fails with AcceptedUpdateCompletedWorkflow', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const handle = await client.workflow.start(updatable, { taskQueue, workflowId: `upd-abort-${Date.now()}` });
      const upd = await handle.startUpdate(untilFinishedUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED });
      await handle.terminate('closing with an update in flight');
      await assert.rejects(upd.result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowUpdateFailedError, String(err));
        assert.ok(err.cause instanceof ApplicationFailure);
        assert.equal(err.cause.type, 'AcceptedUpdateCompletedWorkflow');
        return true;
      });
    });
  });
});
