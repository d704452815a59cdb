/**
 * The MED and PIX key stack for tests, once per run: its own acquirer simulator (activating keys on
 * its own after a short delay), the API with the charge, callback and sandbox routes and the PIX key
 * registration hook (real HTTP), and a real worker running every workflow on its own task queue of
 * the run's time-skipping environment — wired as src/runtime/processes.ts wires the service.
 */
import { sandboxControlOf } from '../../src/acquirer/sandbox-control';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import { createActivities } from '../../activities';
import { createChargesService } from '../../src/services/charges';
import { chargeWorkflowClient } from '../../src/temporal/charge-workflow-client';
import { infractionWorkflowClient, type InfractionWorkflows } from '../../src/temporal/infraction-workflow-client';
import { pixKeyWorkflowClient, type PixKeyWorkflows } from '../../src/temporal/pix-key-workflow-client';
import { chargeRoutes } from '../../src/http/routes/charges';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { sandboxRoutes } from '../../src/http/routes/sandbox';
import { infractionSandboxRoutes } from '../../src/http/routes/infraction-sandbox';
import { pixKeySandboxRoutes } from '../../src/http/routes/pix-key-sandbox';
import { createLogger } from '../../src/lib/logger';
import { createAcquirerCallbacks } from '../../src/services/acquirer-callbacks';
import { createChargeSandbox } from '../../src/services/charge-sandbox';
import { createInfractionCallbacks } from '../../src/services/infraction-callbacks';
import { createInfractionSandbox } from '../../src/services/infraction-sandbox';
import { createPixKeySandbox } from '../../src/services/pix-key-sandbox';
import { createMedCallbackHandlers } from '../../src/services/med-callback-handlers';
import { createPixKeyCallbacks } from '../../src/services/pix-key-callbacks';
import { createPixKeyRegistration } from '../../src/services/pix-keys';
import { getTestDb } from './db';
import { startApi, type TestApi } from './api';
import { testEnv, uniqueTaskQueue, workflowBundle } from './temporal';
import { onRunEnd } from './lifecycle';

export const MED_CALLBACK_SECRET = 'test-med-callback-secret';
const CLIENT = { clientId: 'pixflow-med-test', clientSecret: 'pixflow-med-test-secret' };
/** How long the simulator takes to activate a registered key. */
export const KEY_ACTIVATION_DELAY_MS = 50;

export interface MedStack {
  api: TestApi;
  simulator: RunningSimulator;
  env: TestWorkflowEnvironment;
  client: Client;
  taskQueue: string;
  infractions: InfractionWorkflows;
  pixKeys: PixKeyWorkflows;
}

let stack: Promise<MedStack> | undefined;
let manualStack: Promise<MedStack> | undefined;

export function medStack(): Promise<MedStack> {
  stack ??= build({ autoComplete: true });
  return stack;
}

/** The same stack whose simulator completes nothing on its own (SIMULATOR_AUTO_COMPLETE=false): keys stay PENDENTE until told. */
export function manualMedStack(): Promise<MedStack> {
  manualStack ??= build({ autoComplete: false });
  return manualStack;
}

async function build(opts: { autoComplete: boolean }): Promise<MedStack> {
  const { knex } = await getTestDb();
  const env = await testEnv();
  const logger = createLogger({ level: (process.env.TEST_LOG_LEVEL as 'info' | undefined) ?? 'silent' });
  const simulator = await startAcquirerSimulator({
    callbackSecret: MED_CALLBACK_SECRET,
    ...CLIENT,
    keyActivationDelayMs: KEY_ACTIVATION_DELAY_MS,
    autoComplete: opts.autoComplete,
    // Transfers are not this stack's subject: they stay PROCESSING unless told.
    transferDelayMs: 3_600_000,
  });
  onRunEnd(() => simulator.close());
  const acquirer = new HttpAcquirer({ baseUrl: simulator.url, ...CLIENT, timeoutMs: 2_000 });
  const taskQueue = uniqueTaskQueue('med');
  const workflows = chargeWorkflowClient(env.client, taskQueue);
  const infractions = infractionWorkflowClient(env.client, taskQueue);
  const pixKeys = pixKeyWorkflowClient(env.client, taskQueue);
  const charges = createChargesService({ knex, config: { CHARGE_LIST_CACHE_MS: 0 }, logger, acquirer, workflows });
  const callbacks = createAcquirerCallbacks({
    knex,
    workflows,
    logger,
    acquirer,
    handlers: createMedCallbackHandlers({
      infractions: createInfractionCallbacks({ knex, workflows: infractions, logger }),
      pixKeys: createPixKeyCallbacks({ registration: createPixKeyRegistration({ knex, acquirer, logger }) }),
    }),
  });
  const api = await startApi({
    deps: {
      routes: [
        chargeRoutes(charges),
        acquirerCallbackRoutes({ secret: MED_CALLBACK_SECRET, callbacks }),
        sandboxRoutes(createChargeSandbox({ charges, simulator: sandboxControlOf(simulator.control) })),
        infractionSandboxRoutes(createInfractionSandbox({ knex, simulator: sandboxControlOf(simulator.control) })),
        pixKeySandboxRoutes(createPixKeySandbox({ knex, simulator: sandboxControlOf(simulator.control) })),
      ],
      onPixKeyCreated: (key) => pixKeys.register({ id: key.id, merchantId: key.merchantId }),
    },
  });
  simulator.control.setCallbackBaseUrl(api.baseUrl);

  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(require.resolve('../../workflows')),
    activities: createActivities({ knex, logger, acquirer }),
  });
  const running = worker.run();
  onRunEnd(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });
  return { api, simulator, env, client: env.client, taskQueue, infractions, pixKeys };
}
