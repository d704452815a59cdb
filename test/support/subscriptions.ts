/**
 * The subscriptions stack for tests: on a database of its own, the acquirer simulator (real HTTP,
 * debits played at once, cobr lead bound widened: the dates are the skipped-time workflow's), the
 * API with charge, subscription, infraction, sandbox and callback routes (real HTTP), and a real worker on the
 * time-skipping server that a test may restart.
 */
import assert from 'node:assert/strict';
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
import { subscriptionSandboxRoutes } from '../../src/http/routes/sandbox/subscriptions';
import { infractionSandboxRoutes } from '../../src/http/routes/sandbox/infractions';
import { infractionRoutes } from '../../src/http/routes/infractions';
import { sandboxRoutes } from '../../src/http/routes/sandbox/charges';
import { sandboxControlOf } from '../../src/acquirer/sandbox-control';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { createLogger } from '../../src/lib/logger';
import { isolatedTestDb, type TestDb } from './db';
import { startApi, type TestApi } from './api';
import { runProjectWorker, testEnv, uniqueTaskQueue } from './temporal';
import { onRunEnd } from './lifecycle';

const CALLBACK_SECRET = 'test-subscriptions-callback-secret';
/** The simulator's OAuth client, for a test that asks the acquirer itself. */
export const SIMULATOR_CLIENT = { clientId: 'pixflow-test', clientSecret: 'pixflow-test-secret' };
const CLIENT = SIMULATOR_CLIENT;

export interface SubscriptionsStack {
  db: TestDb;
  api: TestApi;
  simulator: RunningSimulator;
  env: TestWorkflowEnvironment;
  taskQueue: string;
  subscriptions: SubscriptionsService;
  /**
   * Stops the worker (its tasks in flight finish first) and starts a new one on the same queue, as
   * a deploy does (a worker without sticky queue: test/support/temporal.ts `runProjectWorker`).
   */
  restartWorker(): Promise<void>;
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
    // No upper lead bound: the simulator checks a cobr's date against its real clock, and the shared
    // time-skipping server's clock is ahead of it by all that earlier suites of the run skipped.
    recurrence: { autoDebit: true, debitDelayMs: 0, cobrLeadDays: { min: 2, max: Number.MAX_SAFE_INTEGER } },
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
    acquirer: {
      acquirer,
      url: simulator.url,
      close: () => Promise.resolve(),
      sandbox: sandboxControlOf(simulator.control),
    },
    workflows: createWorkflowClients(env.client, config),
  });
  const subscriptions = services.subscriptions;
  const sandbox = services.sandbox ?? assert.fail('the stack runs the simulator');
  const api = await startApi({
    db,
    deps: {
      routes: [
        chargeRoutes(services.charges, services.dueDate),
        subscriptionRoutes(subscriptions),
        subscriptionSandboxRoutes(sandbox.subscriptions),
        // Payments and MED on any charge (test/workflow/billing-money.test.ts).
        sandboxRoutes(sandbox.charges),
        infractionRoutes(services.infractions),
        infractionSandboxRoutes(sandbox.infractions),
        acquirerCallbackRoutes({ secret: CALLBACK_SECRET, callbacks: services.callbacks }),
      ],
    },
  });
  simulator.control.setCallbackBaseUrl(api.baseUrl);

  const worker = await runProjectWorker(env, taskQueue, createActivities({ knex, logger, acquirer }), {
    restartable: true,
  });
  return {
    db,
    api,
    simulator,
    env,
    taskQueue,
    subscriptions,
    restartWorker: () => worker.restart(),
  };
}

const DAY_MS = 86_400_000;

/**
 * Advances the time-skipping clock to noon UTC of `date` plus `days`, a day at a time: one sleep over
 * months holds one call open while the server runs every timer on the way, and the server gives up on
 * it (RESOURCE_EXHAUSTED). After each step `onDay` runs (a worker restart, say), then the simulator's
 * callbacks of that step are answered and `idle` waits, so no signal-with-start overlaps a sleep.
 */
export async function sleepTo(
  s: SubscriptionsStack,
  date: string,
  days: number,
  opts: { onDay?: (day: string) => Promise<void>; idle?: () => Promise<void> } = {},
): Promise<void> {
  const target = Date.parse(`${date}T12:00:00Z`) + days * DAY_MS;
  for (let now = await s.env.currentTimeMs(); now < target; now = await s.env.currentTimeMs()) {
    await s.env.sleep(Math.min(target - now, DAY_MS));
    await opts.onDay?.(new Date(await s.env.currentTimeMs()).toISOString().slice(0, 10));
    await s.simulator.control.callbacks.idle();
    await opts.idle?.();
  }
}
