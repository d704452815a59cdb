/**
 * The MED and PIX key stack for tests, once per run: its own acquirer simulator (activating keys on
 * its own after a short delay), the API with the charge, callback and sandbox routes and the PIX key
 * registration hook (real HTTP), and a real worker running every workflow on its own task queue of
 * the run's time-skipping environment — wired as src/runtime/processes.ts wires the service.
 */
import { sandboxControlOf } from '../../src/acquirer/sandbox-control';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import { createActivities } from '../../src/runtime/composition';
import { createChargesService } from '../../src/services/charges/charges';
import { chargeWorkflowClient } from '../../src/temporal/clients/charge';
import { infractionWorkflowClient, type InfractionWorkflows } from '../../src/temporal/clients/infraction';
import { pixKeyWorkflowClient, type PixKeyWorkflows } from '../../src/temporal/clients/pix-key';
import { chargeRoutes } from '../../src/http/routes/charges';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { sandboxRoutes } from '../../src/http/routes/sandbox/charges';
import { infractionSandboxRoutes } from '../../src/http/routes/sandbox/infractions';
import { pixKeySandboxRoutes } from '../../src/http/routes/sandbox/pix-keys';
import { createLogger } from '../../src/lib/logger';
import { createAcquirerCallbacks } from '../../src/services/inbox/acquirer-callbacks';
import { createChargeSandbox } from '../../src/services/charges/sandbox';
import { createInfractionCallbacks } from '../../src/services/med/callbacks';
import { createInfractionSandbox } from '../../src/services/med/sandbox';
import { createPixKeySandbox } from '../../src/services/pix-keys/sandbox';
import { createMedCallbackHandlers } from '../../src/services/med/callback-handlers';
import { createPixKeyCallbacks } from '../../src/services/pix-keys/callbacks';
import { createPixKeyRegistration } from '../../src/services/pix-keys/pix-keys';
import { createWithdrawalsService } from '../../src/services/withdrawals/withdrawals';
import { withdrawalWorkflowClient } from '../../src/temporal/clients/withdrawal';
import { withdrawalRoutes } from '../../src/http/routes/withdrawals';
import { infractionRoutes } from '../../src/http/routes/infractions';
import { createInfractionDefenses } from '../../src/services/med/defenses';
import { createOperatorCases, type OperatorCases } from '../../src/services/platform/operator-cases';
import { infractionCaseResolvers } from '../../src/services/med/cases';
import type { ChargesService } from '../../src/services/charges/charges';
import assert from 'node:assert/strict';
import { chargeWorkflowId } from '../../src/temporal/workflow-ids';
import { eventually, readyMerchant } from './charges';
import type { MerchantFixture } from './api';
import { getTestDb } from './db';
import { startApi, type TestApi } from './api';
import { testEnv, uniqueTaskQueue, runProjectWorker } from './temporal';
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
  charges: ChargesService;
  /** The stack's client of its simulator (for suites that call services directly). */
  acquirer: HttpAcquirer;
  /** Operator cases with the stack's workflow clients (a decision wakes its workflow). */
  cases: OperatorCases;
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
  const withdrawals = createWithdrawalsService({
    knex,
    logger,
    workflows: withdrawalWorkflowClient(env.client, taskQueue),
  });
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
        withdrawalRoutes(withdrawals),
        infractionRoutes(createInfractionDefenses({ knex, workflows: infractions, logger })),
        acquirerCallbackRoutes({ secret: MED_CALLBACK_SECRET, callbacks }),
        sandboxRoutes(createChargeSandbox({ charges, simulator: sandboxControlOf(simulator.control) })),
        infractionSandboxRoutes(createInfractionSandbox({ knex, simulator: sandboxControlOf(simulator.control) })),
        pixKeySandboxRoutes(createPixKeySandbox({ knex, simulator: sandboxControlOf(simulator.control) })),
      ],
      onPixKeyCreated: (key) => pixKeys.register({ id: key.id, merchantId: key.merchantId }),
    },
  });
  simulator.control.setCallbackBaseUrl(api.baseUrl);

  await runProjectWorker(env, taskQueue, createActivities({ knex, logger, acquirer }));
  const cases = createOperatorCases({ knex, logger, resolvers: infractionCaseResolvers({ workflows: infractions }) });
  return { api, simulator, env, client: env.client, taskQueue, infractions, pixKeys, charges, acquirer, cases };
}

