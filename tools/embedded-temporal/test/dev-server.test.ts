/**
 * The launcher in the Temporal CLI's dev-server shape (`server start-dev ...`), as
 * `TestWorkflowEnvironment.createLocal` spawns it: real time, offline, optionally durable.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { TEST_SERVER_LAUNCHER, uniqueTaskQueue, workflowBundle } from '../src/testing';
import { parseArgs } from '../src/main';
import { makeActivities, workflowsPath } from './support';
import { sleepThenNow, threeActivities } from './workflows';

describe('embedded-temporal: dev-server shape (createLocal)', function () {
  this.timeout(60_000);

  it('runs a workflow with a real-time timer under TestWorkflowEnvironment.createLocal', async () => {
    const bundle = await workflowBundle(workflowsPath);
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        namespace: 'dev-local',
        executable: { type: 'existing-path', path: TEST_SERVER_LAUNCHER },
        // Registered as the CLI does: a filter on it is valid before any run sets it.
        extraArgs: ['--search-attribute', 'MerchantId=Keyword'],
      },
    });
    try {
      assert.equal(env.supportsTimeSkipping, false);
      assert.equal((await env.client.workflow.count(`MerchantId = 'none-yet'`)).count, 0);
      const taskQueue = uniqueTaskQueue('dev');
      const worker = await Worker.create({
        connection: env.nativeConnection,
        namespace: 'dev-local',
        taskQueue,
        workflowBundle: bundle,
        activities: makeActivities(),
      });
      const wall0 = Date.now();
      const [now, doubled] = await worker.runUntil(async () => [
        await env.client.workflow.execute(sleepThenNow, {
          taskQueue,
          workflowId: `dev-sleep-${Date.now()}`,
          args: [1200],
        }),
        await env.client.workflow.execute(threeActivities, {
          taskQueue,
          workflowId: `dev-acts-${Date.now()}`,
          args: [1],
        }),
      ]);
      assert.ok(Date.now() - wall0 >= 1200, 'a 1.2 s timer takes 1.2 s of real time (no time skipping)');
      assert.ok(Math.abs(now - Date.now()) < 5000, 'workflow time is wall-clock time');
      assert.equal(doubled, 8);
    } finally {
      await env.teardown();
    }
  });

  it('keeps workflows in --db-filename across two createLocal environments', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsrv-dev-'));
    const dbFilename = path.join(dir, 'dev.db');
    const server = { executable: { type: 'existing-path' as const, path: TEST_SERVER_LAUNCHER }, dbFilename };
    const workflowId = `dev-db-${Date.now()}`;
    try {
      const env1 = await TestWorkflowEnvironment.createLocal({ server });
      try {
        await env1.client.workflow.start(sleepThenNow, {
          taskQueue: uniqueTaskQueue('dev-db'),
          workflowId,
          args: [60_000],
        });
      } finally {
        await env1.teardown();
      }
      const env2 = await TestWorkflowEnvironment.createLocal({ server });
      try {
        const desc = await env2.client.workflow.getHandle(workflowId).describe();
        assert.equal(desc.status.name, 'RUNNING');
        await env2.client.workflow.getHandle(workflowId).terminate('done');
      } finally {
        await env2.teardown();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('parses the CLI dev-server arguments and collects unknown ones into one warning', () => {
    const opts = parseArgs([
      'server',
      'start-dev',
      '--port',
      '7299',
      '--namespace',
      'ns1',
      '--ip',
      '0.0.0.0',
      '--db-filename',
      '/tmp/x.db',
      '--headless',
      '--ui-port',
      '8233',
      '--log-format',
      'json',
      '--log-level',
      'warn',
      '--dynamic-config-value',
      'frontend.enableUpdateWorkflowExecution=true',
      '--bogus',
      'v',
      '--other',
      '--search-attribute',
      'MerchantId=Keyword',
      '--search-attribute=Amount=int',
    ]);
    assert.deepEqual(opts.searchAttributes, { MerchantId: 'Keyword', Amount: 'Int' });
    assert.equal(opts.port, 7299);
    assert.equal(opts.host, '0.0.0.0');
    assert.deepEqual(opts.namespaces, ['ns1']);
    assert.equal(opts.dbFilename, '/tmp/x.db');
    assert.equal(opts.timeSkipping, false);
    assert.equal(opts.warnings.length, 1);
    assert.match(opts.warnings[0], /--bogus v --other/);
  });
});
