/**
 * The two halves of the service, each startable alone (`npm run api`, `npm run worker`) or together
 * in one process (`npm start`). Each returns a `stop()` that drains before it resolves.
 */
import type { Server } from 'node:http';
import type { Knex } from 'knex';
import type Koa from 'koa';
import type { Worker } from '@temporalio/worker';
import type { Config } from '../config';
import type { Logger } from '../lib/logger';
import { createApp } from '../http/app';
import type { AppState, RouteModule } from '../http/types';
import { stopCacheInvalidation } from '../services/platform/cache-invalidation';
import {
  clientOver,
  connectTemporalClient,
  connectWorkerConnection,
  temporalSecurity,
  type TemporalClientHandle,
} from '../temporal/connection';
import { createPixflowWorker } from '../temporal/worker';
import { offThreadChargeWorkflows } from '../temporal/charge-workflows-off-thread';
import { installTemporalRuntime } from '../temporal/runtime';
import { webhookDeliveryWorkflowClient } from '../temporal/clients/webhook';
import { createActivities } from './composition';
import type { AcquirerHandle } from '../acquirer';
import { chargeRoutes } from '../http/routes/charges';
import { subscriptionRoutes } from '../http/routes/subscriptions';
import { acquirerCallbackRoutes } from '../http/routes/acquirer-callbacks';
import { sandboxRoutes } from '../http/routes/sandbox/charges';
import { closeQrRenderer, warmQrRenderer } from '../pix';
import { reconcileChargeWorkflows } from '../services/charges/reconciler';
import { startInboxReconciler } from '../services/inbox/reconciler';
import { startIdempotencyKeyPurge } from '../services/platform/idempotency-purge';
import { webhookRoutes } from '../http/routes/webhooks';
import { webhookDeliverySettings } from '../services/webhooks/delivery';
import { reconcileWithdrawalWorkflows } from '../services/withdrawals/reconciler';
import { withdrawalRoutes } from '../http/routes/withdrawals';
import { infractionRoutes } from '../http/routes/infractions';
import { withdrawalSandboxRoutes } from '../http/routes/sandbox/withdrawals';
import { infractionSandboxRoutes } from '../http/routes/sandbox/infractions';
import { subscriptionSandboxRoutes } from '../http/routes/sandbox/subscriptions';
import { pixKeySandboxRoutes } from '../http/routes/sandbox/pix-keys';
import { reconcilePixKeyRegistrations } from '../services/pix-keys/reconciler';
import { reconcileInfractionWorkflows } from '../services/med/reconciler';
import {
  createAccountServices,
  createPaymentServices,
  createWorkflowClients,
  type PaymentServices,
} from './composition';
import { watchCallbackInbox } from '../observability/metrics';
import { flushTracing, tracingFromConfig } from '../observability/tracing';
import type { Progress } from '../process/progress';

/** How often the API re-checks that every charge still owing something has its workflow. */
const RECONCILE_INTERVAL_MS = 5 * 60_000;

export interface RunningApi {
  url: string;
  /** The Koa app it serves (tests enumerate its mounted routes from it). */
  app: Koa<AppState>;
  temporal: TemporalClientHandle;
  stop(): Promise<void>;
}

export async function startApi(opts: {
  config: Config;
  logger: Logger;
  knex: Knex;
  temporalAddress: string;
  acquirer: AcquirerHandle;
}): Promise<RunningApi> {
  const { config, logger, knex } = opts;
  const { temporal, chargeThread, clients } = await connectApiTemporal(config, logger, opts.temporalAddress);
  const services = createPaymentServices({ knex, config, logger, acquirer: opts.acquirer, workflows: clients });
  await warmQrRenderer(config.QR_THREADS);
  const background = await startApiBackground({ config, logger, knex, clients, services });
  const onPixKeyCreated = (key: { id: string; merchantId: string }) =>
    clients.pixKeys.register({ id: key.id, merchantId: key.merchantId });
  const app = createApp({
    config,
    knex,
    logger,
    services: createAccountServices({ knex, config, logger, onPixKeyCreated }),
    routes: apiRouteModules(config, services),
    metricsToken: config.METRICS_TOKEN,
    checks: {
      // GetSystemInfo answers on every Temporal server, ours included (the gRPC health service may not).
      temporal: () => temporal.connection.workflowService.getSystemInfo({}),
    },
  });
  const { server, url } = await listen(app, config);
  // The embedded simulator calls us back here (PUBLIC_BASE_URL when we sit behind a proxy).
  await opts.acquirer.sandbox?.setCallbackBaseUrl(config.PUBLIC_BASE_URL ?? url);
  return {
    url,
    app,
    temporal,
    stop: async () => {
      await background.stop();
      // Stop accepting, let in-flight requests finish, then drop idle keep-alive sockets.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await chargeThread?.close();
      await temporal.close();
      await closeQrRenderer();
      await stopCacheInvalidation(knex);
      await flushTracing().catch((err: unknown) => logger.warn({ err }, 'tracing flush failed'));
    },
  };
}

