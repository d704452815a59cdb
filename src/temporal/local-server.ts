/**
 * The Temporal server `npm start` uses when TEMPORAL_ADDRESS is unset.
 *
 * First choice: the official Temporal CLI dev server through @temporalio/testing, persisted to
 * `<DATA_DIR>/temporal.db` so workflows survive a restart. It is downloaded on first use, which
 * fails at once on a machine without internet; then we run the project's own in-memory server
 * (tools/temporal-test-server) in real-time mode, in this process, and say loudly that in-flight
 * workflows do not survive a restart (the reconciler restarts them from the database).
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startServer } from '../../tools/temporal-test-server/src/index';


export interface LocalTemporal {
  address: string;
  kind: 'temporal-cli-dev-server' | 'pixflow-in-memory-server';
  stop(): Promise<void>;
}

export async function startLocalTemporal(opts: { dataDir: string; logger: Logger }): Promise<LocalTemporal> {
  try {
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        dbFilename: path.join(opts.dataDir, 'temporal.db'),
        ui: false,
        // The search attributes our workflows carry (docker-compose registers the same).
        extraArgs: ['--search-attribute', 'MerchantId=Keyword', '--search-attribute', 'EntityId=Keyword'],
      },
    });
    return {
      address: env.address,
      kind: 'temporal-cli-dev-server',
      stop: () => env.teardown(),
    };
  } catch (err) {
    opts.logger.warn(
      { reason: err instanceof Error ? err.message.slice(0, 160) : String(err) },
      'Temporal dev server unavailable (no download); using the in-memory pixflow Temporal server. ' +
        'In-flight workflows do NOT survive a restart; set TEMPORAL_ADDRESS for a real cluster.',
    );
  }
  const server = await startServer({ port: 0, host: '127.0.0.1', timeSkipping: false, logger: opts.logger });
  return {
    address: `127.0.0.1:${server.port}`,
    kind: 'pixflow-in-memory-server',
    stop: () => server.close(),
  };
}
