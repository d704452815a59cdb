/**
 * Durable state (`--db-filename`): the server is a real child process (the launcher in its
 * `server start-dev` shape), killed with SIGKILL while workflows wait on timers, signals, a
 * retrying activity and a running activity, then restarted on the same file. The worker and the
 * client stay up across the crash, as they would in production. Every workflow must finish with
 * the right result, and every side effect must have run exactly once.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Context } from '@temporalio/activity';
import protoRoot = require('@temporalio/proto/protos/root');
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { TEST_SERVER_LAUNCHER, uniqueTaskQueue, workflowBundle } from '../src/testing';
import { startServer, silentLogger } from '../src/index';
import { parseJournal } from '../src/persistence/journal';
import { msDuration } from '../src/proto';
import { waitFor, workflowsPath, freePort } from './support';
import {
  durableAddSignal,
  collectsSignals,
  parentOfSleeper,
  sleepsAndContinues,
  retryingEffect,
  slowEffect,
  timerThenEffect,
  type DurableActivities,
} from './workflows';

const EventType = temporal.api.enums.v1.EventType;

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

async function spawnServer(port: number, dbFile: string, log: string[]): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      TEST_SERVER_LAUNCHER,
      'server',
      'start-dev',
      '--port',
      String(port),
      '--ip',
      '127.0.0.1',
      '--namespace',
      'default',
      '--db-filename',
      dbFile,
      '--headless',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (d: Buffer) => log.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => log.push(d.toString()));
  await waitFor(() => canConnect(port), 15_000, 'server listening');
  return child;
}

async function sigkill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

describe('embedded-temporal: durable state across SIGKILL', function () {
  this.timeout(120_000);
  const children: ChildProcess[] = [];
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsrv-durable-'));
  });

  after(async () => {
    for (const c of children) await sigkill(c);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finishes every workflow after a crash and a restart, running no side effect twice', async () => {
    const bundle = await workflowBundle(workflowsPath);
    const port = await freePort();
    const dbFile = path.join(dir, 'crash.db');
    const log: string[] = [];
    children.push(await spawnServer(port, dbFile, log));

    const effects: string[] = [];
    const flakyAttempts: number[] = [];
    let slowStarted = 0;
    const activities: DurableActivities = {
      async sideEffect(tag) {
        effects.push(tag);
        return `done ${tag}`;
      },
      async flaky(tag, okAt) {
        const attempt = Context.current().info.attempt;
        flakyAttempts.push(attempt);
        if (attempt < okAt) throw new Error(`${tag} not yet (attempt ${attempt})`);
        effects.push(tag);
        return `done ${tag} at attempt ${attempt}`;
      },
      async slow(tag, ms) {
        slowStarted++;
        await new Promise((r) => setTimeout(r, ms));
        effects.push(tag);
        return `done ${tag}`;
      },
    };
    const address = `127.0.0.1:${port}`;
    const workerConn = await NativeConnection.connect({ address });
    const clientConn = await Connection.connect({ address });
    const client = new Client({ connection: clientConn });
    const taskQueue = uniqueTaskQueue('durable');
    const worker = await Worker.create({ connection: workerConn, taskQueue, workflowBundle: bundle, activities });
    const running = worker.run();
    try {
      const stamp = Date.now();
      const closedEarly = await client.workflow.execute(timerThenEffect, {
        taskQueue,
        workflowId: `early-${stamp}`,
        args: ['early', 10],
      });
      assert.equal(closedEarly, 'done early');
      const timerStart = Date.now();
      const timer = await client.workflow.start(timerThenEffect, {
        taskQueue,
        workflowId: `timer-${stamp}`,
        args: ['timer', 2500],
      });
      const longTimer = await client.workflow.start(timerThenEffect, {
        taskQueue,
        workflowId: `long-timer-${stamp}`,
        args: ['long', 6000],
      });
      const signals = await client.workflow.start(collectsSignals, {
        taskQueue,
        workflowId: `signals-${stamp}`,
        args: ['sig', 2],
      });
      const retrying = await client.workflow.start(retryingEffect, {
        taskQueue,
        workflowId: `retry-${stamp}`,
        args: ['retry', 3],
      });
      const slow = await client.workflow.start(slowEffect, {
        taskQueue,
        workflowId: `slow-${stamp}`,
        args: ['slow', 1500],
      });
      const parent = await client.workflow.start(parentOfSleeper, {
        taskQueue,
        workflowId: `parent-${stamp}`,
        args: ['child', 3000],
      });
      const chain = await client.workflow.start(sleepsAndContinues, {
        taskQueue,
        workflowId: `chain-${stamp}`,
        args: ['chain', 3, 800],
      });
      await signals.signal(durableAddSignal, 'before');

      // Kill once every workflow is waiting: timers started, the signal seen, the flaky activity
      // in backoff after its first failure, the slow activity running.
      const count = async (h: typeof timer, type: number): Promise<number> =>
        (await h.fetchHistory()).events?.filter((e) => e.eventType === type).length ?? 0;
      await waitFor(
        async () =>
          (await count(timer, EventType.EVENT_TYPE_TIMER_STARTED)) === 1 &&
          (await count(longTimer, EventType.EVENT_TYPE_TIMER_STARTED)) === 1,
        10_000,
        'timers started',
      );
      await waitFor(
        async () => (await count(signals, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)) === 2,
        10_000,
        'signal handled',
      );
      await waitFor(
        async () => (await count(parent, EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED)) === 1,
        10_000,
        'child started',
      );
      await waitFor(() => flakyAttempts.length === 1 && slowStarted === 1, 10_000, 'activities running');
      await sigkill(children[0]);

      // Down until the 2.5 s timer is past due: it must fire at once on restart.
      await waitFor(() => Date.now() > timerStart + 2600, 10_000, 'the short timer past due');
      children.push(await spawnServer(port, dbFile, log));

      await signals.signal(durableAddSignal, 'after');
      const results = await Promise.all([
        timer.result(),
        longTimer.result(),
        signals.result(),
        retrying.result(),
        slow.result(),
        parent.result(),
        chain.result(),
      ]);
      assert.deepEqual(results, [
        'done timer',
        'done long',
        'done sig:before,after',
        'done retry at attempt 3',
        'done slow',
        'parent got: done child',
        'done chain:continued',
      ]);
      assert.deepEqual([...effects].sort(), [
        'chain:continued',
        'child',
        'early',
        'long',
        'retry',
        'sig:before,after',
        'slow',
        'timer',
      ]);
      assert.deepEqual(flakyAttempts, [1, 2, 3], 'attempt numbers continue across the restart, none repeated');
      assert.equal(slowStarted, 1, 'the activity in flight during the crash completed; it was not run again');

      // The run closed before the crash is still there, with its history, and visible.
      const early = client.workflow.getHandle(`early-${stamp}`);
      assert.equal(await early.result(), 'done early');
      const listed: string[] = [];
      for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) listed.push(wf.workflowId);
      // 8 workflows, the child, and the chain's 4 runs in place of 1.
      assert.equal(listed.length, 12);
    } catch (err) {
      throw new Error(`${(err as Error).stack}\nserver output:\n${log.join('')}`, { cause: err });
    } finally {
      worker.shutdown();
      await running;
      await clientConn.close();
      await workerConn.close();
    }
  });

  it('keeps a started workflow task and the events buffered behind it across SIGKILL (raw gRPC)', async () => {
    const port = await freePort();
    const dbFile = path.join(dir, 'raw.db');
    const log: string[] = [];
    children.push(await spawnServer(port, dbFile, log));
    const namespace = 'default';
    const taskQueue = { name: uniqueTaskQueue('raw') };
    const workflowId = `raw-${Date.now()}`;
    let conn = await Connection.connect({ address: `127.0.0.1:${port}` });
    try {
      let svc = conn.workflowService;
      const { runId } = await svc.startWorkflowExecution({
        namespace,
        workflowId,
        workflowType: { name: 'raw' },
        taskQueue,
        requestId: 'r1',
        identity: 'test',
      });
      const t1 = await svc.pollWorkflowTaskQueue({ namespace, taskQueue, identity: 'w' });
      await svc.respondWorkflowTaskCompleted({
        taskToken: t1.taskToken,
        identity: 'w',
        commands: [
          {
            commandType: temporal.api.enums.v1.CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
            scheduleActivityTaskCommandAttributes: {
              activityId: 'a1',
              activityType: { name: 'act' },
              taskQueue,
              startToCloseTimeout: msDuration(30_000),
            },
          },
        ],
      });
      const act = await svc.pollActivityTaskQueue({ namespace, taskQueue, identity: 'w' });
      assert.ok(act.taskToken?.length);
      await svc.signalWorkflowExecution({
        namespace,
        workflowExecution: { workflowId },
        signalName: 's1',
        identity: 'test',
      });
      const t2 = await svc.pollWorkflowTaskQueue({ namespace, taskQueue, identity: 'w' });
      // While that task runs, an activity result and a signal arrive: both are buffered.
      const payload = { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"r"') }] };
      await svc.respondActivityTaskCompleted({ taskToken: act.taskToken, result: payload, identity: 'w' });
      await svc.signalWorkflowExecution({
        namespace,
        workflowExecution: { workflowId },
        signalName: 's2',
        identity: 'test',
      });

      await sigkill(children[children.length - 1]);
      await conn.close();
      children.push(await spawnServer(port, dbFile, log));
      conn = await Connection.connect({ address: `127.0.0.1:${port}` });
      svc = conn.workflowService;

      // The task started before the crash completes with its old token; the buffered events follow.
      await svc.respondWorkflowTaskCompleted({ taskToken: t2.taskToken, identity: 'w', commands: [] });
      const t3 = await svc.pollWorkflowTaskQueue({ namespace, taskQueue, identity: 'w' });
      const events = t3.history?.events ?? [];
      events.forEach((e, i) => assert.equal(Number(e.eventId), i + 1, 'event ids have no gap'));
      const names = events.map((e) => (EventType[e.eventType ?? 0] ?? '').replace('EVENT_TYPE_', ''));
      const tail = names.slice(names.lastIndexOf('WORKFLOW_TASK_COMPLETED'));
      assert.deepEqual(tail, [
        'WORKFLOW_TASK_COMPLETED',
        'ACTIVITY_TASK_STARTED',
        'ACTIVITY_TASK_COMPLETED',
        'WORKFLOW_EXECUTION_SIGNALED',
        'WORKFLOW_TASK_SCHEDULED',
        'WORKFLOW_TASK_STARTED',
      ]);
      const started = events[names.lastIndexOf('ACTIVITY_TASK_STARTED')];
      const completed = events[names.lastIndexOf('ACTIVITY_TASK_COMPLETED')];
      assert.equal(
        Number(completed.activityTaskCompletedEventAttributes?.startedEventId),
        Number(started.eventId),
        'buffered events keep their references',
      );
      assert.equal(names.filter((n) => n === 'WORKFLOW_EXECUTION_SIGNALED').length, 2);
      await svc.respondWorkflowTaskCompleted({
        taskToken: t3.taskToken,
        identity: 'w',
        commands: [
          {
            commandType: temporal.api.enums.v1.CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
            completeWorkflowExecutionCommandAttributes: {},
          },
        ],
      });
      const desc = await svc.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
      assert.equal(
        desc.workflowExecutionInfo?.status,
        temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED,
      );
    } catch (err) {
      throw new Error(`${(err as Error).stack}\nserver output:\n${log.join('')}`, { cause: err });
    } finally {
      await conn.close();
    }
  });

  it('refuses a second server on a journal that another live server owns', async () => {
    const port = await freePort();
    const dbFile = path.join(dir, 'owned.db');
    const owner = await spawnServer(port, dbFile, []);
    children.push(owner);
    await assert.rejects(
      startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename: dbFile }),
      /in use by process/,
    );
    await sigkill(owner);
    // The killed owner's lock is stale: taken over.
    const server = await startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename: dbFile });
    try {
      await assert.rejects(
        startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename: dbFile }),
        /already open in this process/,
      );
    } finally {
      await server.close();
    }
  });

  it('journals whatever random requests do, and starts again on that journal', async () => {
    const dbFile = path.join(dir, 'fuzz.db');
    const root = protoRoot as unknown as { lookupService(name: string): { methods: Record<string, unknown> } };
    const methods = Object.keys(root.lookupService('temporal.api.workflowservice.v1.WorkflowService').methods);
    let server = await startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename: dbFile });
    const client = new grpc.Client(server.address, grpc.credentials.createInsecure());
    const bad: string[] = [];
    try {
      await Promise.all(
        methods.map(async (m) => {
          for (const body of [Buffer.alloc(0), randomBytes(7), randomBytes(64), randomBytes(300)]) {
            const code = await new Promise<grpc.status>((resolve) => {
              client.makeUnaryRequest(
                `/temporal.api.workflowservice.v1.WorkflowService/${m}`,
                (b: Buffer) => b,
                (b: Buffer) => b,
                body,
                new grpc.Metadata(),
                { deadline: Date.now() + 3000 },
                (err) => resolve(err ? err.code : grpc.status.OK),
              );
            });
            if (code === grpc.status.INTERNAL || code === grpc.status.UNKNOWN) bad.push(`${m}: ${grpc.status[code]}`);
          }
        }),
      );
    } finally {
      client.close();
      await server.close();
    }
    assert.deepEqual(bad, []);
    server = await startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename: dbFile });
    await server.close();
  });

  it('keeps state across clean restarts in-process and cuts off a torn last commit', async () => {
    const bundle = await workflowBundle(workflowsPath);
    const dbFile = path.join(dir, 'inproc.db');
    const taskQueue = uniqueTaskQueue('durable-inproc');
    let server = await startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename: dbFile });
    const conn1 = await Connection.connect({ address: server.address });
    const client1 = new Client({ connection: conn1 });
    const h = await client1.workflow.start(collectsSignals, {
      taskQueue,
      workflowId: `inproc-${Date.now()}`,
      args: ['x', 1],
    });
    // A second start is a second commit (the damage test below needs one after the first).
    await client1.workflow.start(collectsSignals, {
      taskQueue: uniqueTaskQueue('nobody'),
      workflowId: `inproc-other-${Date.now()}`,
      args: ['z', 1],
    });
    await conn1.close();
    await server.close();
    // A half-written commit at the end (a crash in the middle of a write) is dropped at open.
    fs.appendFileSync(dbFile, Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 5]));
    const before = fs.statSync(dbFile).size;
    server = await startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename: dbFile });
    assert.equal(fs.statSync(dbFile).size, before - 9);
    const parsed = parseJournal(fs.readFileSync(dbFile));
    assert.equal(parsed.state.runs.length, 2);
    assert.ok(parsed.frames >= 2);
    // Damage before the end is not a torn write: the server refuses the file instead of dropping commits.
    const damaged = path.join(dir, 'damaged.db');
    const bytes = fs.readFileSync(dbFile);
    bytes[12] ^= 0xff; // inside the first commit
    fs.writeFileSync(damaged, bytes);
    for (let i = 0; i < 2; i++) {
      // Twice: a refused start leaves no lock behind.
      await assert.rejects(
        startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename: damaged }),
        /corrupt/,
      );
    }
    assert.equal(fs.existsSync(`${damaged}.lock`), false);
    const conn2 = await Connection.connect({ address: server.address });
    const workerConn = await NativeConnection.connect({ address: server.address });
    try {
      const client = new Client({ connection: conn2 });
      const handle = client.workflow.getHandle(h.workflowId);
      const worker = await Worker.create({
        connection: workerConn,
        taskQueue,
        workflowBundle: bundle,
        activities: {
          sideEffect: async (tag: string) => `done ${tag}`,
        },
      });
      const result = await worker.runUntil(async () => {
        await handle.signal(durableAddSignal, 'y');
        return handle.result();
      });
      assert.equal(result, 'done x:y');
    } finally {
      await conn2.close();
      await workerConn.close();
      await server.close();
    }
  });
});