/** The API's Temporal client, and the workflow clients built on it. */
async function connectApiTemporal(config: Config, logger: Logger, address: string) {
  // Before the Temporal client is made: its interceptors depend on it (docs/operations.md "Tracing").
  await tracingFromConfig(config);
  // The worker of `npm start` installed the runtime already (with its metrics); an API process of
  // its own installs it here, without metrics, for its native client.
  if (config.TEMPORAL_CLIENT_NATIVE) installTemporalRuntime({ logger, level: config.TEMPORAL_LOG_LEVEL });
  const security = temporalSecurity(config);
  const temporal = await connectTemporalClient(address, config.TEMPORAL_NAMESPACE, {
    native: config.TEMPORAL_CLIENT_NATIVE,
    security,
  });
  // Charge creation starts a workflow per request: its client runs on a thread of its own
  // (docs/performance.md "Where a charge's time goes"); the other, rarer workflow calls stay on this thread's client.
  const chargeThread = config.TEMPORAL_CLIENT_THREAD
    ? await offThreadChargeWorkflows({
        address,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        searchAttributes: config.TEMPORAL_SEARCH_ATTRIBUTES,
        security,
      })
    : undefined;
  const mainThreadClients = createWorkflowClients(temporal.client, config);
  const clients = chargeThread ? { ...mainThreadClients, charges: chargeThread.workflows } : mainThreadClients;
  return { temporal, chargeThread, clients };
}

type ApiWorkflowClients = Awaited<ReturnType<typeof connectApiTemporal>>['clients'];

/** The API's background duties: reconcilers, the webhook dispatcher, the inbox's re-hand-off, key purge. */
async function startApiBackground(d: {
  config: Config;
  logger: Logger;
  knex: Knex;
  clients: ApiWorkflowClients;
  services: PaymentServices;
}): Promise<{ stop(): Promise<void> }> {
  const reconcilers = startWorkflowReconcilers(d);
  // Starts the workflows of committed webhook deliveries (woken by NOTIFY, with a poll and a reconciler).
  const webhookDispatcher = d.services.webhookDispatcher;
  await webhookDispatcher.start();
  const callbacks = d.services.callbacks;
  const inboxReconciler = startInboxReconciler({ inbox: callbacks.inbox, logger: d.logger });
  // The API serves /metrics: its scrape reads the inbox's backlog (docs/operations.md "Metrics and logs").
  watchCallbackInbox(() => callbacks.inbox.backlog());
  // Expired idempotency keys go hourly (docs/api.md "Idempotency").
  const idempotencyPurge = startIdempotencyKeyPurge({
    knex: d.knex,
    logger: d.logger,
    ttlSeconds: d.config.IDEMPOTENCY_KEY_TTL_SECONDS,
  });
  return {
    stop: async () => {
      await reconcilers.stop();
      await webhookDispatcher.stop();
      await inboxReconciler.stop();
      await idempotencyPurge.stop();
    },
  };
}

/**
 * Restarts any workflow that is missing (lost with an in-memory Temporal, or never started because
 * Temporal was down when its row was written): at start, then every few minutes.
 */
