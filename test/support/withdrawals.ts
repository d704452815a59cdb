/**
 * The withdrawals stack for tests, once per run: the acquirer simulator (real HTTP, transfers
 * finishing only when told), the API with charge and withdrawal routes, callbacks and both
 * sandboxes (real HTTP), and a real Temporal worker running the project's workflows and activities
 * on the time-skipping test environment.
 */
import { sandboxControlOf } from '../../src/acquirer/sandbox-control';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Knex } from 'knex';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import { createActivities } from '../../src/runtime/composition';
import { createChargesService } from '../../src/services/charges/charges';
import { chargeWorkflowClient } from '../../src/temporal/clients/charge';
import { withdrawalWorkflowClient, type WithdrawalWorkflows } from '../../src/temporal/clients/withdrawal';
import { chargeRoutes } from '../../src/http/routes/charges';
import { withdrawalRoutes } from '../../src/http/routes/withdrawals';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { sandboxRoutes } from '../../src/http/routes/sandbox/charges';
import { withdrawalSandboxRoutes } from '../../src/http/routes/sandbox/withdrawals';
import { createLogger, type Logger } from '../../src/lib/logger';
import { createAcquirerCallbacks } from '../../src/services/inbox/acquirer-callbacks';
import { createChargeSandbox } from '../../src/services/charges/sandbox';
import { createWithdrawalsService, type WithdrawalsService } from '../../src/services/withdrawals/withdrawals';
import { createWithdrawalCallbackHandler } from '../../src/services/withdrawals/callbacks';
import { createWithdrawalSandbox } from '../../src/services/withdrawals/sandbox';
import { createWithdrawalLifecycle, type WithdrawalLifecycle } from '../../src/services/withdrawals/lifecycle';
import { fundMerchant, getTestDb } from './db';
import assert from 'node:assert/strict';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { startApi, type MerchantFixture, type TestApi } from './api';
import { testEnv, uniqueTaskQueue, runProjectWorker } from './temporal';
import { onRunEnd } from './lifecycle';

export const WITHDRAWALS_CALLBACK_SECRET = 'test-withdrawals-callback-secret';
const CLIENT = { clientId: 'pixflow-withdrawals-test', clientSecret: 'pixflow-withdrawals-test-secret' };

export interface WithdrawalsStack {
  api: TestApi;
  knex: Knex;
  logger: Logger;
  simulator: RunningSimulator;
  env: TestWorkflowEnvironment;
  client: Client;
  taskQueue: string;
  acquirer: HttpAcquirer;
  workflows: WithdrawalWorkflows;
  withdrawals: WithdrawalsService;
  lifecycle: WithdrawalLifecycle;
}

let stack: Promise<WithdrawalsStack> | undefined;

export function withdrawalsStack(): Promise<WithdrawalsStack> {
  stack ??= build();
  return stack;
}

async function build(): Promise<WithdrawalsStack> {
  const { knex } = await getTestDb();
  const env = await testEnv();
  const logger = createLogger({ level: (process.env.TEST_LOG_LEVEL as 'info' | undefined) ?? 'silent' });
  const simulator = await startAcquirerSimulator({
    callbackSecret: WITHDRAWALS_CALLBACK_SECRET,
    ...CLIENT,
    autoComplete: false,
  });
  onRunEnd(() => simulator.close());
  const acquirer = new HttpAcquirer({ baseUrl: simulator.url, ...CLIENT, timeoutMs: 2_000 });
  const taskQueue = uniqueTaskQueue('withdrawals');
  const chargeWorkflows = chargeWorkflowClient(env.client, taskQueue);
  const workflows = withdrawalWorkflowClient(env.client, taskQueue);
  const charges = createChargesService({
    knex,
    config: { CHARGE_LIST_CACHE_MS: 0 },
    logger,
    acquirer,
    workflows: chargeWorkflows,
  });
  const withdrawals = createWithdrawalsService({ knex, logger, workflows });
  const api = await startApi({
    deps: {
      routes: [
        chargeRoutes(charges),
        withdrawalRoutes(withdrawals),
        acquirerCallbackRoutes({
          secret: WITHDRAWALS_CALLBACK_SECRET,
          callbacks: createAcquirerCallbacks({
            knex,
            workflows: chargeWorkflows,
            logger,
            acquirer,
            handlers: { transfers: createWithdrawalCallbackHandler({ knex, logger, workflows }) },
          }),
        }),
        sandboxRoutes(createChargeSandbox({ charges, simulator: sandboxControlOf(simulator.control) })),
        withdrawalSandboxRoutes(
          createWithdrawalSandbox({ knex, withdrawals, simulator: sandboxControlOf(simulator.control) }),
        ),
      ],
    },
  });
  simulator.control.setCallbackBaseUrl(api.baseUrl);

  await runProjectWorker(env, taskQueue, createActivities({ knex, logger, acquirer }));
  return {
    api,
    knex,
    logger,
    simulator,
    env,
    client: env.client,
    taskQueue,
    acquirer,
    workflows,
    withdrawals,
    lifecycle: createWithdrawalLifecycle({ knex, acquirer, logger }),
  };
}

/** Merchants made by `fundedMerchant` in this run, for the ledger check at the end of each suite. */
const touched = new Set<string>();

/** A merchant that meets every withdrawal prerequisite, with `available` funded by an adjustment. */
export async function fundedMerchant(api: TestApi, available: number): Promise<MerchantFixture> {
  const m = await api.createMerchant();
  touched.add(m.merchantId);
  await api.makeReady(m.merchantId);
  if (available > 0) await fundMerchant(api.knex, m.merchantId, available);
  return m;
}

export interface WithdrawBody {
  message: string;
  withdraw: {
    id: string;
    amount: number;
    description: string | null;
    status: string;
    batchId: string | null;
    createdAt: string;
  };
  balance: { available: number; pending: number; blocked: number; total: number };
  idempotent?: boolean;
}

/** A valid destination key. */
export const DEST = { pixKeyType: 'EMAIL', pixKey: 'destino@example.com' } as const;

/**
 * The ledger invariant (docs/operations.md "Checking the books") over these merchants, or over every merchant
 * `fundedMerchant` made so far: asserts it reports no violation.
 */
export async function assertBooksReconcile(knex: Knex, merchantIds: string[] = [...touched]): Promise<void> {
  const report = await checkLedgerInvariant(knex, { merchantIds });
  assert.deepEqual(report.violations, [], JSON.stringify(report.violations, null, 2));
  assert.equal(report.ok, true);
}
