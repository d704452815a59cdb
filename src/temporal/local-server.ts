/**
 * The Temporal server `npm start` uses when TEMPORAL_ADDRESS is unset.
 *
 * Default: the project's own server (tools/embedded-temporal) on a worker thread of this
 * process (its own event loop, so its gRPC and history work never delays an API request;
 * docs/performance.md "Where a charge's time goes"), in real time, durable: its state is journaled to
 * `<DATA_DIR>/temporal/pixflow-temporal.journal` and replayed at start, so workflows in flight
 * survive a crash or restart (see that server's README, "Durable state"). Nothing is downloaded. `TEMPORAL_LOCAL_SERVER=cli` uses the official Temporal CLI dev
 * server through @temporalio/testing instead (downloaded on first use; needs internet), persisted
 * to `<DATA_DIR>/temporal.db`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { LocalServerThreadData, LocalServerThreadMessage } from './local-server-thread';
import { workerBootstrap } from '../lib/threads';

export interface LocalTemporal {
  address: string;
  /** The embedded server's HTTP API (grpc-gateway surface), `http://host:port`; none for the CLI's. */
  httpUrl?: string;
  /** The Temporal UI on the embedded server, `http://host:port`, when `uiDir` was given. */
  uiUrl?: string;
  kind: 'temporal-cli-dev-server' | 'pixflow-durable-server';
  stop(): Promise<void>;
}

/**
 * Where `npm start` writes its embedded Temporal's address while it runs (a new port each start),
 * so `npm run ops -- workflows …` beside it needs no TEMPORAL_ADDRESS.
 */
export function localAddressFile(dataDir: string): string {
  return path.join(dataDir, 'temporal', 'address');
}

/** The address `npm start` wrote, if one is running under `dataDir`. */
export function readLocalAddress(dataDir: string): string | undefined {
  try {
    return fs.readFileSync(localAddressFile(dataDir), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Where the embedded server keeps its journal. */
export function localJournalPath(dataDir: string): string {
  return path.join(dataDir, 'temporal', 'pixflow-temporal.journal');
}

export async function startLocalTemporal(opts: {
  dataDir: string;
  logger: Logger;
  server?: 'pixflow' | 'cli';
  /** Serve the Temporal UI from this build folder (src/temporal/ui-build.ts); embedded server only. */
  uiDir?: string;
}): Promise<LocalTemporal> {
  if (opts.server === 'cli') {
    // Loaded only here: @temporalio/testing is a development dependency, absent from the image.
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
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
  const thread = new Worker(workerBootstrap(path.join(__dirname, 'local-server-thread'), __filename), {
    eval: true,
    name: 'temporal-server',
    workerData: {
      dbFilename: localJournalPath(opts.dataDir),
      logLevel: opts.logger.level,
      uiDir: opts.uiDir,
    } satisfies LocalServerThreadData,
  });
  const next = (): Promise<LocalServerThreadMessage> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number): void => reject(new Error(`embedded Temporal server thread exited (${code})`));
      thread.once('error', reject);
      thread.once('exit', onExit);
      thread.once('message', (msg: LocalServerThreadMessage) => {
        thread.off('error', reject);
        thread.off('exit', onExit);
        resolve(msg);
      });
    });
  const first = await next();
  if (!('port' in first)) {
    await thread.terminate();
    throw new Error(`embedded Temporal server did not start: ${'error' in first ? first.error : 'no port'}`);
  }
  return {
    address: `127.0.0.1:${first.port}`,
    httpUrl: first.httpPort ? `http://127.0.0.1:${first.httpPort}` : undefined,
    uiUrl: first.uiPort ? `http://127.0.0.1:${first.uiPort}` : undefined,
    kind: 'pixflow-durable-server',
    stop: async () => {
      const stopped = next().catch(() => undefined);
      thread.postMessage('stop');
      await stopped;
      await thread.terminate();
    },
  };
}
