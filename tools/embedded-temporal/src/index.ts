/**
 * Programmatic entry point: a Temporal server (in memory, or durable with `dbFilename`) on 127.0.0.1 serving WorkflowService and
 * TestService over real gRPC. Used by the CLI (bin/embedded-temporal) and embedded by
 * `npm start` (src/temporal/local-server.ts) in real-time mode.
 */
import { Clock } from './clock';
import { consoleLogger, type Logger } from './logger';
import { unaryMethods } from './rpc/grpc';
import { H2Server, type ServerTlsOptions } from './rpc/h2server';
import { operatorService } from './rpc/operator-service';
import http from 'node:http';
import { httpGatewayHandler, listen, type RunningHttpGateway } from './http-gateway';
import { uiRequestHandler } from './http-gateway/ui';
import { testService } from './rpc/test-service';
import { workflowService } from './rpc/workflow-service';
import { afterCommit, Journal } from './persistence/journal';
import type { Handler } from './rpc/grpc';
import { Store } from './store';
import type { ValueType } from './visibility/query';

export type { Logger } from './logger';
export type { ValueType } from './visibility/query';
export type { ServerTlsOptions } from './rpc/h2server';
export { consoleLogger, silentLogger } from './logger';

export interface ServerOptions {
  /** 0 = any free port. */
  port: number;
  host?: string;
  /**
   * true (default): virtual time that jumps to the next timer when nothing is in flight
   * (drop-in for the official time-skipping test server). false: wall-clock time, for `npm start`.
   */
  timeSkipping?: boolean;
  /**
   * Time-skipping only: start with one external lock held, as the official server does without
   * `--enable-time-skipping` (the SDK's client unlocks around `result()`). Default true.
   */
  startLocked?: boolean;
  logger?: Logger;
  /**
   * Keep all state in this file (append-only journal, see src/persistence/journal.ts) and read it
   * back at start, so a crash or restart loses nothing. Unset: in memory only.
   */
  dbFilename?: string;
  /** Namespaces to create at start if missing (the dev server's `--namespace`). */
  namespaces?: string[];
  /**
   * Custom search attributes known before any run sets one (the dev server's `--search-attribute
   * Name=Type`), so a filter on them is valid on an empty server (README "Visibility").
   */
  searchAttributes?: Record<string, ValueType>;
  /**
   * Park runs idle in a first-task delay after this many ms of wall time (src/dormant.ts,
   * docs/performance.md "Memory per idle run"); 0 = never. Default 1000 in real-time mode, 0 with time skipping.
   */
  parkIdleAfterMs?: number;
  /**
   * Also serve the HTTP API (JSON, the grpc-gateway surface the Temporal UI reads; README "HTTP
   * API") on this port of the same host; 0 = any free port. Unset: no HTTP API.
   */
  httpPort?: number;
  /**
   * Serve gRPC over TLS (HTTP/2, ALPN h2) with this certificate and key; with `clientCa`, also
   * require a client certificate issued by it (mTLS). README "TLS and API keys". Unset: cleartext.
   */
  tls?: ServerTlsOptions;
  /**
   * Refuse every gRPC call that lacks `authorization: Bearer <apiKey>` (how Temporal Cloud's API
   * keys are sent) with UNAUTHENTICATED. Unset: no check.
   */
  apiKey?: string;
  /**
   * Also serve the Temporal UI (README "Web UI") on this port of the same host, with the HTTP
   * API's routes on the same origin; 0 = any free port. Unset: no UI (the dev server's `--headless`).
   */
  uiPort?: number;
  /** The UI's static build (an `index.html` and its assets); required with `uiPort`. */
  uiDir?: string;
}

export interface RunningServer {
  port: number;
  address: string;
  /** The HTTP API's port, when `httpPort` was given. */
  httpPort?: number;
  /** The UI's port, when `uiPort` was given. */
  uiPort?: number;
  /** Stops accepting calls, ends open long polls and frees every timer. */
  close(): Promise<void>;
  /** For diagnostics and tests of the server itself. */
  readonly store: Store;
  readonly clock: Clock;
}

