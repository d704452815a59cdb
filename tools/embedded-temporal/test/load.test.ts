import assert from 'node:assert/strict';
import { withWorker } from '../src/testing';
import { makeActivities, workflowsPath } from './support';
import { threeActivities } from './workflows';

describe('embedded-temporal: load', () => {
  it('runs 200 concurrent workflows of 3 activities each, all correct', async function () {
    this.timeout(120_000);
    const activities = makeActivities();
    const results = await withWorker({ workflowsPath, activities }, async ({ client, taskQueue }) => {
      const stamp = Date.now();
      const handles = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          client.workflow.start(threeActivities, { taskQueue, workflowId: `load-${stamp}-${i}`, args: [i] }),
        ),
      );
      return await Promise.all(handles.map((h) => h.result()));
    });
    results.forEach((r, i) => assert.equal(r, i * 8));
    assert.equal(activities.calls.double, 600);
  });
});
