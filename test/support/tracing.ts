/**
 * A traced stack for test/api/tracing.test.ts (docs/operations.md "Tracing"): the global
 * OpenTelemetry provider over an in-memory exporter, then — built after it, as the processes do —
 * the acquirer simulator, an API with the charge, callback, sandbox and webhook routes, a Temporal
 * client with the tracing interceptor, a worker with the tracing activity interceptor and workflow
 * sink (on the run's one workflow bundle, which carries the workflow interceptors), the webhook
 * dispatcher and a real receiver. `close()` leaves nothing behind: workflows on its queue are
 * terminated, the worker stops, and the provider is unregistered so later suites run untraced.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Knex } from 'knex';
import { decodeTime } from 'ulid';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { sandboxControlOf } from '../../src/acquirer/sandbox-control';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator } from '../../src/acquirer/simulator/server';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { chargeRoutes } from '../../src/http/routes/charges';
import { sandboxRoutes } from '../../src/http/routes/sandbox/charges';
import { webhookRoutes } from '../../src/http/routes/webhooks';
import { createLogger } from '../../src/lib/logger';
import {
  installTracing,
  temporalClientInterceptors,
  workerTracing,
  type InstalledTracing,
} from '../../src/observability/tracing';
import { loadConfig } from '../../src/config';
import { createActivities, createPaymentServices, createWorkflowClients } from '../../src/runtime/composition';
import { DEFAULT_WEBHOOK_DELIVERY_SETTINGS } from '../../src/services/webhooks/delivery';
import type { DeliveryRef } from '../../src/temporal/clients/webhook';
import { startApi, type TestApi } from './api';
import { CALLBACK_SECRET } from './charges';
import { getTestDb } from './db';
import { devEnv, terminateRunning, uniqueTaskQueue, workflowBundle } from './temporal';
import { startReceiver, type Receiver } from './webhook-receiver';
import { deliveriesDispatchedElsewhere } from './webhooks';

const SIMULATOR_CLIENT = { clientId: 'pixflow-tracing-test', clientSecret: 'pixflow-tracing-test-secret' };

export interface TracedStack {
  api: TestApi;
  knex: Knex;
  receiver: Receiver;
  exporter: InMemorySpanExporter;
  /** Every JSON log line the stack's logger wrote. */
  logLines: Array<Record<string, unknown>>;
  /** Deliveries of this merchant are dispatched by this stack only (the shared webhook stack skips them). */
  claimMerchant(merchantId: string): void;
  close(): Promise<void>;
}

export async function startTracedStack(): Promise<TracedStack> {
  const exporter = new InMemorySpanExporter();
  const tracing: InstalledTracing = await installTracing({
    serviceName: 'pixflow-test',
    processor: new SimpleSpanProcessor(exporter),
  });
  const cleanups: Array<() => Promise<void>> = [() => tracing.shutdown()];
  const close = async (): Promise<void> => {
    while (cleanups.length > 0) await cleanups.pop()?.();
  };
  try {
    const { knex } = await getTestDb();
    // The dev server: the test server drops the header a signal-with-start carries the trace in.
    const env = await devEnv();
    const logLines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString('utf8').split('\n'))
            if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    });
    const simulator = await startAcquirerSimulator({
      callbackSecret: CALLBACK_SECRET,
      ...SIMULATOR_CLIENT,
      autoComplete: false,
    });
    cleanups.push(() => simulator.close());
    const acquirer = new HttpAcquirer({ baseUrl: simulator.url, ...SIMULATOR_CLIENT, timeoutMs: 2_000 });
    const taskQueue = uniqueTaskQueue('tracing');
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: path.join(os.tmpdir(), 'pixflow-tracing-test'),
      JWT_SECRET: crypto.randomBytes(32).toString('hex'),
      API_KEY_PEPPER: crypto.randomBytes(32).toString('hex'),
      ACQUIRER_CALLBACK_SECRET: CALLBACK_SECRET,
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_SEARCH_ATTRIBUTES: 'false',
    });
    const client = new Client({
      connection: env.connection,
      namespace: env.namespace ?? 'default',
      interceptors: temporalClientInterceptors(),
    });
    const clients = createWorkflowClients(client, config);
    // Only this stack's merchants' deliveries start here. Older unstarted ones were left by suites
    // whose APIs run no dispatcher: answered as started (as the shared webhook stack does), so the
    // dispatcher's pass ends; newer ones of other merchants are not ours ("not started").
    const merchants = new Set<string>();
    const since = Date.now() - 1_000;
    const workflows = {
      ...clients,
      webhookDeliveries: {
        start: (d: DeliveryRef) =>
          merchants.has(d.merchantId)
            ? clients.webhookDeliveries.start(d)
            : Promise.resolve(decodeTime(d.deliveryId.slice(d.deliveryId.indexOf('_') + 1)) < since),
      },
    };
    const services = createPaymentServices({
      knex,
      config,
      logger,
      acquirer: {
        acquirer,
        sandbox: sandboxControlOf(simulator.control),
        url: simulator.url,
        close: () => Promise.resolve(),
      },
      workflows,
    });
    const sandbox = services.sandbox;
    assert.ok(sandbox, 'the simulator gives the sandbox');
    const api = await startApi({
      deps: {
        logger,
        routes: [
          chargeRoutes(services.charges),
          acquirerCallbackRoutes({ secret: CALLBACK_SECRET, callbacks: services.callbacks }),
          sandboxRoutes(sandbox.charges),
          webhookRoutes(services.webhooks),
        ],
      },
    });
    cleanups.push(() => api.close());
    simulator.control.setCallbackBaseUrl(api.baseUrl);
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());

    const traced = workerTracing();
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowBundle: await workflowBundle(require.resolve('../../workflows')),
      activities: createActivities({ knex, logger, acquirer, webhooks: DEFAULT_WEBHOOK_DELIVERY_SETTINGS }),
      interceptors: { activity: traced.activityInterceptors },
      sinks: traced.sinks,
    });
    const running = worker.run();
    cleanups.push(async () => {
      // Nothing of ours may stay running on a queue nobody polls (it would hold the shared clock).
      await terminateRunning(client, taskQueue);
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      const left: string[] = [];
      for await (const wf of client.workflow.list({
        query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
      }))
        left.push(wf.workflowId);
      assert.deepEqual(left, [], 'no workflow of the traced stack is left running');
    });

    const dispatcher = services.webhookDispatcher;
    await dispatcher.start();
    cleanups.push(async () => {
      await dispatcher.stop();
      for (const m of merchants) deliveriesDispatchedElsewhere.delete(m);
    });

    return {
      api,
      knex,
      receiver,
      exporter,
      logLines,
      claimMerchant: (merchantId) => {
        merchants.add(merchantId);
        deliveriesDispatchedElsewhere.add(merchantId);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
