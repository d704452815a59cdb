/**
 * The generated client of examples/typed-client (openapi-typescript types + openapi-fetch) runs the
 * merchant journey against the real stack: log in, create an API key, register a webhook, create a
 * charge, pay it through the sandbox, receive `charge.paid` (checked with the `standardwebhooks` package and its x-webhook-signature with an
 * HMAC computed here), read the balance, withdraw, refund. Every answer the client gets is also
 * checked against the document. The checked-in types must equal what the generator makes now.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Worker } from '@temporalio/worker';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { sandboxControlOf } from '../../src/acquirer/sandbox-control';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator } from '../../src/acquirer/simulator/server';
import { createActivities } from '../../src/runtime/composition';
import { chargeRoutes } from '../../src/http/routes/charges';
import { withdrawalRoutes } from '../../src/http/routes/withdrawals';
import { webhookRoutes } from '../../src/http/routes/webhooks';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { sandboxRoutes } from '../../src/http/routes/sandbox/charges';
import { createLogger } from '../../src/lib/logger';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { createAcquirerCallbacks } from '../../src/services/inbox/acquirer-callbacks';
import { createChargeSandbox } from '../../src/services/charges/sandbox';
import { createChargesService } from '../../src/services/charges/charges';
import { DEFAULT_WEBHOOK_DELIVERY_SETTINGS } from '../../src/services/webhooks/delivery';
import { createWebhookDispatcher } from '../../src/services/webhooks/dispatcher';
import { createWebhooksService } from '../../src/services/webhooks/webhooks';
import { createWithdrawalCallbackHandler } from '../../src/services/withdrawals/callbacks';
import { createWithdrawalsService } from '../../src/services/withdrawals/withdrawals';
import { chargeWorkflowClient } from '../../src/temporal/clients/charge';
import { webhookDeliveryWorkflowClient } from '../../src/temporal/clients/webhook';
import { withdrawalWorkflowClient } from '../../src/temporal/clients/withdrawal';
import { generateTypes, TYPES_FILE } from '../../examples/typed-client/generate';
import { pixflowClient, type PixflowClient } from '../../examples/typed-client/client';
import { startApi, type TestApi } from '../support/api';
import { eventually } from '../support/charges';
import { getTestDb } from '../support/db';
import { onRunEnd } from '../support/lifecycle';
import { assertResponseMatchesDocument } from '../support/openapi-validator';
import { terminateRunning, testEnv, uniqueTaskQueue, workflowBundle } from '../support/temporal';
import { startReceiver, type Receiver } from '../support/webhook-receiver';
import { WEBHOOKS_TEST_CONFIG } from '../support/webhooks';

const CALLBACK_SECRET = 'typed-client-callback-secret';

/** The three Standard Webhooks headers of a received request, as the library takes them. */
const standardHeaders = (h: Record<string, string | string[] | undefined>): Record<string, string> => ({
  'webhook-id': String(h['webhook-id']),
  'webhook-timestamp': String(h['webhook-timestamp']),
  'webhook-signature': String(h['webhook-signature']),
});
const CLIENT = { clientId: 'pixflow-typed-client', clientSecret: 'pixflow-typed-client-secret' };

/**
 * The whole merchant-facing stack on one base URL: the simulator settles transfers and refunds
 * itself. `stop` ends its dispatcher, worker and the runs left on its queue as soon as the journey
 * is over: a dispatcher left running would go on starting other suites' deliveries on this queue
 * (docs/testing.md "One Temporal server of each kind per run").
 */
