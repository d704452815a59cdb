import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { withWorker } from '../src/testing';
import { makeActivities, workflowsPath } from './support';
import { activityThenTimer } from './workflows';

const ET = temporal.api.enums.v1.EventType;

describe('embedded-temporal: eager workflow start', () => {
  it('returns the first workflow task in the start answer to a client sharing the worker connection', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ env, taskQueue }) => {
      // Eager start needs the worker's own (native) connection: the SDK reserves a workflow-task
      // slot of a worker on that connection and hands it the task from the start answer.
      const client = new Client({ connection: env.nativeConnection, namespace: env.namespace ?? 'default' });
      const workflowId = `eager-${Date.now()}`;
      const handle = await client.workflow.start(activityThenTimer, {
        taskQueue,
        workflowId,
        args: ['eager', 10],
        requestEagerStart: true,
      });
      assert.equal(handle.eagerlyStarted, true);
      assert.equal(await handle.result(), 'hello eager!');
      const events = (await handle.fetchHistory()).events ?? [];
      assert.deepEqual(
        events.slice(0, 4).map((e) => e.eventType),
        [
          ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
          ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
          ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
          ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
        ],
      );
    });
  });

  it('a start without requestEagerStart goes through the task queue', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const plain = await client.workflow.start(activityThenTimer, {
        taskQueue,
        workflowId: `not-eager-${Date.now()}`,
        args: ['queue', 10],
      });
      assert.equal(plain.eagerlyStarted, false);
      assert.equal(await plain.result(), 'hello queue!');
    });
  });
});
