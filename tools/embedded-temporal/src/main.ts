/**
 * CLI.
 *   embedded-temporal <port> [--enable-time-skipping]
 *       Drop-in for the official Java test server as spawned by @temporalio/testing: time skipping,
 *       starting locked unless --enable-time-skipping; only warnings are logged.
 *   embedded-temporal --port <n> [--time-skipping] [--quiet] [--db-filename FILE] [--http-port H]
 *       Standalone: real time unless --time-skipping; logs each workflow start/close at info.
 *   embedded-temporal server start-dev --port P [--namespace N] [--ip I] [--db-filename F] [--http-port H] ...
 *       Drop-in for the Temporal CLI dev server as spawned by `TestWorkflowEnvironment.createLocal`:
 *       real time; with --db-filename, durable. Serves the Temporal UI on --ui-port (default: the
 *       gRPC port + 1000, as the dev server; any free port when --port is 0) unless --headless
 *       (README "Web UI"). Logging and dynamic-config flags are accepted and ignored;
 *       --search-attribute Name=Type registers a search attribute; other unknown flags are ignored
 *       with one warning.
 *   --http-port H serves the HTTP API on H (README "HTTP API"), as the dev server does.
 *   --tls-cert FILE --tls-key FILE [--tls-client-ca FILE] [--api-key KEY] (standalone and
 *       start-dev): gRPC over TLS, client certificates from that CA required, calls without
 *       `authorization: Bearer KEY` refused (README "TLS and API keys").
 *   --ui-port U (standalone too) serves the UI and the HTTP API on U; --ui-dir D reads the UI's
 *       build from D (default: the repo's tools/temporal-ui/build).
 * Exits cleanly on SIGTERM/SIGINT.
 *
 * TEMPORAL_TEST_SERVER_PARK_IDLE_MS=<ms> sets how soon idle runs are parked (README, "Memory per
 * idle run"; 0 = never) in every mode, time skipping included: the way to run any test suite with
 * parking forced on everywhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { consoleLogger, startServer, type ServerOptions, type ValueType } from './index';

/** Where `npm run build -w @pixflow/temporal-ui` writes the UI (the sibling workspace package). */
export const DEFAULT_UI_DIR = path.resolve(__dirname, '..', '..', 'temporal-ui', 'build');

const valueTypes: ValueType[] = ['Keyword', 'KeywordList', 'Text', 'Int', 'Double', 'Bool', 'Datetime'];

function usage(msg: string): never {
  process.stderr.write(
    `${msg}\nusage: embedded-temporal <port> [--enable-time-skipping]\n` +
      `       embedded-temporal --port <n> [--time-skipping] [--quiet] [--db-filename FILE] [--http-port H] [--ui-port U]\n` +
      `       embedded-temporal server start-dev --port <n> [--namespace N] [--ip I] [--db-filename FILE] [--http-port H]\n` +
      `                            [--ui-port U | --headless] [--ui-dir DIR]\n` +
      `       (standalone and start-dev) [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]] [--api-key KEY]\n`,
  );
  process.exit(2);
}

export type CliOptions = ServerOptions & { quiet: boolean; warnings: string[] };

/** The security flags, shared by the standalone and start-dev shapes (files read here, at parse). */
interface SecurityFlags {
  tlsCert?: string;
  tlsKey?: string;
  tlsClientCa?: string;
  apiKey?: string;
}

const securityFlags: Record<string, keyof SecurityFlags> = {
  '--tls-cert': 'tlsCert',
  '--tls-key': 'tlsKey',
  '--tls-client-ca': 'tlsClientCa',
  '--api-key': 'apiKey',
};