export interface InfractionBody {
  id: string;
  chargeId: string;
  endToEndId: string;
  amount: number;
  reason: string;
  status: string;
}

export interface Balance {
  available: number;
  pending: number;
  blocked: number;
  total: number;
}

/**
 * The steps MED suites take through the stack's API: pay a charge, raise an infraction, read
 * balances. `stack` is read at each call (suites assign it in their `before`).
 */
export function medFlows(stack: () => MedStack) {
  const knex = () => stack().api.knex;

  async function paidCharge(m: MerchantFixture, opts: { settle: boolean; amount?: number }) {
    const s = stack();
    const created = await s.api.request<{ charge: { id: string; txid: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount: opts.amount ?? 10_000, description: 'Pedido' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const charge = created.body.charge;
    const pay = await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
    assert.equal(pay.status, 202);
    const row = await eventually(async () => {
      const r = await knex()('charges').where({ id: charge.id }).first();
      return r?.status === 'PAID' ? (r as { e2e_id: string; txid: string }) : undefined;
    }, 'the charge to be PAID');
    // The charge workflow ends once it has settled (1 day later): result() skips the time.
    if (opts.settle) await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).result();
    return { id: charge.id, txid: row.txid, e2eId: row.e2e_id };
  }

  async function balance(m: MerchantFixture): Promise<Balance> {
    const res = await stack().api.request<{ balance: Balance }>('GET', '/v1/merchants/me/balance', { token: m.token });
    assert.equal(res.status, 200);
    return res.body.balance;
  }

  const untilBalance = (m: MerchantFixture, want: Balance, what: string) =>
    eventually(
      async () => {
        const b = await balance(m);
        return JSON.stringify(b) === JSON.stringify(want) ? b : undefined;
      },
      `${what}: ${JSON.stringify(want)}`,
    );

  const infractionRow = (id: string) => knex()('infractions').where({ id }).first();
  const untilInfraction = (id: string, status: string) =>
    eventually(async () => {
      const r = await infractionRow(id);
      return r?.status === status ? r : undefined;
    }, `infraction ${id} to be ${status}`);

  async function raise(
    m: MerchantFixture,
    chargeId: string,
    reason = 'Golpe do falso vendedor',
    extra: { analysisResult?: 'AGREED' | 'DISAGREED'; reportDetails?: string } = {},
  ): Promise<InfractionBody> {
    const res = await stack().api.request<{ infraction: InfractionBody }>('POST', '/v1/sandbox/infractions', {
      token: m.token,
      body: { chargeId, reason, ...extra },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.infraction;
  }

  return {
    knex,
    paidCharge,
    balance,
    untilBalance,
    infractionRow,
    untilInfraction,
    raise,
    readyMerchant: (o?: { feeBps?: number }) => readyMerchant(stack().api, o),
  };
}

/** PIX key rows and `pixkey.updated` events of the stack's database (`stack` read at each call). */
export function pixKeyFlows(stack: () => MedStack) {
  const keyRow = (id: string) => stack().api.knex('pix_keys').where({ id }).first();
  const untilKey = (id: string, status: string) =>
    eventually(async () => {
      const r = await keyRow(id);
      return r?.status === status ? r : undefined;
    }, `key ${id} to be ${status}`);
  /** The data of the key's `pixkey.updated` events, oldest first. */
  const keyEvents = async (keyId: string): Promise<Array<Record<string, unknown>>> =>
    (
      (await stack()
        .api.knex('events')
        .where({ type: 'pixkey.updated' })
        .whereRaw(`data->>'keyId' = ?`, [keyId])
        .orderBy('id')
        .select('data')) as Array<{ data: Record<string, unknown> }>
    ).map((e) => e.data);
  return { keyRow, untilKey, keyEvents };
}
