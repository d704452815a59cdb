/**
 * The subscriptions stack for tests: on a database of its own, the acquirer simulator (real HTTP,
 * debits played at once, cobr lead bound widened: the dates are the skipped-time workflow's), the
 * API with charge, subscription and callback routes (real HTTP), and a real worker on the
 * time-skipping server.
 */
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { createActivities, createPaymentServices, createWorkflowClients } from '../../src/runtime/composition';
import type { SubscriptionsService } from '../../src/services/subscriptions/subscriptions';
import { chargeRoutes } from '../../src/http/routes/charges';
import { subscriptionRoutes } from '../../src/http/routes/subscriptions';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { createLogger } from '../../src/lib/logger';
import { isolatedTestDb, type TestDb } from './db';
import { startApi, type TestApi } from './api';
import { testEnv, uniqueTaskQueue, workflowBundle } from './temporal';
import { onRunEnd } from './lifecycle';

const CALLBACK_SECRET = 'test-subscriptions-callback-secret';
const CLIENT = { clientId: 'pixflow-test', clientSecret: 'pixflow-test-secret' };

export interface SubscriptionsStack {
  db: TestDb;
  api: TestApi;
  simulator: RunningSimulator;
  env: TestWorkflowEnvironment;
  taskQueue: string;
  subscriptions: SubscriptionsService;
}

export async function subscriptionsStack(name: string): Promise<SubscriptionsStack> {
  const db = await isolatedTestDb(name);
  const { knex } = db;
  const env = await testEnv();
  const logger = createLogger({ level: (process.env.TEST_LOG_LEVEL as 'info' | undefined) ?? 'silent' });
  const simulator = await startAcquirerSimulator({
    callbackSecret: CALLBACK_SECRET,
    ...CLIENT,
    autoComplete: false,
    recurrence: { autoDebit: true, debitDelayMs: 0, cobrLeadDays: { min: 2, max: 1_000 } },
  });
  onRunEnd(() => simulator.close());
  const acquirer = new HttpAcquirer({ baseUrl: simulator.url, ...CLIENT, timeoutMs: 5_000 });
  const taskQueue = uniqueTaskQueue('subscriptions');
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: path.join(os.tmpdir(), 'pixflow-subscriptions-test'),
    JWT_SECRET: crypto.randomBytes(32).toString('hex'),
    API_KEY_PEPPER: crypto.randomBytes(32).toString('hex'),
    ACQUIRER_CALLBACK_SECRET: CALLBACK_SECRET,
    TEMPORAL_TASK_QUEUE: taskQueue,
  });
  const services = createPaymentServices({
    knex,
    config,
    logger,
    acquirer: { acquirer, url: simulator.url, close: () => Promise.resolve() },
    workflows: createWorkflowClients(env.client, config),
  });
  const subscriptions = services.subscriptions;
  const api = await startApi({
    db,
    deps: {
      routes: [
        chargeRoutes(services.charges),
        subscriptionRoutes(subscriptions),
        acquirerCallbackRoutes({ secret: CALLBACK_SECRET, callbacks: services.callbacks }),
      ],
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
  return {
    db,
    api,
    simulator,
    env,
    taskQueue,
    subscriptions,
  };
}
