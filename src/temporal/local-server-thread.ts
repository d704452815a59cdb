/**
 * Worker-thread side of the embedded Temporal server (local-server.ts): runs the project's server
 * on this thread's own event loop, so its gRPC and history work never delays an API request.
 * Posts `{port, httpPort, uiPort}` once listening (gRPC, its HTTP API, the UI; or `{error}`), and closes the
 * server when told `stop`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../lib/logger';
import { startServer } from '@pixflow/embedded-temporal';
import { ENTITY_ID_ATTRIBUTE_NAME, MERCHANT_ID_ATTRIBUTE_NAME } from './search-attribute-names';

export interface LocalServerThreadData {
  dbFilename: string;
  logLevel: string;
  /** The Temporal UI's build folder: served on a port of its own (with the HTTP API) when set. */
  uiDir?: string;
}

export type LocalServerThreadMessage =
  { port: number; httpPort?: number; uiPort?: number } | { error: string } | { stopped: true };

const port = parentPort;
if (port) {
  const data = workerData as LocalServerThreadData;
  const logger = createLogger({ level: data.logLevel as 'info' }).child({ component: 'temporal-server' });
  startServer({
    port: 0,
    httpPort: 0,
    ...(data.uiDir ? { uiPort: 0, uiDir: data.uiDir } : {}),
    host: '127.0.0.1',
    timeSkipping: false,
    logger,
    dbFilename: data.dbFilename,
    // The search attributes our workflows carry, known before the first run sets them (docker-compose
    // registers the same), so `MerchantId = '…'` is a valid filter on a fresh server.
    searchAttributes: { [MERCHANT_ID_ATTRIBUTE_NAME]: 'Keyword', [ENTITY_ID_ATTRIBUTE_NAME]: 'Keyword' },
  }).then(
    (server) => {
      port.on('message', (msg: unknown) => {
        if (msg !== 'stop') return;
        void server.close().finally(() => {
          const stopped: LocalServerThreadMessage = { stopped: true };
          port.postMessage(stopped);
        });
      });
      const ready: LocalServerThreadMessage = { port: server.port, httpPort: server.httpPort, uiPort: server.uiPort };
      port.postMessage(ready);
    },
    (err: unknown) => {
      const failed: LocalServerThreadMessage = { error: err instanceof Error ? err.message : String(err) };
      port.postMessage(failed);
    },
  );
}