async function journeyStack(): Promise<{ api: TestApi; receiver: Receiver; stop: () => Promise<void> }> {
  const { knex } = await getTestDb();
  const env = await testEnv();
  const logger = createLogger({ level: (process.env.TEST_LOG_LEVEL as 'info' | undefined) ?? 'silent' });
  const simulator = await startAcquirerSimulator({ callbackSecret: CALLBACK_SECRET, ...CLIENT });
  onRunEnd(() => simulator.close());
  const acquirer = new HttpAcquirer({ baseUrl: simulator.url, ...CLIENT, timeoutMs: 2_000 });
  const taskQueue = uniqueTaskQueue('typed-client');
  const chargeWorkflows = chargeWorkflowClient(env.client, taskQueue);
  const withdrawalWorkflows = withdrawalWorkflowClient(env.client, taskQueue);
  const charges = createChargesService({
    knex,
    config: { CHARGE_LIST_CACHE_MS: 0 },
    logger,
    acquirer,
    workflows: chargeWorkflows,
  });
  const api = await startApi({
    deps: {
      routes: [
        chargeRoutes(charges),
        withdrawalRoutes(createWithdrawalsService({ knex, logger, workflows: withdrawalWorkflows })),
        webhookRoutes(createWebhooksService({ knex, config: WEBHOOKS_TEST_CONFIG })),
        acquirerCallbackRoutes({
          secret: CALLBACK_SECRET,
          callbacks: createAcquirerCallbacks({
            knex,
            workflows: chargeWorkflows,
            logger,
            acquirer,
            handlers: {
              transfers: createWithdrawalCallbackHandler({ knex, logger, workflows: withdrawalWorkflows }),
            },
          }),
        }),
        sandboxRoutes(createChargeSandbox({ charges, simulator: sandboxControlOf(simulator.control) })),
      ],
    },
  });
  simulator.control.setCallbackBaseUrl(api.baseUrl);
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(require.resolve('../../workflows')),
    activities: createActivities({ knex, logger, acquirer, webhooks: DEFAULT_WEBHOOK_DELIVERY_SETTINGS }),
  });
  const running = worker.run();
  const dispatcher = createWebhookDispatcher({
    knex,
    logger,
    workflows: webhookDeliveryWorkflowClient(env.client, taskQueue),
    pollIntervalMs: 250,
  });
  await dispatcher.start();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= stopAll());
  const stopAll = async (): Promise<void> => {
    await dispatcher.stop();
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await terminateRunning(env.client, taskQueue);
  };
  onRunEnd(stop);
  return { api, receiver: await startReceiver(), stop };
}

/** A client whose every answer is also checked against the document, as test/support/api.ts does. */
function checkedClient(baseUrl: string, token?: string): PixflowClient {
  const client = pixflowClient(baseUrl, token);
  client.use({
    async onResponse({ request, response }) {
      const text = await response.clone().text();
      const type = response.headers.get('content-type');
      const body: unknown = (type ?? '').includes('json') && text ? JSON.parse(text) : text;
      const url = new URL(request.url);
      assertResponseMatchesDocument(request.method, url.pathname + url.search, response.status, type, body);
      return undefined;
    },
  });
  return client;
}

