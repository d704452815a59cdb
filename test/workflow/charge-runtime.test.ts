/**
 * How `startApi` wires charges: the sandbox exists only while the acquirer is the in-process
 * simulator; the callback routes always; the simulator calls back the API's own URL once it listens.
 *
 * On the dev server: nothing here waits on a timer, and a whole API's reconcilers and webhook
 * dispatcher start runs for other suites' rows, which on the time-skipping server would hold its
 * clock (docs/testing.md "One Temporal server of each kind per run").
 */
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { startApi, type RunningApi } from '../../src/runtime/processes';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import { sandboxControlOf } from '../../src/acquirer/sandbox-control';
import { getTestDb } from '../support/db';
import { devEnv, terminateRunning, uniqueTaskQueue } from '../support/temporal';
import { newTxid } from '../../src/pix';

describe('charges wiring in startApi', function () {
  this.timeout(60_000);
  const logger = createLogger({ level: 'silent' });
  const client = { clientId: 'pixflow-wiring', clientSecret: 'pixflow-wiring-secret' };
  let simulator: RunningSimulator;
  const running: RunningApi[] = [];
  // The reconcilers startApi runs start workflows here that no worker polls: removed in after().
  const taskQueue = uniqueTaskQueue('charges-wiring');

  const config = (extra: Record<string, string>) =>
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: 'wiring-jwt-secret-0123456789abcdef0123',
      API_KEY_PEPPER: 'wiring-pepper-0123456789abcdef',
      ACQUIRER_CALLBACK_SECRET: 'wiring-callback-secret',
      TEMPORAL_SEARCH_ATTRIBUTES: 'false',
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...extra,
    });

  before(async () => {
    simulator = await startAcquirerSimulator({
      callbackSecret: 'wiring-callback-secret',
      ...client,
      autoComplete: false,
    });
  });
  after(async () => {
    for (const api of running) await api.stop();
    await terminateRunning((await devEnv()).client, taskQueue);
    await simulator.close();
    // startApi's reconcilers start workflows (charges, PIX key registrations, infractions) on the
    // configured queue, which no worker polls here: ended so that no run outlives the suite.
    await terminateRunning((await devEnv()).client, config({}).TEMPORAL_TASK_QUEUE);
  });

  async function start(withSimulator: boolean, extra: Record<string, string> = {}): Promise<RunningApi> {
    const { knex } = await getTestDb();
    const env = await devEnv();
    const api = await startApi({
      config: config({ ...(withSimulator ? {} : { ACQUIRER_URL: simulator.url }), ...extra }),
      logger,
      knex,
      temporalAddress: env.address,
      acquirer: {
        acquirer: new HttpAcquirer({ baseUrl: simulator.url, ...client, timeoutMs: 2_000 }),
        url: simulator.url,
        close: () => Promise.resolve(),
        ...(withSimulator ? { sandbox: sandboxControlOf(simulator.control) } : {}),
      },
    });
    running.push(api);
    return api;
  }

  const post = (api: RunningApi, path: string) =>
    fetch(`${api.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

  it('mounts the sandbox only when the acquirer is the simulator; callbacks always', async () => {
    const real = await start(false);
    assert.equal((await post(real, '/v1/sandbox/charges/ch_x/pay')).status, 404);
    assert.equal((await post(real, '/v1/acquirer/pix')).status, 401);

    const sandboxed = await start(true);
    // Mounted: the guard answers before anything else.
    assert.equal((await post(sandboxed, '/v1/sandbox/charges/ch_x/pay')).status, 401);
    assert.equal((await post(sandboxed, '/v1/acquirer/pix')).status, 401);
  });

  it("points the simulator's signed callbacks at the API's own URL once it listens", async () => {
    await start(true);
    const { knex } = await getTestDb();
    const acquirer = new HttpAcquirer({ baseUrl: simulator.url, ...client, timeoutMs: 2_000 });
    const txid = newTxid();
    await acquirer.createCob({ txid, amount: 250, expiresIn: 600, key: 'loja@example.com' });
    const { endToEndId } = await simulator.control.payCob(txid);
    await simulator.control.callbacks.idle();
    // No charge has that txid: the verified callback is kept in the inbox for an operator.
    const row = await knex('acquirer_callbacks').where({ kind: 'pix', external_id: endToEndId }).first();
    assert.ok(row, 'the callback reached the API and was kept');
    assert.equal(row.payload.txid, txid);
  });
});
