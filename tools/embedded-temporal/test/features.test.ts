import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Context, CompleteAsyncError } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { TimeoutFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { testEnv, withWorker } from '../src/testing';
import { makeActivities, waitFor, workflowsPath } from './support';
import {
  asyncCompletion,
  cancelsChild,
  forever,
  markersAndProperties,
  scheduleToClose,
  unpolledActivity,
} from './workflows';

describe('embedded-temporal: more commands and timeouts', () => {
  it('records markers (patch, local activity), upserts search attributes and memo', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const h = await client.workflow.start(markersAndProperties, {
        taskQueue,
        workflowId: `markers-${Date.now()}`,
        args: [3],
      });
      assert.equal(await h.result(), 12);
      const d = await h.describe();
      assert.deepEqual(d.memo, { stage: 'done' });
      assert.deepEqual(d.searchAttributes.Stage, ['done']);
      const types = ((await h.fetchHistory()).events ?? []).map((e) => e.eventType);
      const ET = temporal.api.enums.v1.EventType;
      assert.ok(types.includes(ET.EVENT_TYPE_MARKER_RECORDED));
      assert.ok(types.includes(ET.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES));
      assert.ok(types.includes(ET.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED));
    });
  });

  it('times out an activity nobody polls for (schedule-to-start)', async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, ({ client, taskQueue }) =>
      client.workflow.execute(unpolledActivity, { taskQueue, workflowId: `s2s-${Date.now()}` }),
    );
    assert.equal(out, 'timeout SCHEDULE_TO_START');
  });

  it('times out a stalled activity at its schedule-to-close deadline', async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, ({ client, taskQueue }) =>
      client.workflow.execute(scheduleToClose, { taskQueue, workflowId: `s2c-${Date.now()}` }),
    );
    assert.equal(out, 'timeout SCHEDULE_TO_CLOSE');
  });

  it('completes an activity asynchronously by workflow and activity id', async () => {
    let started = false;
    const activities = {
      async completesAsync(): Promise<string> {
        started = true;
        void Context.current();
        throw new CompleteAsyncError();
      },
    };
    const out = await withWorker({ workflowsPath, activities }, async ({ client, taskQueue }) => {
      const workflowId = `async-${Date.now()}`;
      const h = await client.workflow.start(asyncCompletion, { taskQueue, workflowId });
      await waitFor(() => started, 10_000, 'activity started');
      await client.activity.complete({ workflowId, activityId: '1' }, 'done later');
      return await h.result();
    });
    assert.equal(out, 'done later');
  });

  it('cancels a child workflow through RequestCancelExternal', async () => {
    const out = await withWorker({ workflowsPath, activities: makeActivities() }, ({ client, taskQueue }) =>
      client.workflow.execute(cancelsChild, { taskQueue, workflowId: `cancelchild-${Date.now()}` }),
    );
    assert.equal(out, 'child cancelled');
  });

  it('times a run out at its run timeout (in virtual time)', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const err = await client.workflow
        .execute(forever, { taskQueue, workflowId: `runtimeout-${Date.now()}`, workflowRunTimeout: '2 days' })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(err instanceof WorkflowFailedError);
      assert.ok(err.cause instanceof TimeoutFailure);
    });
  });

  it('deduplicates a retried start request by request id', async () => {
    const env = await testEnv();
    const req = {
      namespace: 'default',
      workflowId: `dedup-${Date.now()}`,
      workflowType: { name: 'forever' },
      taskQueue: { name: `dedup-q-${Date.now()}` },
      requestId: randomUUID(),
    };
    const a = await env.connection.workflowService.startWorkflowExecution(req);
    const b = await env.connection.workflowService.startWorkflowExecution(req);
    assert.equal(a.runId, b.runId);
    await env.client.workflow.getHandle(req.workflowId).terminate();
  });
});
