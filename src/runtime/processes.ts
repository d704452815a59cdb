/**
 * The two halves of the service, each startable alone (`npm run api`, `npm run worker`) or together
 * in one process (`npm start`). Each returns a `stop()` that drains before it resolves.
 */
import type { Server } from 'node:http';
import type { Knex } from 'knex';
import type { Worker } from '@temporalio/worker';
import type { Config } from '../config';
import type { Logger } from '../lib/logger';
import { createApp } from '../http/app';
import { connectTemporalClient, connectWorkerConnection, type TemporalClientHandle } from '../temporal/connection';
import { createPixflowWorker } from '../temporal/worker';
import { installTemporalRuntime } from '../temporal/runtime';
import { createActivities } from '../../activities';
import type { AcquirerHandle } from '../acquirer';
import { chargeWorkflowClient } from '../temporal/charge-workflow-client';
import { createChargesService } from '../services/charges';
import { chargeRoutes } from '../http/routes/charges';
import { acquirerCallbackRoutes } from '../http/routes/acquirer-callbacks';
import { sandboxRoutes } from '../http/routes/sandbox';
import { closeQrRenderer, warmQrRenderer } from '../pix';
import { reconcileChargeWorkflows } from '../services/charge-reconciler';
import { createAcquirerCallbacks } from '../services/acquirer-callbacks';
import { startInboxReconciler } from '../services/inbox-reconciler';
import { createChargeSandbox } from '../services/charge-sandbox';
import { createWebhooksService } from '../services/webhooks';
import { webhookRoutes } from '../http/routes/webhooks';
import { createWebhookDispatcher } from '../services/webhook-dispatcher';
import { webhookDeliveryWorkflowClient } from '../temporal/webhook-workflow-client';
import { webhookDeliverySettings } from '../services/webhook-delivery';
import { withdrawalWorkflowClient } from '../temporal/withdrawal-workflow-client';
import { createWithdrawalsService } from '../services/withdrawals';
import { createWithdrawalCallbackHandler } from '../services/withdrawal-callbacks';
import { createWithdrawalSandbox } from '../services/withdrawal-sandbox';
import { reconcileWithdrawalWorkflows } from '../services/withdrawal-reconciler';
import { withdrawalRoutes } from '../http/routes/withdrawals';
import { withdrawalSandboxRoutes } from '../http/routes/withdrawal-sandbox';
import { infractionWorkflowClient } from '../temporal/infraction-workflow-client';
import { pixKeyWorkflowClient } from '../temporal/pix-key-workflow-client';
import { createInfractionCallbacks } from '../services/infraction-callbacks';
import { createPixKeyCallbacks } from '../services/pix-key-callbacks';
import { createMedCallbackHandlers } from '../services/med-callback-handlers';
import { createPixKeyRegistration } from '../services/pix-keys';
import { createInfractionSandbox } from '../services/infraction-sandbox';
import { infractionSandboxRoutes } from '../http/routes/infraction-sandbox';
import { reconcilePixKeyRegistrations } from '../services/pix-key-reconciler';
import { reconcileInfractionWorkflows } from '../services/infraction-reconciler';

/** How often the API re-checks that every charge still owing something has its workflow. */
const RECONCILE_INTERVAL_MS = 5 * 60_000;

