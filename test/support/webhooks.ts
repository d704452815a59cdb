/**
 * The webhooks stack for tests, once per run: the API with the webhook routes (real HTTP), the
 * delivery dispatcher (LISTEN/NOTIFY and a fast poll), a real Temporal worker running the delivery
 * workflow and activity on the time-skipping environment, and a real receiver
 * (webhook-receiver.ts). It shares the run's database with the charges stack, so a charge paid there
 * reaches webhooks registered here.
 *
 * Host names under `.fake-dns.test` resolve through `fakeDns` (registration and delivery), so tests
 * can play DNS rebinding; `withDeliverySettings(webhookId, …)` sends one webhook's attempts through
 * other delivery settings (e.g. the production address rule) on the same worker.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import type { Knex } from 'knex';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createLogger, type Logger } from '../../src/lib/logger';
import { recordEvent, type RecordEventInput } from '../../src/services/platform/events';
import { createWebhookActivities } from '../../activities/webhooks';
import {
  createWebhookDelivery,
  DEFAULT_WEBHOOK_DELIVERY_SETTINGS,
  type WebhookDelivery,
  type WebhookDeliverySettings,
} from '../../src/services/webhooks/delivery';
import { createWebhookDispatcher, type WebhookDispatcher } from '../../src/services/webhooks/dispatcher';
import { systemResolver, type HostResolver } from '../../src/services/webhooks/url';
import { createWebhooksService, type WebhooksConfig } from '../../src/services/webhooks/webhooks';
import { webhookRoutes } from '../../src/http/routes/webhooks';
import { webhookDeliveryWorkflowClient } from '../../src/temporal/clients/webhook';
import { webhookDeliveryWorkflowId } from '../../src/temporal/workflow-ids';
import type { WebhookDeliveryResult } from '../../workflows/webhook-delivery-types';
import { decodeTime } from 'ulid';
import { newId } from '../../src/lib/ids';
import { getTestDb } from './db';
import { startApi, type TestApi } from './api';
import { eventually } from './charges';
import { onRunEnd } from './lifecycle';
import { testEnv, uniqueTaskQueue, workflowBundle } from './temporal';
import { startReceiver, type Receiver } from './webhook-receiver';

export const WEBHOOKS_TEST_CONFIG: WebhooksConfig = {
  MAX_WEBHOOKS_PER_MERCHANT: 20,
  WEBHOOK_RETRY_DELAYS_SECONDS: [60, 600],
  WEBHOOK_REQUIRE_PUBLIC_HTTPS: false,
  isProduction: false,
};

export interface CreatedWebhook {
  id: string;
  name: string | null;
  url: string;
  events: string[];
  secret: string;
  status: string;
  createdAt: string;
}

export interface WebhookStack {
  api: TestApi;
  knex: Knex;
  env: TestWorkflowEnvironment;
  client: Client;
  taskQueue: string;
  receiver: Receiver;
  dispatcher: WebhookDispatcher;
  logger: Logger;
  /** Answers for host names under `.fake-dns.test`, changeable at any time. */
  fakeDns: Map<string, string[]>;
  resolve: HostResolver;
  withDeliverySettings(webhookId: string, settings: Partial<WebhookDeliverySettings>): void;
  /** Registers a webhook through the API and tells the receiver its secret. */
  createWebhook(
    token: string,
    body: { path: string; events?: string[]; name?: string | null },
  ): Promise<CreatedWebhook>;
  /** The delivery of `eventId` to `webhookId`, once its workflow has been started. */
  startedDelivery(eventId: string, webhookId: string): Promise<{ id: string }>;
  /** Waits for the delivery's workflow to end (time skipping jumps its timers). */
  deliveryResult(deliveryId: string): Promise<WebhookDeliveryResult>;
  /** Records an event through recordEvent in its own transaction, as any state change would. */
  publish(merchantId: string, type: string, data: Record<string, unknown>): Promise<string>;
}