function startWorkflowReconcilers(d: { config: Config; logger: Logger; knex: Knex; clients: ApiWorkflowClients }): {
  stop(): Promise<void>;
} {
  const { config, logger, knex, clients } = d;
  let reconciling: Promise<unknown> = Promise.resolve();
  const logged = (what: string) => (err: unknown) => logger.error({ err }, `${what} reconciliation failed`);
  const reconcile = (): void => {
    if (config.RECONCILER === 'off') return;
    reconciling = Promise.all([
      reconcileChargeWorkflows({ knex, workflows: clients.charges, logger }).catch(logged('charge workflow')),
      reconcileWithdrawalWorkflows({ knex, workflows: clients.withdrawals, logger }).catch(
        logged('withdrawal workflow'),
      ),
      reconcileInfractionWorkflows({ knex, workflows: clients.infractions, logger }).catch(
        logged('infraction workflow'),
      ),
      reconcilePixKeyRegistrations({ knex, workflows: clients.pixKeys, logger }).catch(logged('PIX key registration')),
    ]);
  };
  reconcile();
  const timer = setInterval(reconcile, RECONCILE_INTERVAL_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await reconciling;
    },
  };
}

/** Every route module the API mounts; the sandbox's only when the acquirer is the simulator. */
function apiRouteModules(config: Config, services: PaymentServices): RouteModule[] {
  const sandbox = services.sandbox;
  return [
    chargeRoutes(services.charges, services.dueDate),
    subscriptionRoutes(services.subscriptions),
    withdrawalRoutes(services.withdrawals),
    infractionRoutes(services.infractions),
    acquirerCallbackRoutes({
      secret: config.ACQUIRER_CALLBACK_SECRET,
      callbacks: services.callbacks,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
    }),
    webhookRoutes(services.webhooks),
    ...(sandbox ? sandboxRouteModules(sandbox) : []),
  ];
}

/** Listens on HOST:PORT; the URL others reach it at (127.0.0.1 for a server bound to every interface). */
async function listen(app: Koa<AppState>, config: Config): Promise<{ server: Server; url: string }> {
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.PORT, config.HOST, () => resolve(s));
    s.once('error', reject);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  const host = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  return { server, url: `http://${host}:${port}` };
}

export interface RunningWorker {
  worker: Worker;
  stop(): Promise<void>;
}

export async function startWorker(opts: {
  config: Config;
  logger: Logger;
  knex: Knex;
  temporalAddress: string;
  acquirer: AcquirerHandle;
  progress?: Progress;
}): Promise<RunningWorker> {
  const { config, logger, knex } = opts;
  await tracingFromConfig(config);
  installTemporalRuntime({ logger, level: config.TEMPORAL_LOG_LEVEL, metricsAddress: config.TEMPORAL_METRICS_ADDRESS });
  const connection = await connectWorkerConnection(opts.temporalAddress, temporalSecurity(config));
  // A payment's webhook deliveries are started from here right after it commits, over the worker's
  // own connection, as the API would start them (docs/performance.md "Payment to webhook: the timeline").
  const webhookDeliveries = webhookDeliveryWorkflowClient(
    clientOver(connection, config.TEMPORAL_NAMESPACE),
    config.TEMPORAL_TASK_QUEUE,
    { searchAttributes: config.TEMPORAL_SEARCH_ATTRIBUTES },
  );
  const worker = await createPixflowWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    activities: createActivities({
      knex,
      logger,
      acquirer: opts.acquirer.acquirer,
      webhooks: webhookDeliverySettings(config),
      webhookDeliveries,
    }),
    logger,
    maxCachedWorkflows: config.TEMPORAL_MAX_CACHED_WORKFLOWS,
    bundleInChild: true,
    progress: opts.progress,
  });
  const running = worker.run();
  running.catch((err: unknown) => logger.error({ err }, 'worker stopped with an error'));
  return {
    worker,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      await flushTracing().catch((err: unknown) => logger.warn({ err }, 'tracing flush failed'));
    },
  };
}

/** The sandbox's endpoints (docs/api.md "Sandbox"), mounted only while the acquirer is the simulator. */
function sandboxRouteModules(sandbox: NonNullable<PaymentServices['sandbox']>): RouteModule[] {
  return [
    sandboxRoutes(sandbox.charges),
    withdrawalSandboxRoutes(sandbox.withdrawals),
    infractionSandboxRoutes(sandbox.infractions),
    pixKeySandboxRoutes(sandbox.pixKeys),
    subscriptionSandboxRoutes(sandbox.subscriptions),
  ];
}