export interface RunningApi {
  url: string;
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
  const temporal = await connectTemporalClient(opts.temporalAddress, config.TEMPORAL_NAMESPACE);
  const workflows = chargeWorkflowClient(temporal.client, config.TEMPORAL_TASK_QUEUE, {
    searchAttributes: config.TEMPORAL_SEARCH_ATTRIBUTES,
  });
  const charges = createChargesService({ knex, config, logger, acquirer: opts.acquirer.acquirer, workflows });
  const withdrawalWorkflows = withdrawalWorkflowClient(temporal.client, config.TEMPORAL_TASK_QUEUE, {
    searchAttributes: config.TEMPORAL_SEARCH_ATTRIBUTES,
  });
  const withdrawals = createWithdrawalsService({ knex, logger, workflows: withdrawalWorkflows });
  const workflowOpts = { searchAttributes: config.TEMPORAL_SEARCH_ATTRIBUTES };
  const infractionWorkflows = infractionWorkflowClient(temporal.client, config.TEMPORAL_TASK_QUEUE, workflowOpts);
  const pixKeyWorkflows = pixKeyWorkflowClient(temporal.client, config.TEMPORAL_TASK_QUEUE, workflowOpts);
  await warmQrRenderer();
  const simulator = opts.acquirer.simulator;
  // Restart any charge workflow that is missing (lost with an in-memory Temporal, or never started
  // because Temporal was down when the charge was created): at start, then every few minutes.
  let reconciling: Promise<unknown> = Promise.resolve();
  const reconcile = (): void => {
    if (config.RECONCILER === 'off') return;
    reconciling = Promise.all([
      reconcileChargeWorkflows({ knex, workflows, logger }).catch((err: unknown) =>
        logger.error({ err }, 'charge workflow reconciliation failed'),
      ),
      reconcileWithdrawalWorkflows({ knex, workflows: withdrawalWorkflows, logger }).catch((err: unknown) =>
        logger.error({ err }, 'withdrawal workflow reconciliation failed'),
      ),
      reconcileInfractionWorkflows({ knex, workflows: infractionWorkflows, logger }).catch((err: unknown) =>
        logger.error({ err }, 'infraction workflow reconciliation failed'),
      ),
      reconcilePixKeyRegistrations({ knex, workflows: pixKeyWorkflows, logger }).catch((err: unknown) =>
        logger.error({ err }, 'PIX key registration reconciliation failed'),
      ),
    ]);
  };
  reconcile();
  const reconcileTimer = setInterval(reconcile, RECONCILE_INTERVAL_MS);
  reconcileTimer.unref();
  // Starts the workflows of committed webhook deliveries (woken by NOTIFY, with a poll and a reconciler).
  const webhookDispatcher = createWebhookDispatcher({
    knex,
    logger,
    workflows: webhookDeliveryWorkflowClient(temporal.client, config.TEMPORAL_TASK_QUEUE, {
      searchAttributes: config.TEMPORAL_SEARCH_ATTRIBUTES,
    }),
  });
  await webhookDispatcher.start();
  const callbacks = createAcquirerCallbacks({
    knex,
    workflows,
    logger,
    acquirer: opts.acquirer.acquirer,
    handlers: {
      transfers: createWithdrawalCallbackHandler({ knex, workflows: withdrawalWorkflows }),
      ...createMedCallbackHandlers({
        infractions: createInfractionCallbacks({ knex, workflows: infractionWorkflows, logger }),
        pixKeys: createPixKeyCallbacks({ registration: createPixKeyRegistration({ knex, acquirer: opts.acquirer.acquirer, logger }) }),
      }),
    },
  });
  const inboxReconciler = startInboxReconciler({ inbox: callbacks.inbox, logger });
  const app = createApp({
    config,
    knex,
    logger,
    routes: [
      chargeRoutes(charges),
      withdrawalRoutes(withdrawals),
      acquirerCallbackRoutes({
        secret: config.ACQUIRER_CALLBACK_SECRET,
        callbacks,
        bodyLimitBytes: config.BODY_LIMIT_BYTES,
      }),
      webhookRoutes(createWebhooksService({ knex, config })),
      ...(simulator ? [sandboxRoutes(createChargeSandbox({ charges, simulator: simulator.control }))] : []),
      ...(simulator ? [withdrawalSandboxRoutes(createWithdrawalSandbox({ knex, withdrawals, simulator: simulator.control }))] : []),
      ...(simulator ? [infractionSandboxRoutes(createInfractionSandbox({ knex, simulator: simulator.control }))] : []),
    ],
    metricsToken: config.METRICS_TOKEN,
    onPixKeyCreated: (key) => pixKeyWorkflows.register({ id: key.id, merchantId: key.merchantId }),
    checks: {
      // GetSystemInfo answers on every Temporal server, ours included (the gRPC health service may not).
      temporal: () => temporal.connection.workflowService.getSystemInfo({}),
    },
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.PORT, config.HOST, () => resolve(s));
    s.once('error', reject);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  const host = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  const url = `http://${host}:${port}`;
  // The in-process simulator calls us back here (PUBLIC_BASE_URL when we sit behind a proxy).
  simulator?.control.setCallbackBaseUrl(config.PUBLIC_BASE_URL ?? url);
  return {
    url,
    temporal,
    stop: async () => {
      clearInterval(reconcileTimer);
      await reconciling;
      await webhookDispatcher.stop();
      await inboxReconciler.stop();
      // Stop accepting, let in-flight requests finish, then drop idle keep-alive sockets.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await temporal.close();
      await closeQrRenderer();
    },
  };
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
}): Promise<RunningWorker> {
  const { config, logger, knex } = opts;
  installTemporalRuntime({ logger, level: config.TEMPORAL_LOG_LEVEL, metricsAddress: config.TEMPORAL_METRICS_ADDRESS });
  const connection = await connectWorkerConnection(opts.temporalAddress);
  const worker = await createPixflowWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    activities: createActivities({ knex, logger, acquirer: opts.acquirer.acquirer, webhooks: webhookDeliverySettings(config) }),
    logger,
  });
  const running = worker.run();
  running.catch((err: unknown) => logger.error({ err }, 'worker stopped with an error'));
  return {
    worker,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    },
  };
}
