/**
 * The charges stack for tests, once per run: the acquirer simulator (real HTTP), the API with
 * charge, callback and sandbox routes (real HTTP), and a real Temporal worker running the
 * project's workflows and activities on the time-skipping test environment.
 */
import { sandboxControlOf } from '../../src/acquirer/sandbox-control';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import { createActivities } from '../../src/runtime/composition';
import { createChargesService } from '../../src/services/charges/charges';
import { createDueDateCharges } from '../../src/services/charges/due-date';
import { createChargeBatches } from '../../src/services/charges/batches';
import { chargeWorkflowClient } from '../../src/temporal/clients/charge';
import { webhookDeliveryWorkflowClient } from '../../src/temporal/clients/webhook';
import { chargeRoutes } from '../../src/http/routes/charges';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { sandboxRoutes } from '../../src/http/routes/sandbox/charges';
import { createLogger } from '../../src/lib/logger';
import { createAcquirerCallbacks, type AcquirerCallbacks } from '../../src/services/inbox/acquirer-callbacks';
import type { ChargeWorkflows } from '../../src/temporal/clients/charge';
import { createChargeSandbox } from '../../src/services/charges/sandbox';
import { createChargeLifecycle, type ChargeLifecycle } from '../../src/services/charges/lifecycle';
import { getTestDb, isolatedTestDb, type TestDb } from './db';
import { startApi, type TestApi } from './api';
import { devEnv, testEnv, uniqueTaskQueue, runProjectWorker, type TemporalKind } from './temporal';
import { onRunEnd } from './lifecycle';

export const CALLBACK_SECRET = 'test-acquirer-callback-secret';
const CLIENT = { clientId: 'pixflow-test', clientSecret: 'pixflow-test-secret' };

export interface ChargesStack {
  /** The database the stack serves (the run's shared one, or its own: `ownChargesStack`). */
  db: TestDb;
  api: TestApi;
  simulator: RunningSimulator;
  env: TestWorkflowEnvironment;
  client: Client;
  taskQueue: string;
  /** The client of the simulator, as the service uses it. */
  acquirer: HttpAcquirer;
  /** The workflow side's service, for tests that call one step directly. */
  lifecycle: ChargeLifecycle;
  /** The callbacks service the API's routes use (its `inbox` is what the API's reconciler re-drives). */
  callbacks: AcquirerCallbacks;
  workflows: ChargeWorkflows;
}

const stacks = new Map<TemporalKind, Promise<ChargesStack>>();

/**
 * The run's charges stack on the time-skipping test server, or (`'dev'`) on the dev server for
 * suites that list workflows by query (docs/testing.md "One Temporal server of each kind per run").
 */
export function chargesStack(kind: TemporalKind = 'time-skipping'): Promise<ChargesStack> {
  let stack = stacks.get(kind);
  if (!stack) {
    stack = getTestDb().then((db) => build(kind, db));
    stacks.set(kind, stack);
  }
  return stack;
}

/**
 * A charges stack on a database of its own (on the run's time-skipping server, with a worker and
 * task queue of its own), for suites that run the charge reconciler: over the shared database it
 * would start a workflow for every charge other suites left open on purpose, and a burst of such
 * runs wedges the test server's clock (docs/testing.md "One Temporal server of each kind per run").
 * `startsDeliveries`: the worker starts a payment's webhook deliveries after its commit, on its own
 * task queue, as src/runtime/processes.ts `startWorker` does (no dispatcher runs on this database).
 */
export async function ownChargesStack(name: string, opts: { startsDeliveries?: boolean } = {}): Promise<ChargesStack> {
  return build('time-skipping', await isolatedTestDb(name), opts);
}

async function build(kind: TemporalKind, db: TestDb, opts: { startsDeliveries?: boolean } = {}): Promise<ChargesStack> {
  const { knex } = db;
  const env = kind === 'dev' ? await devEnv() : await testEnv();
  const logger = createLogger({ level: (process.env.TEST_LOG_LEVEL as 'info' | undefined) ?? 'silent' });
  const simulator = await startAcquirerSimulator({ callbackSecret: CALLBACK_SECRET, ...CLIENT, autoComplete: false });
  onRunEnd(() => simulator.close());
  const acquirer = new HttpAcquirer({ baseUrl: simulator.url, ...CLIENT, timeoutMs: 2_000 });
  const taskQueue = uniqueTaskQueue('charges');
  const workflows = chargeWorkflowClient(env.client, taskQueue);
  const charges = createChargesService({ knex, config: { CHARGE_LIST_CACHE_MS: 3000 }, logger, acquirer, workflows });
  const callbacks = createAcquirerCallbacks({ knex, workflows, logger, acquirer });
  const dueDateCharges = createDueDateCharges({ knex, logger, acquirer, workflows, onWrite: charges.dropListCache });
  const dueDate = {
    charges: dueDateCharges,
    batches: createChargeBatches({ knex, logger, acquirer, dueDate: dueDateCharges }),
  };
  const api = await startApi({
    db,
    deps: {
      routes: [
        chargeRoutes(charges, dueDate),
        acquirerCallbackRoutes({ secret: CALLBACK_SECRET, callbacks }),
        sandboxRoutes(createChargeSandbox({ charges, simulator: sandboxControlOf(simulator.control) })),
      ],
    },
  });
  simulator.control.setCallbackBaseUrl(api.baseUrl);

  const webhookDeliveries = opts.startsDeliveries ? webhookDeliveryWorkflowClient(env.client, taskQueue) : undefined;
  await runProjectWorker(env, taskQueue, createActivities({ knex, logger, acquirer, webhookDeliveries }));
  return {
    db,
    api,
    simulator,
    env,
    client: env.client,
    taskQueue,
    acquirer,
    lifecycle: createChargeLifecycle({ knex, acquirer, logger }),
    callbacks,
    workflows,
  };
}

/** A merchant that meets every charge prerequisite, with its JWT. */
/** A São Paulo calendar day `days` from today, as YYYY-MM-DD (Brazil keeps UTC−3): due dates and payment days. */
export const saoPauloDay = (days: number): string =>
  new Date(Date.now() - 3 * 3_600_000 + days * 86_400_000).toISOString().slice(0, 10);

/** R$ 1,000.00 due in 10 days: R$ 10.00 abated; R$ 50.00 off until day 3; fine 2 %; interest 1 % a month. */
export const tuitionCharge = (over: Record<string, unknown> = {}) => ({
  amount: 100_000,
  description: 'Mensalidade',
  dueDate: saoPauloDay(10),
  payer: { name: 'Ana Souza', document: '12345678909' },
  validityAfterDue: 20,
  fine: { mode: 'PERCENT', percent: 2 },
  interest: { mode: 'PERCENT_PER_MONTH', percent: 1 },
  discount: { mode: 'FIXED_UNTIL', until: [{ date: saoPauloDay(3), amount: 5_000 }] },
  abatement: { mode: 'FIXED', amount: 1_000 },
  ...over,
});

export async function readyMerchant(api: TestApi, opts: { feeBps?: number } = {}) {
  const m = await api.createMerchant(opts.feeBps === undefined ? {} : { feeBps: opts.feeBps });
  await api.makeReady(m.merchantId);
  return m;
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
