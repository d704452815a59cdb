/**
 * Standalone mode (what `npm start` embeds): real time, info logs of workflow start/close, clean
 * exit on SIGTERM; and the programmatic startServer().
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { TEST_SERVER_LAUNCHER, uniqueTaskQueue, workflowBundle } from '../src/testing';
import { startServer, type Logger } from '../src/index';
import { makeActivities, waitFor, workflowsPath, freePort } from './support';
import { sleepThenNow, threeActivities } from './workflows';

describe('embedded-temporal: standalone mode', () => {
  it('runs in-process in real time and logs each workflow start and close', async () => {
    const lines: { msg: string; obj: object }[] = [];
    const logger: Logger = {
      info: (obj, msg) => lines.push({ msg, obj }),
      warn: (obj, msg) => lines.push({ msg, obj }),
      error: (obj, msg) => lines.push({ msg, obj }),
    };
    const workflowBundleCode = await workflowBundle(workflowsPath); // also sets up the quiet SDK runtime
    const server = await startServer({ port: 0, timeSkipping: false, logger });
    const connection = await NativeConnection.connect({ address: server.address });
    const clientConn = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection: clientConn });
      const taskQueue = uniqueTaskQueue('standalone');
      const worker = await Worker.create({
        connection,
        taskQueue,
        workflowBundle: workflowBundleCode,
        activities: makeActivities(),
      });
      const wall0 = Date.now();
      const [doubled, now] = await worker.runUntil(async () => [
        await client.workflow.execute(threeActivities, { taskQueue, workflowId: `sa-${Date.now()}`, args: [3] }),
        await client.workflow.execute(sleepThenNow, { taskQueue, workflowId: `sa-sleep-${Date.now()}`, args: [300] }),
      ]);
      assert.equal(doubled, 24);
      assert.ok(Date.now() - wall0 >= 300, 'a 300 ms timer takes real time');
      assert.ok(Math.abs(now - Date.now()) < 5000, 'workflow clock is the wall clock');
      assert.equal(lines.filter((l) => l.msg === 'workflow started').length, 2);
      assert.equal(lines.filter((l) => l.msg === 'workflow closed').length, 2);
    } finally {
      await clientConn.close();
      await connection.close();
      await server.close();
    }
  });

  it('the launcher listens quickly with --port, and exits 0 on SIGTERM', async function () {
    this.timeout(20_000);
    const port = await freePort();
    const child = spawn(TEST_SERVER_LAUNCHER, ['--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(
        () =>
          new Promise<boolean>((resolve) => {
            const s = net.connect(port, '127.0.0.1');
            s.on('connect', () => {
              s.destroy();
              resolve(true);
            });
            s.on('error', () => resolve(false));
          }),
        10_000,
        'launcher listening',
      );
      const conn = await Connection.connect({ address: `127.0.0.1:${port}` });
      const info = await conn.workflowService.getSystemInfo({});
      assert.ok(info.serverVersion);
      await conn.close();
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.match(stderr, /listening/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