function securityOptions(f: SecurityFlags): Pick<ServerOptions, 'tls' | 'apiKey'> {
  if ((f.tlsCert === undefined) !== (f.tlsKey === undefined)) usage('--tls-cert and --tls-key go together');
  if (f.tlsClientCa !== undefined && f.tlsCert === undefined) usage('--tls-client-ca needs --tls-cert and --tls-key');
  if (f.apiKey === '') usage('--api-key needs a value');
  const read = (file: string): Buffer => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      return usage(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  return {
    ...(f.tlsCert !== undefined && f.tlsKey !== undefined
      ? {
          tls: {
            cert: read(f.tlsCert),
            key: read(f.tlsKey),
            ...(f.tlsClientCa !== undefined ? { clientCa: read(f.tlsClientCa) } : {}),
          },
        }
      : {}),
    ...(f.apiKey !== undefined ? { apiKey: f.apiKey } : {}),
  };
}

/** Dev-server flags that take a value and are accepted without effect (our own logging; UI on --ip). */
const devIgnoredWithValue = new Set([
  '--ui-ip',
  '--ui-public-path',
  '--log-format',
  '--log-level',
  '--dynamic-config-value',
  '--metrics-port',
  '--sqlite-pragma',
  '--config',
]);
const devIgnoredFlags = new Set(['--log-config']);

/** `server start-dev ...` as the Temporal CLI takes it (and as sdk-core spawns it). */
function parseStartDev(argv: string[]): CliOptions {
  let port = 7233;
  let host = '127.0.0.1';
  let dbFilename: string | undefined;
  let httpPort: number | undefined;
  let uiPort: number | undefined;
  let headless = false;
  let uiDir = DEFAULT_UI_DIR;
  const namespaces: string[] = [];
  const searchAttributes: Record<string, ValueType> = {};
  const security: SecurityFlags = {};
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i];
    const eq = raw.indexOf('=');
    const flag = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    const inline = raw.startsWith('--') && eq > 0 ? raw.slice(eq + 1) : undefined;
    const value = (): string => (inline !== undefined ? inline : (argv[++i] ?? ''));
    if (flag === '--port' || flag === '-p') port = Number(value());
    else if (flag === '--ip') host = value();
    else if (flag === '--namespace' || flag === '-n') namespaces.push(value());
    else if (flag === '--db-filename' || flag === '-f') dbFilename = value();
    else if (flag === '--http-port') httpPort = Number(value());
    else if (securityFlags[flag]) security[securityFlags[flag]] = value();
    else if (flag === '--ui-port') uiPort = Number(value());
    else if (flag === '--ui-dir') uiDir = path.resolve(value());
    else if (flag === '--headless') headless = true;
    else if (flag === '--search-attribute') {
      // `Name=Type`, as the CLI takes it (Keyword, Text, Int, Double, Bool, Datetime, KeywordList).
      const [name, type] = value().split('=');
      const t = valueTypes.find((v) => v.toLowerCase() === (type ?? '').toLowerCase());
      if (!name || !t) usage(`--search-attribute takes Name=Type, Type one of ${valueTypes.join(', ')}`);
      searchAttributes[name] = t;
    } else if (devIgnoredWithValue.has(flag)) value();
    else if (devIgnoredFlags.has(flag)) continue;
    else {
      unknown.push(raw);
      // An unknown flag's value (if it has one) is ignored with it.
      if (raw.startsWith('-') && inline === undefined && argv[i + 1] !== undefined && !argv[i + 1].startsWith('-'))
        unknown.push(argv[++i]);
    }
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) usage('--port must be a port number');
  if (httpPort !== undefined && !isPort(httpPort)) usage('--http-port must be a port number');
  if (uiPort !== undefined && !isPort(uiPort)) usage('--ui-port must be a port number');
  // As the dev server: the UI beside the gRPC port, + 1000 (a random gRPC port: a random UI port).
  if (!headless && uiPort === undefined) uiPort = port === 0 || port + 1000 > 65535 ? 0 : port + 1000;
  const warnings =
    unknown.length > 0 ? [`embedded-temporal: ignoring unsupported start-dev arguments: ${unknown.join(' ')}`] : [];
  return {
    port,
    host,
    dbFilename,
    namespaces,
    httpPort,
    ...(headless ? {} : { uiPort, uiDir }),
    searchAttributes,
    ...securityOptions(security),
    timeSkipping: false,
    startLocked: false,
    quiet: true,
    warnings,
  };
}

function isPort(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= 65535;
}

