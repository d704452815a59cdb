/**
 * How `startApi` wires withdrawals, on the real configuration path: the in-process simulator made
 * by `openAcquirer` completes transfers on its own after SIMULATOR_TRANSFER_DELAY_MS
 * (SIMULATOR_AUTO_COMPLETE), and its callback reaches the saga through the API's callback route.
 * The withdrawal sandbox exists only while the acquirer is the simulator.
 *
 * On the dev server: nothing here waits on a timer, and a whole API's reconcilers and webhook
 * dispatcher start runs for other suites' rows, which on the time-skipping server would hold its
 * clock (docs/testing.md "One Temporal server of each kind per run").
 */
import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { openAcquirer, type AcquirerHandle } from '../../src/acquirer';
import { startApi, type RunningApi } from '../../src/runtime/processes';
import { createActivities } from '../../src/runtime/composition';
import * as ledger from '../../src/services/ledger/ledger';
import { getTestDb } from '../support/db';
import { devEnv, terminateRunning, uniqueTaskQueue, workflowBundle } from '../support/temporal';
import { startApi as startTestApi, TEST_CONFIG, type TestApi } from '../support/api';
import { fundedMerchant, DEST, type WithdrawBody } from '../support/withdrawals';
import { eventually } from '../support/charges';

describe('withdrawals wiring in startApi', function () {
  this.timeout(120_000);
  const logger = createLogger({ level: 'silent' });
  const taskQueue = uniqueTaskQueue('withdrawals-wiring');
  const handles: AcquirerHandle[] = [];
  const apis: RunningApi[] = [];
  let admin: TestApi;

  const config = (extra: Record<string, string>) =>
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: TEST_CONFIG.JWT_SECRET,
      API_KEY_PEPPER: TEST_CONFIG.API_KEY_PEPPER,
      ACQUIRER_CALLBACK_SECRET: 'withdrawals-wiring-secret',
      TEMPORAL_SEARCH_ATTRIBUTES: 'false',
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...extra,
    });

  before(async () => {
    admin = await startTestApi();
  });
  after(async () => {
    for (const api of apis) await api.stop();
    // The reconcilers startApi runs may have started sagas here that no worker polls any more.
    await terminateRunning((await devEnv()).client, taskQueue);
    for (const h of handles) await h.close();
  });

  it('auto-completes a withdrawal after SIMULATOR_TRANSFER_DELAY_MS through the real callback path', async () => {
    const { knex } = await getTestDb();
    const env = await devEnv();
    const cfg = config({ SIMULATOR_TRANSFER_DELAY_MS: '50', SIMULATOR_AUTO_COMPLETE: 'true' });
    const acquirer = await openAcquirer(cfg);
    handles.push(acquirer);
    assert.ok(acquirer.sandbox, 'ACQUIRER_URL unset: the embedded simulator');
    const api = await startApi({ config: cfg, logger, knex, temporalAddress: env.address, acquirer });
    apis.push(api);
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(require.resolve('../../workflows')),
      activities: createActivities({ knex, logger, acquirer: acquirer.acquirer }),
    });
    const m = await fundedMerchant(admin, 5_000);
    await worker.runUntil(async () => {
      const res = await fetch(`${api.url}/v1/merchants/me/withdrawals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${m.token}` },
        body: JSON.stringify({ amount: 1_500, ...DEST }),
      });
      assert.equal(res.status, 201);
      const body = (await res.json()) as WithdrawBody;
      assert.deepEqual(body.balance, { available: 3_500, pending: 0, blocked: 0, total: 3_500 });
      await eventually(async () => {
        const row = await knex('withdrawals').where({ id: body.withdraw.id }).first('status');
        return row?.status === 'COMPLETED' ? true : undefined;
      }, 'the simulator to complete the transfer on its own');
    });
    assert.equal((await ledger.getAccounts(knex, m.merchantId)).in_transit, 0);
    // The sandbox routes are mounted (the guard answers first).
    assert.equal((await fetch(`${api.url}/v1/sandbox/withdrawals/wd_x/complete`, { method: 'POST' })).status, 401);
  });

  it('mounts no withdrawal sandbox when the acquirer is external', async () => {
    const { knex } = await getTestDb();
    const env = await devEnv();
    const sim = await openAcquirer(config({ SIMULATOR_AUTO_COMPLETE: 'false' }));
    handles.push(sim);
    const cfg = config({ ACQUIRER_URL: sim.url });
    const api = await startApi({
      config: cfg,
      logger,
      knex,
      temporalAddress: env.address,
      acquirer: await openAcquirer(cfg),
    });
    apis.push(api);
    assert.equal((await fetch(`${api.url}/v1/sandbox/withdrawals/wd_x/complete`, { method: 'POST' })).status, 404);
    assert.equal((await fetch(`${api.url}/v1/merchants/me/withdrawals`)).status, 401);
  });
});