export const SERVER_VERSION = '1.24.0-pixflow-test-server';

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  if (opts.apiKey !== undefined && opts.httpPort !== undefined) {
    // The HTTP API does not check keys: it would be an open door beside the guarded gRPC port.
    throw new Error('apiKey cannot be combined with httpPort (the HTTP API does not check API keys)');
  }
  const logger = opts.logger ?? consoleLogger();
  const host = opts.host ?? '127.0.0.1';
  const timeSkipping = opts.timeSkipping ?? true;
  const clock = new Clock({
    timeSkipping,
    startLocked: opts.startLocked ?? true,
    onError: (err) => logger.error({ err: err instanceof Error ? err.stack : String(err) }, 'timer callback failed'),
  });
  const store = new Store(clock, logger);
  for (const [name, type] of Object.entries(opts.searchAttributes ?? {})) store.visibility.register(name, type);
  store.parkIdleAfterMs = Math.max(0, opts.parkIdleAfterMs ?? (timeSkipping ? 0 : 1000));
  let journal: Journal | undefined;
  if (opts.dbFilename) {
    const t0 = Date.now();
    const opened = Journal.open(opts.dbFilename, logger);
    journal = opened.journal;
    store.journal = journal;
    let restored: ReturnType<Store['restore']>;
    try {
      restored = store.restore(opened.loaded);
    } catch (err) {
      clock.close();
      journal.abandon();
      throw err;
    }
    logger.info({ file: opts.dbFilename, ...restored, ms: Date.now() - t0 }, 'durable state loaded');
  }
  for (const ns of opts.namespaces ?? []) {
    if (!store.namespaces.has(ns)) store.registerNamespace(ns, '', 24 * 3600 * 1000);
  }
  const durable = <T extends Record<string, Handler>>(impl: T): T => (journal ? afterCommit(impl, journal) : impl);
  // Histories of long workflows can be large; the SDK allows 128 MiB too.
  const server = new H2Server({ maxReceiveBytes: 128 * 1024 * 1024, logger, tls: opts.tls, apiKey: opts.apiKey });
  const services = [
    { name: 'temporal.api.workflowservice.v1.WorkflowService', impl: durable(workflowService(store, SERVER_VERSION)) },
    { name: 'temporal.api.operatorservice.v1.OperatorService', impl: durable(operatorService(store)) },
    { name: 'temporal.api.testservice.v1.TestService', impl: durable(testService(clock)) },
  ].map((s) => ({ name: s.name, methods: unaryMethods(s.name, s.impl) }));
  for (const s of services) server.addMethods(s.methods);
  const port = await server.listen(host, opts.port);
  // The HTTP API runs the same method tables (same handlers, same durable wrapper) in process.
  let gateway: RunningHttpGateway | undefined;
  let ui: RunningHttpGateway | undefined;
  if (opts.httpPort !== undefined || opts.uiPort !== undefined) {
    const api = (payloadShorthand: boolean): http.RequestListener =>
      httpGatewayHandler({
        host,
        port: opts.httpPort ?? 0,
        services: services.filter((s) => !s.name.includes('testservice')),
        logger,
        defaultNamespace: 'default',
        payloadShorthand,
      });
    try {
      if (opts.httpPort !== undefined) gateway = await listen(http.createServer(api(true)), host, opts.httpPort);
      if (opts.uiPort !== undefined) {
        if (!opts.uiDir) throw new Error('uiPort needs uiDir (the UI build)');
        // The UI decodes payloads from their long form (base64 `data`), as its own server sends them.
        const handler = uiRequestHandler({ dir: opts.uiDir, api: api(false) });
        ui = await listen(http.createServer(handler), host, opts.uiPort);
      }
    } catch (err) {
      await gateway?.close();
      await server.close(0);
      clock.close();
      await journal?.close();
      throw err;
    }
  }
  // Retention sweep, real-time mode only: with time skipping a test may jump weeks ahead and still
  // want to read the runs it just finished (the Java test server never purges either).
  const sweeper = setInterval(() => {
    if (timeSkipping) return;
    try {
      store.purgeClosed();
    } catch (err) {
      logger.error({ err: String(err) }, 'retention sweep failed');
    }
  }, 60_000);
  sweeper.unref();
  const parker =
    store.parkIdleAfterMs > 0
      ? setInterval(() => {
          try {
            store.parkIdle();
          } catch (err) {
            logger.error({ err: String(err) }, 'parking idle runs failed');
          }
        }, store.parkIdleAfterMs)
      : undefined;
  parker?.unref();
  let closed = false;
  return {
    port,
    address: `${host}:${port}`,
    httpPort: gateway?.port,
    uiPort: ui?.port,
    store,
    clock,
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(sweeper);
      clearInterval(parker);
      store.wfMatching.close();
      store.actMatching.close();
      await ui?.close();
      await gateway?.close();
      await server.close(1000);
      clock.close();
      await journal?.close();
    },
  };
}
