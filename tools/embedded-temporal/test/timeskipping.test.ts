import assert from 'node:assert/strict';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import { testEnv, uniqueTaskQueue, withWorker } from '../src/testing';
import { makeActivities, workflowsPath } from './support';
import { failsFirstTask, orderWithReminder, returnsInput, sleepThenNow } from './workflows';

const ET = temporal.api.enums.v1.EventType;
const DAY = 24 * 3600 * 1000;

describe('embedded-temporal: time skipping and workflow tasks', () => {
  it('env.sleep skips virtual time; GetCurrentTime reports it', async () => {
    const env = await testEnv();
    const t0 = await env.currentTimeMs();
    const wall0 = Date.now();
    await env.sleep(3 * DAY);
    const t1 = await env.currentTimeMs();
    assert.ok(t1 - t0 >= 3 * DAY, `moved ${t1 - t0}`);
    assert.ok(Date.now() - wall0 < 1000);
  });

  it('workflow time (Date.now in the workflow) is the virtual clock', async () => {
    const env = await testEnv();
    const before = await env.currentTimeMs();
    const now = await withWorker({ workflowsPath, activities: makeActivities() }, ({ client, taskQueue }) =>
      client.workflow.execute(sleepThenNow, { taskQueue, workflowId: `now-${Date.now()}`, args: [2 * DAY] }),
    );
    assert.ok(now - before >= 2 * DAY);
  });

  it('retries a failed workflow task', async () => {
    await withWorker({ workflowsPath, activities: makeActivities() }, async ({ client, taskQueue }) => {
      const h = await client.workflow.start(failsFirstTask, { taskQueue, workflowId: `wft-fail-${Date.now()}` });
      assert.equal(await h.result(), 'recovered');
      const types = ((await h.fetchHistory()).events ?? []).map((e) => e.eventType);
      assert.ok(types.includes(ET.EVENT_TYPE_WORKFLOW_TASK_FAILED));
    });
  });

  it('times out a workflow task that a poller never completes, and hands the retry to a worker', async () => {
    const env = await testEnv();
    const taskQueue = uniqueTaskQueue();
    const h = await env.client.workflow.start(returnsInput, {
      taskQueue,
      workflowId: `wft-timeout-${Date.now()}`,
      args: ['late'],
      workflowTaskTimeout: '1 second',
    });
    // A "worker" that takes the task and dies.
    const stolen = await env.connection.workflowService.pollWorkflowTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue },
      identity: 'crashes',
    });
    assert.ok(stolen.taskToken && stolen.taskToken.length > 0);
    const out = await withWorker({ workflowsPath, activities: makeActivities(), taskQueue }, () => h.result());
    assert.equal(out, 'late');
    const types = ((await h.fetchHistory()).events ?? []).map((e) => e.eventType);
    assert.ok(types.includes(ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT));
  });

  it("answers an empty poll just before the caller's deadline (long poll on an empty queue)", async () => {
    const env = await testEnv();
    const t0 = Date.now();
    const resp = await env.connection.withDeadline(Date.now() + 2000, () =>
      env.connection.workflowService.pollWorkflowTaskQueue({
        namespace: 'default',
        taskQueue: { name: uniqueTaskQueue('empty') },
        identity: 'x',
      }),
    );
    const waited = Date.now() - t0;
    assert.ok(!resp.taskToken || resp.taskToken.length === 0, 'empty response, not an error');
    // It was held (a long poll), and answered before the deadline: after it, the call would have
    // failed with DEADLINE_EXCEEDED instead of resolving empty.
    assert.ok(waited >= 800, `answered after ${waited} ms, not held as a long poll`);
  });
});

describe('embedded-temporal: TestService controls', () => {
  it('Sleep and SleepUntil follow the clock; explicit Unlock lets time jump; Lock restores it', async () => {
    const env = await testEnv();
    const ts = env.connection.testService;
    assert.ok(ts);
    const t0 = await env.currentTimeMs();
    const w0 = Date.now();
    await ts.sleep({ duration: { seconds: Long.fromNumber(0), nanos: 200_000_000 } }); // locked: ~200 ms of real time
    assert.ok(Date.now() - w0 >= 150);
    await ts.unlockTimeSkipping({});
    try {
      const w1 = Date.now();
      await ts.sleep({ duration: { seconds: Long.fromNumber(86_400) } }); // unlocked: jumps a day
      const target = (await env.currentTimeMs()) + 3_600_000;
      await ts.sleepUntil({ timestamp: { seconds: Long.fromNumber(Math.floor(target / 1000)) } });
      assert.ok(Date.now() - w1 < 1000);
    } finally {
      await ts.lockTimeSkipping({});
    }
    assert.ok((await env.currentTimeMs()) - t0 >= 86_400_000 + 3_500_000);
  });
});

describe('embedded-temporal: env.sleep while work is in flight (Java server lock accounting)', () => {
  it('an activity calling env.sleep(2 days) lets a 1-day workflow timer fire meanwhile (timer-reminder pattern)', async () => {
    const env = await testEnv();
    let reminderSentAt = 0;
    let processingDoneAt = 0;
    const activities = {
      async processOrder(): Promise<void> {
        await env.sleep(2 * DAY);
        processingDoneAt = await env.currentTimeMs();
      },
      async sendReminder(): Promise<void> {
        reminderSentAt = await env.currentTimeMs();
      },
    };
    const before = await env.currentTimeMs();
    const wall0 = Date.now();
    const out = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(orderWithReminder, { taskQueue, workflowId: `reminder-${Date.now()}`, args: [DAY] }),
    );
    assert.equal(out.reminded, true);
    assert.ok(reminderSentAt - before >= DAY, 'the reminder went out after the 1-day timer');
    assert.ok(reminderSentAt < processingDoneAt, 'before processing finished');
    assert.ok(processingDoneAt - before >= 2 * DAY);
    assert.ok(out.elapsedMs >= 2 * DAY);
    assert.ok(Date.now() - wall0 < 20_000, 'virtual days, not real ones');
  });

  it('without a reminder when processing is quick', async () => {
    let reminded = false;
    const activities = {
      async processOrder(): Promise<void> {},
      async sendReminder(): Promise<void> {
        reminded = true;
      },
    };
    const out = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(orderWithReminder, { taskQueue, workflowId: `no-reminder-${Date.now()}`, args: [DAY] }),
    );
    assert.equal(out.reminded, false);
    assert.equal(reminded, false);
  });

  it('plain Sleep inside an activity does not unlock: time follows the wall clock while the activity runs', async () => {
    const env = await testEnv();
    const ts = env.connection.testService;
    assert.ok(ts);
    let wallMs = 0;
    const activities = {
      async processOrder(): Promise<void> {
        const w = Date.now();
        await ts.sleep({ duration: { seconds: Long.fromNumber(0), nanos: 300_000_000 } });
        wallMs = Date.now() - w;
      },
      async sendReminder(): Promise<void> {},
    };
    const out = await withWorker({ workflowsPath, activities }, ({ client, taskQueue }) =>
      client.workflow.execute(orderWithReminder, { taskQueue, workflowId: `plain-sleep-${Date.now()}`, args: [DAY] }),
    );
    assert.equal(out.reminded, false, 'the 1-day timer could not fire during a locked 300 ms sleep');
    assert.ok(wallMs >= 250, `slept ${wallMs} ms of real time`);
  });
});
