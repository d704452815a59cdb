/**
 * Parked idle runs (src/dormant.ts): a run waiting out its start delay, or waiting on its timers
 * or for a signal after its workflow tasks, is kept as its encoded history (or where the journal
 * has it) and rebuilt on its first touch. Through the real SDK, a parked run must behave in every
 * way as one kept in memory: its history, describe, signal-with-start, signal, terminate, query,
 * its own delay, timers and run timeout, and a durable restart.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { uniqueTaskQueue, workflowBundle } from '../src/testing';
import { silentLogger, startServer, type RunningServer } from '../src/index';
import { waitFor, workflowsPath } from './support';
import { collectsSignals, durableAddSignal, effectThenWaits, type DurableActivities } from './workflows';

const EventType = temporal.api.enums.v1.EventType;
const History = temporal.api.history.v1.History;

interface Harness {
  server: RunningServer;
  client: Client;
  taskQueue: string;
  effects: string[];
  stop(): Promise<void>;
}

async function harness(opts: { dbFilename?: string; taskQueue?: string }): Promise<Harness> {
  const server = await startServer({
    port: 0,
    timeSkipping: false,
    logger: silentLogger,
    parkIdleAfterMs: 25,
    dbFilename: opts.dbFilename,
  });
  const effects: string[] = [];
  const activities: DurableActivities = {
    async sideEffect(tag) {
      effects.push(tag);
      return `done ${tag}`;
    },
    async flaky(tag) {
      return tag;
    },
    async slow(tag) {
      return tag;
    },
  };
  const workerConn = await NativeConnection.connect({ address: server.address });
  const clientConn = await Connection.connect({ address: server.address });
  const client = new Client({ connection: clientConn });
  const taskQueue = opts.taskQueue ?? uniqueTaskQueue('parking');
  const worker = await Worker.create({
    connection: workerConn,
    taskQueue,
    workflowBundle: await workflowBundle(workflowsPath),
    activities,
  });
  const running = worker.run();
  return {
    server,
    client,
    taskQueue,
    effects,
    stop: async () => {
      worker.shutdown();
      await running;
      await workerConn.close();
      await clientConn.close();
      await server.close();
    },
  };
}

describe('embedded-temporal: idle runs parked as their started event', function () {
  this.timeout(60_000);
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsrv-parking-'));
  });

  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a parked run answers every request as a live one and wakes for its own deadlines', async () => {
    const h = await harness({});
    const { client, taskQueue, server } = h;
    try {
      const stamp = Date.now();
      const ids = Array.from({ length: 20 }, (_, i) => `idle-${stamp}-${i}`);
      const handles = await Promise.all(
        ids.map((workflowId) =>
          client.workflow.start(collectsSignals, { taskQueue, workflowId, args: ['p', 1], startDelay: '1 hour' }),
        ),
      );
      // The history as the live run wrote it, read before any parking.
      const before = History.encode({ events: (await handles[0].fetchHistory()).events ?? [] }).finish();
      const queryLive = await handles[4].query('__stack_trace').then(
        () => 'answered',
        (err: Error) => err.message,
      );
      await waitFor(
        () => ids.every((_, i) => server.store.isParked(handles[i].firstExecutionRunId)),
        10_000,
        'all 20 runs parked',
      );
      assert.equal(server.store.parkedCount, 20);

      // History: byte for byte what the live run had.
      const after = History.encode({ events: (await handles[0].fetchHistory()).events ?? [] }).finish();
      assert.deepEqual(Buffer.from(after), Buffer.from(before));
      assert.equal(server.store.isParked(handles[0].firstExecutionRunId), false, 'a read wakes the run');

      // Describe: running, execution time at the end of the delay.
      const desc = await handles[1].describe();
      assert.equal(desc.status.name, 'RUNNING');
      assert.equal(desc.executionTime?.getTime(), desc.startTime.getTime() + 3600_000);

      // Signal-with-start ends the delay at once and the workflow runs with the signal.
      await waitFor(() => server.store.isParked(handles[2].firstExecutionRunId), 10_000, 'run 2 parked again');
      const again = await client.workflow.signalWithStart(collectsSignals, {
        taskQueue,
        workflowId: ids[2],
        args: ['p', 1],
        signal: durableAddSignal,
        signalArgs: ['paid'],
      });
      assert.equal(again.signaledRunId, handles[2].firstExecutionRunId);
      assert.equal(await handles[2].result(), 'done p:paid');

      // Terminate.
      await handles[3].terminate('expired by test');
      assert.equal((await handles[3].describe()).status.name, 'TERMINATED');

      // A query fails the same way on a parked run as on a live one (no first workflow task yet).
      await waitFor(() => server.store.isParked(handles[4].firstExecutionRunId), 10_000, 'run 4 parked again');
      const queryParked = await handles[4].query('__stack_trace').then(
        () => 'answered',
        (err: Error) => err.message,
      );
      assert.equal(queryParked, queryLive);

      // Its own delay ending wakes it with nobody asking: the activity runs.
      const shortId = `short-${stamp}`;
      const short = await client.workflow.start(collectsSignals, {
        taskQueue,
        workflowId: shortId,
        args: ['short', 0],
        startDelay: '1500 ms',
      });
      await waitFor(
        () => server.store.isParked(short.firstExecutionRunId),
        1_400,
        'the short-delay run parked before its delay ends',
      );
      await waitFor(() => h.effects.includes('short:'), 10_000, 'the short-delay workflow ran its activity');
      assert.equal(await short.result(), 'done short:');
      const events = (await short.fetchHistory()).events ?? [];
      assert.deepEqual(
        events.slice(0, 2).map((e) => e.eventType),
        [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED],
      );

      // Its run timeout fires while parked.
      const timeoutId = `timeout-${stamp}`;
      const timesOut = await client.workflow.start(collectsSignals, {
        taskQueue,
        workflowId: timeoutId,
        args: ['t', 0],
        startDelay: '1 hour',
        workflowRunTimeout: '1500 ms',
      });
      await waitFor(() => server.store.isParked(timesOut.firstExecutionRunId), 1_400, 'the run-timeout run parked');
      await waitFor(() => !server.store.isParked(timesOut.firstExecutionRunId), 10_000, 'woken by its run timeout');
      await assert.rejects(timesOut.result(), (err: unknown) => err instanceof WorkflowFailedError);
      assert.equal((await timesOut.describe()).status.name, 'TIMED_OUT');

      // Visibility sees parked runs (and does not lose them); a count does not wake them.
      const stillParked = server.store.parkedCount;
      assert.ok(stillParked >= 10, `most idle runs parked again (${stillParked})`);
      const counted = await client.workflow.count(`TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`);
      assert.equal(counted.count, 18);
      assert.equal(server.store.parkedCount, stillParked);
      const listed: string[] = [];
      for await (const w of client.workflow.list({
        query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
      }))
        listed.push(w.workflowId);
      const stillIdle = ids.filter((_, i) => i !== 2 && i !== 3);
      assert.deepEqual(listed.sort(), stillIdle.sort());
      for (const i of [5, 6, 7]) {
        const d = await handles[i].describe();
        assert.equal(d.status.name, 'RUNNING');
      }
      assert.equal(h.effects.filter((e) => e.startsWith('p:')).length, 1, 'only the signalled idle run ran');
    } finally {
      await h.stop();
    }
  });

  it('durable: parked runs are parked again at a restart and finish after it', async () => {
    const dbFilename = path.join(dir, 'parked.db');
    const taskQueue = uniqueTaskQueue('parking-durable');
    let h = await harness({ dbFilename, taskQueue });
    const stamp = Date.now();
    const ids = Array.from({ length: 10 }, (_, i) => `durable-idle-${stamp}-${i}`);
    try {
      const handles = await Promise.all(
        ids.map((workflowId) =>
          h.client.workflow.start(collectsSignals, { taskQueue, workflowId, args: ['d', 1], startDelay: '1 hour' }),
        ),
      );
      await waitFor(() => handles.every((x) => h.server.store.isParked(x.firstExecutionRunId)), 10_000, 'all parked');
      // Durable: a parked run keeps only where the journal holds its started event.
      assert.deepEqual(
        handles.map((x) => h.server.store.parkedIn(x.firstExecutionRunId)),
        handles.map(() => 'journal'),
      );
      // Woken from the file, the history is what it was.
      const hist = (await handles[1].fetchHistory()).events ?? [];
      assert.equal(hist.length, 1);
      assert.equal(hist[0].workflowExecutionStartedEventAttributes?.workflowType?.name, 'collectsSignals');
    } finally {
      await h.stop();
    }
    h = await harness({ dbFilename, taskQueue });
    try {
      // Restored straight into the parked form, before any sweep, reading from the journal.
      assert.equal(h.server.store.parkedCount, 10);
      const runIds = await Promise.all(ids.map(async (id) => (await h.client.workflow.getHandle(id).describe()).runId));
      assert.equal(h.server.store.parkedCount, 0, 'describe woke every run');
      await waitFor(() => h.server.store.parkedCount === 10, 10_000, 'parked again');
      assert.deepEqual(
        runIds.map((r) => h.server.store.parkedIn(r)),
        runIds.map(() => 'journal'),
      );
      const woken = await h.client.workflow.signalWithStart(collectsSignals, {
        taskQueue,
        workflowId: ids[0],
        args: ['d', 1],
        signal: durableAddSignal,
        signalArgs: ['after restart'],
      });
      assert.equal(await h.client.workflow.getHandle(ids[0], woken.signaledRunId).result(), 'done d:after restart');
      assert.equal(h.server.store.parkedCount, 9);
    } finally {
      await h.stop();
    }
  });

  for (const durable of [false, true]) {
    it(`${durable ? 'durable' : 'in memory'}: a run waiting on a timer or a signal after its tasks is parked, and wakes for either`, async () => {
      const h = await harness({ dbFilename: durable ? path.join(dir, `after-tasks-${Date.now()}.db`) : undefined });
      const { client, taskQueue, server } = h;
      try {
        const stamp = Date.now();
        const waits = await client.workflow.start(effectThenWaits, {
          taskQueue,
          workflowId: `waits-${stamp}`,
          args: ['w', 3_600_000],
        });
        const timed = await client.workflow.start(effectThenWaits, {
          taskQueue,
          workflowId: `timed-${stamp}`,
          args: ['t', 1_500],
        });
        await waitFor(
          () => h.effects.includes('w:first') && h.effects.includes('t:first'),
          10_000,
          'the first activities ran',
        );
        await waitFor(() => server.store.isParked(waits.firstExecutionRunId), 10_000, 'the waiting run parked');
        await waitFor(
          () => server.store.isParked(timed.firstExecutionRunId),
          1_400,
          'the timed run parked before its timer fires',
        );
        // Durable: only where the journal holds its history (several commits' records).
        assert.equal(server.store.parkedIn(waits.firstExecutionRunId), durable ? 'journal' : 'memory');

        // Its history, woken by the read, is the one it had: started, tasks, the activity, the timer.
        const events = (await waits.fetchHistory()).events ?? [];
        assert.equal(server.store.isParked(waits.firstExecutionRunId), false, 'a read wakes the run');
        const types = events.map((e) => e.eventType);
        assert.ok(
          types.includes(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) &&
            types.at(-1) === EventType.EVENT_TYPE_TIMER_STARTED,
          `history: ${types.join(',')}`,
        );
        await waitFor(() => server.store.isParked(waits.firstExecutionRunId), 10_000, 'parked again');
        const again = History.encode({ events: (await waits.fetchHistory()).events ?? [] }).finish();
        assert.deepEqual(Buffer.from(again), Buffer.from(History.encode({ events }).finish()));

        // A query wakes it and the worker answers it.
        await waitFor(() => server.store.isParked(waits.firstExecutionRunId), 10_000, 'parked again');
        const stack = await waits.query<string>('__stack_trace');
        assert.match(stack, /effectThenWaits|condition/);

        // Its own timer wakes it with nobody asking (no result long poll either); the signal wakes the other.
        await waitFor(
          () => h.effects.includes('t:timer'),
          10_000,
          'the timed run woke for its timer and ran its activity',
        );
        assert.equal(await timed.result(), 'done t:timer');
        await waitFor(() => server.store.isParked(waits.firstExecutionRunId), 10_000, 'parked again');
        await waits.signal(durableAddSignal, 'paid');
        assert.equal(await waits.result(), 'done w:paid');
        // Each activity ran once: waking replays history, it does not run the workflow again.
        assert.deepEqual(h.effects.filter((e) => e.startsWith('w:') || e.startsWith('t:')).sort(), [
          't:first',
          't:timer',
          'w:first',
          'w:paid',
        ]);
        const timerFired = ((await timed.fetchHistory()).events ?? []).filter(
          (e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED,
        );
        assert.equal(timerFired.length, 1);
        if (durable) {
          // Closed, the runs are parked for their retention: read back as they were, and closed.
          const closedHistory = History.encode({ events: (await waits.fetchHistory()).events ?? [] }).finish();
          await waitFor(
            () => server.store.isParked(waits.firstExecutionRunId) && server.store.isParked(timed.firstExecutionRunId),
            10_000,
            'the closed runs parked',
          );
          assert.equal(server.store.parkedIn(waits.firstExecutionRunId), 'journal');
          const counted = await client.workflow.count(
            `WorkflowId = '${waits.workflowId}' AND ExecutionStatus = 'Completed'`,
          );
          assert.equal(counted.count, 1);
          assert.equal(server.store.isParked(waits.firstExecutionRunId), true, 'a count does not wake it');
          assert.deepEqual(
            Buffer.from(History.encode({ events: (await waits.fetchHistory()).events ?? [] }).finish()),
            Buffer.from(closedHistory),
          );
          assert.equal((await timed.describe()).status.name, 'COMPLETED');
          assert.equal(await timed.result(), 'done t:timer');
          await waitFor(() => server.store.isParked(waits.firstExecutionRunId), 10_000, 'parked again after the read');
        }
      } finally {
        await h.stop();
      }
    });
  }

  it('durable: a run parked after its tasks is parked again at a restart and finishes after it', async () => {
    const dbFilename = path.join(dir, 'after-tasks-restart.db');
    const taskQueue = uniqueTaskQueue('parking-after-tasks');
    let h = await harness({ dbFilename, taskQueue });
    const workflowId = `restart-waits-${Date.now()}`;
    let runId: string;
    try {
      const handle = await h.client.workflow.start(effectThenWaits, { taskQueue, workflowId, args: ['r', 3_600_000] });
      runId = handle.firstExecutionRunId;
      await waitFor(() => h.server.store.isParked(runId), 10_000, 'parked');
      assert.equal(h.server.store.parkedIn(runId), 'journal');
    } finally {
      await h.stop();
    }
    h = await harness({ dbFilename, taskQueue });
    try {
      assert.equal(h.server.store.isParked(runId), true, 'restored straight into the parked form');
      await h.client.workflow.getHandle(workflowId).signal(durableAddSignal, 'after restart');
      assert.equal(await h.client.workflow.getHandle(workflowId).result(), 'done r:after restart');
      assert.deepEqual(h.effects, ['r:after restart'], 'the first activity is not run again');
      await waitFor(() => h.server.store.isParked(runId), 10_000, 'the closed run parked');
    } finally {
      await h.stop();
    }
    // A closed run is restored parked too, and reads back closed.
    h = await harness({ dbFilename, taskQueue });
    try {
      assert.equal(h.server.store.isParked(runId), true);
      assert.equal(h.server.store.parkedClosedCount, 1);
      assert.equal(await h.client.workflow.getHandle(workflowId).result(), 'done r:after restart');
    } finally {
      await h.stop();
    }
  });
});
