/**
 * The Temporal server `npm start` uses when TEMPORAL_ADDRESS is unset.
 *
 * Default: the project's own server (tools/temporal-test-server) in this process, in real time,
 * durable: its state is journaled to `<DATA_DIR>/temporal/pixflow-temporal.journal` and replayed at
 * start, so workflows in flight survive a crash or restart (see that server's README, "Durable
 * state"). Nothing is downloaded. `TEMPORAL_LOCAL_SERVER=cli` uses the official Temporal CLI dev
 * server through @temporalio/testing instead (downloaded on first use; needs internet), persisted
 * to `<DATA_DIR>/temporal.db`.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startServer } from '@pixflow/temporal-test-server';

export interface LocalTemporal {
  address: string;
  kind: 'temporal-cli-dev-server' | 'pixflow-durable-server';
  stop(): Promise<void>;
}

/** Where the embedded server keeps its journal. */
export function localJournalPath(dataDir: string): string {
  return path.join(dataDir, 'temporal', 'pixflow-temporal.journal');
}

export async function startLocalTemporal(opts: { dataDir: string; logger: Logger; server?: 'pixflow' | 'cli' }): Promise<LocalTemporal> {
  if (opts.server === 'cli') {
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        dbFilename: path.join(opts.dataDir, 'temporal.db'),
        ui: false,
        // The search attributes our workflows carry (docker-compose registers the same).
        extraArgs: ['--search-attribute', 'MerchantId=Keyword', '--search-attribute', 'EntityId=Keyword'],
      },
    });
    return { address: env.address, kind: 'temporal-cli-dev-server', stop: () => env.teardown() };
  }
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    timeSkipping: false,
    logger: opts.logger,
    dbFilename: localJournalPath(opts.dataDir),
  });
  return {
    address: `127.0.0.1:${server.port}`,
    kind: 'pixflow-durable-server',
    stop: () => server.close(),
  };
}