export function parseArgs(argv: string[]): CliOptions {
  if (argv[0] === 'server' && argv[1] === 'start-dev') return parseStartDev(argv.slice(2));
  let port: number | undefined;
  let standalone = false;
  let timeSkippingFlag = false;
  let enableTimeSkipping = false;
  let quiet = false;
  let dbFilename: string | undefined;
  let httpPort: number | undefined;
  const security: SecurityFlags = {};
  let uiPort: number | undefined;
  let uiDir = DEFAULT_UI_DIR;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf('=');
    const securityFlag = securityFlags[eq > 0 ? a.slice(0, eq) : a];
    if (securityFlag) {
      security[securityFlag] = eq > 0 ? a.slice(eq + 1) : (argv[++i] ?? '');
    } else if (a === '--port') {
      standalone = true;
      port = Number(argv[++i]);
    } else if (a.startsWith('--port=')) {
      standalone = true;
      port = Number(a.slice('--port='.length));
    } else if (a === '--enable-time-skipping') {
      enableTimeSkipping = true;
    } else if (a === '--time-skipping') {
      timeSkippingFlag = true;
    } else if (a === '--quiet') {
      quiet = true;
    } else if (a === '--db-filename') {
      dbFilename = argv[++i];
    } else if (a.startsWith('--db-filename=')) {
      dbFilename = a.slice('--db-filename='.length);
    } else if (a === '--http-port') {
      httpPort = Number(argv[++i]);
    } else if (a.startsWith('--http-port=')) {
      httpPort = Number(a.slice('--http-port='.length));
    } else if (a === '--ui-port' || a.startsWith('--ui-port=')) {
      uiPort = Number(a === '--ui-port' ? argv[++i] : a.slice('--ui-port='.length));
    } else if (a === '--ui-dir' || a.startsWith('--ui-dir=')) {
      uiDir = path.resolve(a === '--ui-dir' ? (argv[++i] ?? '') : a.slice('--ui-dir='.length));
    } else if (/^\d+$/.test(a) && port === undefined) {
      port = Number(a);
    } else {
      // The SDK may pass extra args meant for the Java server; ignore unknown flags, say so.
      process.stderr.write(`embedded-temporal: ignoring unknown argument ${a}\n`);
    }
  }
  if (port === undefined || !Number.isInteger(port) || port < 0 || port > 65535) usage('a port is required');
  if (httpPort !== undefined && !isPort(httpPort)) usage('--http-port must be a port number');
  if (uiPort !== undefined && !isPort(uiPort)) usage('--ui-port must be a port number');
  if (standalone) {
    return {
      port,
      ...securityOptions(security),
      timeSkipping: timeSkippingFlag,
      startLocked: !timeSkippingFlag,
      quiet,
      dbFilename,
      httpPort,
      ...(uiPort !== undefined ? { uiPort, uiDir } : {}),
      warnings: [],
    };
  }
  return {
    port,
    ...securityOptions(security),
    timeSkipping: true,
    startLocked: !enableTimeSkipping,
    quiet: true,
    dbFilename,
    httpPort,
    warnings: [],
  };
}

export async function main(argv: string[]): Promise<void> {
  const { warnings, quiet, ...opts } = parseArgs(argv);
  for (const w of warnings) process.stderr.write(`${w}\n`);
  const logger = consoleLogger(quiet ? 'warn' : 'info');
  process.on('uncaughtException', (err) =>
    logger.error({ err: err.stack ?? String(err) }, 'uncaught exception (kept running)'),
  );
  process.on('unhandledRejection', (err) => logger.error({ err: String(err) }, 'unhandled rejection (kept running)'));
  const parkEnv = process.env.TEMPORAL_TEST_SERVER_PARK_IDLE_MS;
  const parkIdleAfterMs =
    parkEnv !== undefined && parkEnv !== '' && Number.isFinite(Number(parkEnv)) ? Number(parkEnv) : undefined;
  const server = await startServer({ ...opts, logger, parkIdleAfterMs });
  logger.info(
    {
      address: server.address,
      httpPort: server.httpPort,
      uiPort: server.uiPort,
      timeSkipping: opts.timeSkipping,
      tls: opts.tls ? (opts.tls.clientCa ? 'mtls' : 'tls') : 'off',
      apiKey: opts.apiKey !== undefined,
    },
    'embedded-temporal listening',
  );
  const stop = (signal: string): void => {
    logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`embedded-temporal failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
