import assert from 'node:assert/strict';
import { temporal } from '@temporalio/proto';
import { withWorker } from '../src/testing';
import { workflowsPath } from './support';
import { collectsSignals, durableAddSignal } from './workflows';

const ET = temporal.api.enums.v1.EventType;
const DAY_MS = 24 * 3600 * 1000;

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

const activities = { sideEffect: async (tag: string) => tag };

describe('embedded-temporal: workflow start delay', () => {
  it('runs the first workflow task only once the delay has passed', async () => {
    await withWorker({ workflowsPath, activities }, async ({ client, taskQueue }) => {
      const workflowId = `delayed-${Date.now()}`;
      const handle = await client.workflow.start(collectsSignals, {
        taskQueue,
        workflowId,
        args: ['d', 0],
        startDelay: '1 day',
      });
      assert.equal(await handle.result(), 'd:');
      const events = (await handle.fetchHistory()).events ?? [];
      const started = events.find((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
      const scheduled = events.find((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
      assert.equal(ms(started?.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff), DAY_MS);
      assert.ok(
        ms(scheduled?.eventTime) - ms(started?.eventTime) >= DAY_MS,
        'first task scheduled before the delay ended',
      );
    });
  });

  it('signal-with-start during the delay dispatches the first workflow task at once with the signal', async () => {
    await withWorker({ workflowsPath, activities }, async ({ client, taskQueue }) => {
      const workflowId = `delayed-sws-${Date.now()}`;
      const first = await client.workflow.start(collectsSignals, {
        taskQueue,
        workflowId,
        args: ['s', 1],
        startDelay: '1 day',
      });
      const again = await client.workflow.signalWithStart(collectsSignals, {
        taskQueue,
        workflowId,
        args: ['s', 1],
        signal: durableAddSignal,
        signalArgs: ['early'],
      });
      assert.equal(again.signaledRunId, first.firstExecutionRunId);
      assert.equal(await first.result(), 's:early');
      const events = (await first.fetchHistory()).events ?? [];
      const types = events.map((e) => e.eventType);
      assert.deepEqual(types.slice(0, 3), [
        ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      ]);
      const started = events[0];
      const scheduled = events[2];
      assert.ok(ms(scheduled?.eventTime) - ms(started?.eventTime) < DAY_MS, 'the rest of the delay was not dropped');
    });
  });
});
