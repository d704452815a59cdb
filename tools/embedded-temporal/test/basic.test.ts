import assert from 'node:assert/strict';
import path from 'node:path';
import { testEnv, withWorker } from '../src/testing';
import { activityThenTimer, returnsInput } from './workflows';

const workflowsPath = path.join(__dirname, 'workflows');
const activities = { greet: async (name: string) => `hello ${name}` };

describe('embedded-temporal: basics', () => {
  it('runs a workflow with no commands but its result', async () => {
    const out = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(returnsInput, { taskQueue, workflowId: `ret-${Date.now()}`, args: ['x'] }),
    );
    assert.equal(out, 'x');
  });

  it('runs an activity then a 7-day timer by skipping time (the virtual clock moves 7 days; no 7-day wait)', async () => {
    const env = await testEnv();
    const before = await env.currentTimeMs();
    const out = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(activityThenTimer, {
        taskQueue,
        workflowId: `at-${Date.now()}`,
        args: ['pix', 7 * 24 * 3600 * 1000],
      }),
    );
    // Speed is the benchmark's (no timed assertion here): without skipping, this would wait 7 days.
    assert.equal(out, 'hello pix!');
    const after = await env.currentTimeMs();
    assert.ok(after - before >= 7 * 24 * 3600 * 1000, 'virtual clock moved 7 days');
  });
});