/**
 * Merchants whose deliveries a suite dispatches on a worker of its own (test/api/tracing.test.ts):
 * this stack's dispatcher leaves them alone (answers "not started", so nothing is marked).
 */
export const deliveriesDispatchedElsewhere = new Set<string>();

let stack: Promise<WebhookStack> | undefined;

export function webhookStack(): Promise<WebhookStack> {
  stack ??= build();
  return stack;
}

async function build(): Promise<WebhookStack> {
  const { knex } = await getTestDb();
  const env = await testEnv();
  const logger = createLogger({ level: (process.env.TEST_LOG_LEVEL as 'info' | undefined) ?? 'silent' });
  const fakeDns = new Map<string, string[]>();
  const resolve: HostResolver = async (hostname) => {
    // Only loopback names and IP literals reach the system resolver: any other name answers at once,
    // so a delivery to a host this machine cannot resolve (no network) never keeps an attempt, and
    // the shared time-skipping clock, waiting on DNS.
    if (!hostname.endsWith('.fake-dns.test')) {
      if (hostname === 'localhost' || net.isIP(hostname) !== 0) return systemResolver(hostname);
      throw Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' });
    }
    const found = fakeDns.get(hostname);
    if (!found) throw Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' });
    return found;
  };
  const receiver = await startReceiver();
  const api = await startApi({
    deps: { routes: [webhookRoutes(createWebhooksService({ knex, config: WEBHOOKS_TEST_CONFIG, resolve }))] },
  });

  const baseSettings: WebhookDeliverySettings = { ...DEFAULT_WEBHOOK_DELIVERY_SETTINGS, resolve };
  const standard = createWebhookDelivery({ knex, logger, settings: baseSettings });
  const special = new Map<string, WebhookDelivery>();
  const taskQueue = uniqueTaskQueue('webhooks');
  // The activity as the worker registers it, except that a webhook may be routed through other settings.
  const activities = createWebhookActivities({
    attempt: async (deliveryId, attempt) => {
      const row = (await knex('webhook_deliveries').where({ id: deliveryId }).first('webhook_id')) as
        { webhook_id: string } | undefined;
      const delivery = (row && special.get(row.webhook_id)) ?? standard;
      return delivery.attempt(deliveryId, attempt);
    },
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(require.resolve('../../workflows')),
    activities,
  });
  const running = worker.run();
  // Only deliveries made since this stack started: older PENDING ones were left by suites whose
  // APIs run no dispatcher, on purpose; attempting them here (to addresses that may never answer)
  // would keep activities in flight and stop the shared time-skipping clock for every later suite.
  // They are answered as started, so the dispatcher marks them and does not ask again.
  const since = Date.now() - 1_000;
  const own = webhookDeliveryWorkflowClient(env.client, taskQueue);
  const dispatcher = createWebhookDispatcher({
    knex,
    logger,
    workflows: {
      start: (d) =>
        deliveriesDispatchedElsewhere.has(d.merchantId)
          ? Promise.resolve(false)
          : decodeTime(d.deliveryId.slice(d.deliveryId.indexOf('_') + 1)) >= since
            ? own.start(d)
            : Promise.resolve(true),
    },
    pollIntervalMs: 250,
  });
  await dispatcher.start();
  onRunEnd(async () => {
    await dispatcher.stop();
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });

  async function createWebhook(
    token: string,
    body: { path: string; events?: string[]; name?: string | null },
  ): Promise<CreatedWebhook> {
    const res = await api.request<{ webhook: CreatedWebhook }>('POST', '/v1/webhooks/merchant', {
      token,
      body: { url: receiver.url(body.path), events: body.events, name: body.name },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    receiver.expect(body.path, res.body.webhook.secret);
    return res.body.webhook;
  }

  async function startedDelivery(eventId: string, webhookId: string): Promise<{ id: string }> {
    return eventually(async () => {
      const row = (await knex('webhook_deliveries')
        .where({ event_id: eventId, webhook_id: webhookId })
        .whereNotNull('workflow_started_at')
        .first('id')) as { id: string } | undefined;
      return row;
    }, `the delivery of ${eventId} to ${webhookId} to start`);
  }

  return {
    api,
    knex,
    env,
    client: env.client,
    taskQueue,
    receiver,
    dispatcher,
    logger,
    fakeDns,
    resolve,
    withDeliverySettings: (webhookId, settings) =>
      void special.set(webhookId, createWebhookDelivery({ knex, logger, settings: { ...baseSettings, ...settings } })),
    createWebhook,
    startedDelivery,
    deliveryResult: (deliveryId) =>
      env.client.workflow.getHandle(webhookDeliveryWorkflowId(deliveryId)).result() as Promise<WebhookDeliveryResult>,
    // Suites publish hand-made data (SAMPLE_EVENT_DATA) under any catalogue name; the receiver checks
    // what arrives against the document's `webhooks` object.
    publish: async (merchantId, type, data) =>
      (
        await recordEvent(knex, {
          merchantId,
          type,
          data,
          reference: `test:${type}:${newId('ref')}`,
        } as RecordEventInput)
      ).id,
  };
}

/**
 * The data contract of every event (docs/api.md "Events" and the events table): field → JSON type. Suites
 * that make these events happen for real check what arrives with `assertEventData`.
 */
export const EVENT_DATA_CONTRACT: Record<string, Record<string, 'string' | 'number' | 'object' | 'null'>> = {
  // An immediate charge's: `breakdown` is a due-date charge's only (docs/api.md "Events").
  'charge.paid': {
    chargeId: 'string',
    txid: 'string',
    amount: 'number',
    nominalAmount: 'number',
    paidAmount: 'number',
    breakdown: 'null',
    paidAt: 'string',
    payer: 'object',
  },
  'charge.refunded': {
    refundId: 'string',
    txid: 'string',
    chargeId: 'string',
    amount: 'string',
    status: 'string',
    reason: 'string',
    end2endId: 'string',
  },
  'withdraw.completed': {
    withdrawId: 'string',
    amount: 'number',
    status: 'string',
    transferId: 'string',
    completedAt: 'string',
  },
  'withdraw.failed': { withdrawId: 'string', amount: 'number', status: 'string', reason: 'string' },
  'withdraw.refunded': {
    withdrawId: 'string',
    amount: 'number',
    status: 'string',
    reason: 'string',
    refundedAt: 'string',
  },
  'pixkey.updated': { keyId: 'string', key: 'string', type: 'string', status: 'string' },
  'infraction.received': {
    infractionId: 'string',
    chargeId: 'string',
    endToEndId: 'string',
    amount: 'number',
    reason: 'string',
    status: 'string',
  },
  'infraction.updated': {
    infractionId: 'string',
    chargeId: 'string',
    endToEndId: 'string',
    amount: 'number',
    reason: 'string',
    status: 'string',
  },
  'infraction.refund_completed': {
    infractionId: 'string',
    chargeId: 'string',
    endToEndId: 'string',
    amount: 'number',
    reason: 'string',
    status: 'string',
    refundedAt: 'string',
  },
  'subscription.approved': { subscriptionId: 'string', status: 'string', approvedAt: 'string' },
  'subscription.canceled': { subscriptionId: 'string', status: 'string', canceledBy: 'string', canceledAt: 'string' },
  'subscription.charge.paid': {
    subscriptionId: 'string',
    cycle: 'number',
    chargeId: 'string',
    amount: 'number',
    dueDate: 'string',
    paidAt: 'string',
  },
  // retryDate is null when the cycle FAILED for good; the sample retries.
  'subscription.charge.failed': {
    subscriptionId: 'string',
    cycle: 'number',
    chargeId: 'string',
    amount: 'number',
    dueDate: 'string',
    attempt: 'number',
    reason: 'string',
    retryDate: 'string',
  },
};

/** Exactly the contract's fields, each of its JSON type (and `payer` as {name, document}). */
export function assertEventData(type: string, data: Record<string, unknown>): void {
  const contract = EVENT_DATA_CONTRACT[type];
  assert.ok(contract, `no data contract for ${type}`);
  assert.deepEqual(Object.keys(data).sort(), Object.keys(contract).sort(), `${type} data fields`);
  for (const [field, kind] of Object.entries(contract)) {
    const value = data[field];
    assert.equal(value === null ? 'null' : typeof value, kind, `${type}.data.${field} is a ${kind}`);
    if (kind === 'number') assert.ok(Number.isInteger(value), `${type}.data.${field} is integer cents`);
  }
  if (type === 'charge.paid') {
    const payer = data.payer as Record<string, unknown>;
    assert.deepEqual(Object.keys(payer).sort(), ['document', 'name']);
  }
  if (type === 'charge.refunded') assert.match(data.amount as string, /^\d+\.\d{2}$/);
}

/** Sample data that meets the contract, for events recorded by hand. */
export const SAMPLE_EVENT_DATA: Record<string, Record<string, unknown>> = {
  'charge.paid': {
    chargeId: 'ch_x',
    txid: 'tx',
    amount: 100,
    nominalAmount: 100,
    paidAmount: 100,
    breakdown: null,
    paidAt: new Date().toISOString(),
    payer: { name: 'A', document: '12345678909' },
  },
  'charge.refunded': {
    refundId: 'rf_x',
    txid: 'tx',
    chargeId: 'ch_x',
    amount: '1.00',
    status: 'closed',
    reason: 'r',
    end2endId: 'E1',
  },
  'withdraw.completed': {
    withdrawId: 'wd_x',
    amount: 1000,
    status: 'COMPLETED',
    transferId: 'tr',
    completedAt: new Date().toISOString(),
  },
  'withdraw.failed': { withdrawId: 'wd_x', amount: 1000, status: 'FAILED', reason: 'rejected' },
  'withdraw.refunded': {
    withdrawId: 'wd_x',
    amount: 1000,
    status: 'REFUNDED',
    reason: 'returned',
    refundedAt: new Date().toISOString(),
  },
  'pixkey.updated': { keyId: 'pxk_x', key: 'a@b.test', type: 'EMAIL', status: 'ATIVA' },
  'infraction.received': {
    infractionId: 'inf_x',
    chargeId: 'ch_x',
    endToEndId: 'E1',
    amount: 100,
    reason: 'fraud',
    status: 'OPEN',
  },
  'infraction.updated': {
    infractionId: 'inf_x',
    chargeId: 'ch_x',
    endToEndId: 'E1',
    amount: 100,
    reason: 'fraud',
    status: 'ACCEPTED',
  },
  'infraction.refund_completed': {
    infractionId: 'inf_x',
    chargeId: 'ch_x',
    endToEndId: 'E1',
    amount: 100,
    reason: 'fraud',
    status: 'REFUNDED',
    refundedAt: new Date().toISOString(),
  },
  'subscription.approved': { subscriptionId: 'sub_x', status: 'ACTIVE', approvedAt: '2026-12-01T12:00:00.000Z' },
  'subscription.canceled': {
    subscriptionId: 'sub_x',
    status: 'CANCELED',
    canceledBy: 'PAYER',
    canceledAt: '2026-12-01T12:00:00.000Z',
  },
  'subscription.charge.paid': {
    subscriptionId: 'sub_x',
    cycle: 1,
    chargeId: 'ch_x',
    amount: 100,
    dueDate: '2026-12-01',
    paidAt: '2026-12-01T12:00:00.000Z',
  },
  'subscription.charge.failed': {
    subscriptionId: 'sub_x',
    cycle: 1,
    chargeId: 'ch_x',
    amount: 100,
    dueDate: '2026-12-01',
    attempt: 1,
    reason: 'AM02: saldo insuficiente',
    retryDate: '2026-12-02',
  },
};
