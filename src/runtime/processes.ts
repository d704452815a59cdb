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
import { createActivities } from '../../activities';

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
}): Promise<RunningApi> {
  const { config, logger, knex } = opts;
  const temporal = await connectTemporalClient(opts.temporalAddress, config.TEMPORAL_NAMESPACE);
  const app = createApp({
    config,
    knex,
    logger,
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
  return {
    url: `http://${host}:${port}`,
    temporal,
    stop: async () => {
      // Stop accepting, let in-flight requests finish, then drop idle keep-alive sockets.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await temporal.close();
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
}): Promise<RunningWorker> {
  const { config, logger, knex } = opts;
  const connection = await connectWorkerConnection(opts.temporalAddress);
  const worker = await createPixflowWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    activities: createActivities({ knex, config, logger }),
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