describe('the generated typed client (examples/typed-client)', function () {
  this.timeout(120_000);

  it('is generated from the current document (api.d.ts is up to date)', async () => {
    const fresh = await generateTypes(buildOpenApiDocument());
    assert.equal(
      fs.readFileSync(TYPES_FILE, 'utf8'),
      fresh,
      'examples/typed-client/api.d.ts is stale: run `npm run example:client-types`',
    );
  });

  it('runs the merchant journey: API key, charge, sandbox payment, signed webhook, balance, withdrawal, refund', async () => {
    const { api, receiver, stop } = await journeyStack();
    try {
      // The operator's part (merchant, KYC, PIX key, immediate settlement) is the fixture's.
      const m = await api.createMerchant();
      await api.makeReady(m.merchantId);
      const patched = await api.request('PATCH', `/v1/admin/merchants/${m.merchantId}`, {
        token: await api.adminToken(),
        body: { settlementDelaySeconds: 0 },
      });
      assert.equal(patched.status, 200);

      // Log in (JWT), then create the API key the integration uses from then on.
      const anonymous = checkedClient(api.baseUrl);
      const login = await anonymous.POST('/v1/auth/login', { body: { email: m.email, password: m.password } });
      assert.ok(login.data, JSON.stringify(login.error));
      const withJwt = checkedClient(api.baseUrl, login.data.token);
      const key = await withJwt.POST('/v1/api-keys', { body: { name: 'typed client' } });
      assert.equal(key.response.status, 201);
      assert.ok(key.data, JSON.stringify(key.error));
      assert.ok(key.data.apiKey.value.startsWith('pixflow_'));
      const client = checkedClient(api.baseUrl, key.data.apiKey.value);

      const path = `/typed-client-${crypto.randomBytes(4).toString('hex')}`;
      const hook = await client.POST('/v1/webhooks/merchant', { body: { url: receiver.url(path) } });
      assert.ok(hook.data, JSON.stringify(hook.error));
      const secret = hook.data.webhook.secret;
      receiver.expect(path, secret);

      const created = await client.POST('/v1/charges', {
        body: { amount: 10_000, description: 'Pedido 42' },
        headers: { 'Idempotency-Key': `typed-${crypto.randomUUID()}` },
      });
      assert.equal(created.response.status, 201, JSON.stringify(created.error));
      const charge = (created.data as { charge: { id: string; qrCode: string } }).charge;
      assert.match(charge.qrCode, /^000201/);

      const paid = await client.POST('/v1/sandbox/charges/{id}/pay', {
        params: { path: { id: charge.id } },
        body: { payer: { name: 'Maria Pagadora', document: '12345678909' } },
      });
      assert.equal(paid.response.status, 202, JSON.stringify(paid.error));

      // The webhook, verified as a receiver would: HMAC-SHA256 of the raw bytes with the secret, in hex.
      const [delivery] = await receiver.waitFor(path, 1, 60_000);
      assert.ok(delivery);
      const expected = crypto.createHmac('sha256', secret).update(delivery.raw).digest('hex');
      assert.equal(delivery.headers['x-webhook-signature'], expected);
      // And as the official Standard Webhooks library verifies it (throws on a bad signature).
      new StandardWebhook(secret).verify(delivery.raw.toString('utf8'), standardHeaders(delivery.headers));
      assert.equal(delivery.body.event, 'charge.paid');
      assert.equal(delivery.body.data.chargeId, charge.id);
      assert.equal(delivery.body.data.amount, 10_000);

      // 99 bps fee: 9,901 settle to available at once (settlement delay 0).
      const balance = await eventually(
        async () => {
          const res = await client.GET('/v1/merchants/me/balance');
          return res.data && res.data.balance.available === 9_901 ? res.data.balance : undefined;
        },
        'the payment to settle',
        60_000,
      );
      assert.deepEqual(balance, { available: 9_901, pending: 0, blocked: 0, total: 9_901 });

      const withdrawal = await client.POST('/v1/merchants/me/withdrawals', {
        body: { amount: 5_000, pixKeyType: 'EMAIL', pixKey: 'saque@pixflow.test', description: 'Saque' },
      });
      assert.equal(withdrawal.response.status, 201, JSON.stringify(withdrawal.error));
      assert.ok(withdrawal.data);
      assert.equal(withdrawal.data.withdraw.status, 'PROCESSING');
      assert.equal(withdrawal.data.balance.available, 4_901);
      const withdrawId = withdrawal.data.withdraw.id;

      const refund = await client.POST('/v1/charges/{id}/refund', {
        params: { path: { id: charge.id } },
        body: { amount: 3_000, reason: 'Devolução parcial' },
      });
      assert.equal(refund.response.status, 202, JSON.stringify(refund.error));
      assert.equal(refund.data?.refund.amount, 3_000);

      // The simulator completes the transfer and settles the devolução: both events arrive, signed.
      const all = await eventually(
        async () => {
          const got = receiver.requests(path);
          const events = got.map((r) => r.body.event);
          return events.includes('withdraw.completed') && events.includes('charge.refunded') ? got : undefined;
        },
        'withdraw.completed and charge.refunded',
        60_000,
      );
      for (const r of all) {
        assert.equal(r.headers['x-webhook-signature'], crypto.createHmac('sha256', secret).update(r.raw).digest('hex'));
        new StandardWebhook(secret).verify(r.raw.toString('utf8'), standardHeaders(r.headers));
      }
      const completed = all.find((r) => r.body.event === 'withdraw.completed');
      assert.equal(completed?.body.data.withdrawId, withdrawId);
      const refunded = all.find((r) => r.body.event === 'charge.refunded');
      assert.equal(refunded?.body.data.amount, '30.00');

      const got = await client.GET('/v1/merchants/me/withdrawals/{id}', { params: { path: { id: withdrawId } } });
      assert.equal(got.data?.withdraw.status, 'COMPLETED');
      const after = await client.GET('/v1/merchants/me/balance');
      assert.equal(after.data?.balance.available, 1_901);
      // The statement tells how it got there, and ends at that balance (docs/api.md "Statement").
      const statement = await client.GET('/v1/merchants/me/statement', { params: { query: { limit: '100' } } });
      assert.deepEqual(
        statement.data?.entries.map((e) => e.type),
        ['CHARGE_PAID', 'FEE', 'SETTLEMENT', 'WITHDRAWAL', 'REFUND'],
      );
      assert.equal(statement.data?.closing.available, 1_901);
      const detail = await client.GET('/v1/charges/{id}', { params: { path: { id: charge.id } } });
      assert.deepEqual(
        detail.data?.charge.refunds.map((r) => [r.kind, r.amount, r.status]),
        [['MERCHANT', 3_000, 'CONFIRMED']],
      );
      assert.equal(detail.data?.charge.refundedAmount, 3_000);
    } finally {
      await stop();
    }
  });
});
