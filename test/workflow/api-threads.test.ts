/**
 * `startApi` with its work beside the event loop (docs/performance.md "Where a charge's time goes"): the charge
 * workflow client on a thread of its own (TEMPORAL_CLIENT_THREAD) and the embedded simulator on
 * another (SIMULATOR_THREAD). A charge made through it has its durable workflow at once, and the
 * sandbox payment — a message to the simulator's thread, its signed callback, signal-with-start
 * through the client thread — takes it to PAID; a refusal of the simulator is still told apart.
 *
 * On the dev server: nothing here waits on a timer, and a whole API's reconcilers and webhook
 * dispatcher start runs for other suites' rows, which on the time-skipping server would hold its
 * clock (docs/testing.md "One Temporal server of each kind per run").
 */
import assert from 'node:assert/strict';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { openAcquirer, type AcquirerHandle } from '../../src/acquirer';
import { isSimulatorRefusal } from '../../src/acquirer/sandbox-control';
import { startApi, type RunningApi } from '../../src/runtime/processes';
import { createActivities } from '../../src/runtime/composition';
import { chargeWorkflowId } from '../../src/temporal/workflow-ids';
import { getTestDb } from '../support/db';
import { devEnv, terminateRunning, uniqueTaskQueue, workflowBundle } from '../support/temporal';
import { startApi as startTestApi, TEST_CONFIG, type TestApi } from '../support/api';
import { eventually, readyMerchant } from '../support/charges';

describe('startApi with the charge workflow client and the simulator on threads, or with a native client', function () {
  this.timeout(120_000);
  const logger = createLogger({ level: 'silent' });
  const taskQueue = uniqueTaskQueue('api-threads');
  let admin: TestApi;
  let acquirer: AcquirerHandle | undefined;
  let api: RunningApi | undefined;

  before(async () => {
    admin = await startTestApi();
  });
  /** The API's configuration for these tests; `env` adds or overrides variables. */
  const apiConfig = (env: Record<string, string>) =>
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: TEST_CONFIG.JWT_SECRET,
      API_KEY_PEPPER: TEST_CONFIG.API_KEY_PEPPER,
      TEMPORAL_SEARCH_ATTRIBUTES: 'false',
      TEMPORAL_TASK_QUEUE: taskQueue,
      // The run's database holds every suite's charges: the reconciler would start a workflow for
      // each one still owing something, on this suite's queue (what it does is shown elsewhere).
      RECONCILER: 'off',
      ...env,
    });
  /** A worker of the test environment running the charge workflow with `handle`'s acquirer. */
  const chargeWorker = async (handle: AcquirerHandle) =>
    Worker.create({
      connection: (await devEnv()).nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(require.resolve('../../workflows')),
      activities: createActivities({ knex: (await getTestDb()).knex, logger, acquirer: handle.acquirer }),
    });
  after(async () => {
    await api?.stop();
    await terminateRunning((await devEnv()).client, taskQueue);
    await acquirer?.close();
  });

  it('creates a charge whose workflow exists at once, and the sandbox payment takes it to PAID', async () => {
    const { knex } = await getTestDb();
    const env = await devEnv();
    const config = apiConfig({
      ACQUIRER_CALLBACK_SECRET: 'api-threads-secret',
      TEMPORAL_CLIENT_THREAD: 'true',
      SIMULATOR_THREAD: 'true',
    });
    acquirer = await openAcquirer(config);
    api = await startApi({ config, logger, knex, temporalAddress: env.address, acquirer });
    const worker = await chargeWorker(acquirer);
    const m = await readyMerchant(admin);
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${api?.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${m.token}` },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    await worker.runUntil(async () => {
      const res = await call('POST', '/v1/charges', { amount: 2_500, description: 'threads', expiresIn: 3600 });
      assert.equal(res.status, 201);
      const { charge } = (await res.json()) as { charge: { id: string; qrCode: string } };
      assert.ok(charge.qrCode);
      const described = await env.client.workflow.getHandle(chargeWorkflowId(charge.id)).describe();
      assert.equal(described.status.name, 'RUNNING');

      assert.equal((await call('POST', `/v1/sandbox/charges/${charge.id}/pay`, {})).status, 202);
      await eventually(async () => {
        const row = await knex('charges').where({ id: charge.id }).first('status');
        return row?.status === 'PAID' ? true : undefined;
      }, 'the payment to reach the charge workflow');
    });
    // A refusal of the simulator crosses the thread by name, so the sandbox still answers it 400.
    const refusal = await acquirer.sandbox?.finishTransfer('tr_unknown', 'complete').catch((err: unknown) => err);
    assert.ok(isSimulatorRefusal(refusal), String(refusal));
  });

  it('by default starts, signals and reads charge workflows through a native (Rust core) client on the main thread', async () => {
    const { knex } = await getTestDb();
    const env = await devEnv();
    const config = apiConfig({ ACQUIRER_CALLBACK_SECRET: 'api-native-secret' });
    assert.equal(config.TEMPORAL_CLIENT_NATIVE, true);
    assert.equal(config.TEMPORAL_CLIENT_THREAD, false);
    const ownAcquirer = await openAcquirer(config);
    const native = await startApi({ config, logger, knex, temporalAddress: env.address, acquirer: ownAcquirer });
    try {
      assert.ok(native.temporal.connection instanceof NativeConnection);
      const worker = await chargeWorker(ownAcquirer);
      const m = await readyMerchant(admin);
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${native.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${m.token}` },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      await worker.runUntil(async () => {
        const created = await Promise.all(
          [1, 2, 3].map(async (i) => {
            const res = await call('POST', '/v1/charges', {
              amount: 1_000 + i,
              description: `native ${i}`,
              expiresIn: 3600,
            });
            assert.equal(res.status, 201);
            return ((await res.json()) as { charge: { id: string } }).charge.id;
          }),
        );
        for (const id of created) {
          assert.equal((await env.client.workflow.getHandle(chargeWorkflowId(id)).describe()).status.name, 'RUNNING');
        }
        // The cancel goes to the workflow by signal-with-start through the same client.
        assert.equal((await call('POST', `/v1/charges/${created[0]}/cancel`)).status, 200);
        await eventually(async () => {
          const row = await knex('charges').where({ id: created[0] }).first('status');
          return row?.status === 'CANCELED' ? true : undefined;
        }, 'the cancel to reach the charge workflow');
      });
    } finally {
      await native.stop();
      await ownAcquirer.close();
    }
  });
});
