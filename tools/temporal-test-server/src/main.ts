/**
 * CLI.
 *   temporal-test-server <port> [--enable-time-skipping]
 *       Drop-in for the official Java test server as spawned by @temporalio/testing: time skipping,
 *       starting locked unless --enable-time-skipping; only warnings are logged.
 *   temporal-test-server --port <n> [--time-skipping] [--quiet]
 *       Standalone: real time unless --time-skipping; logs each workflow start/close at info.
 * Exits cleanly on SIGTERM/SIGINT.
 */
import { consoleLogger, startServer, type ServerOptions } from './index';

function usage(msg: string): never {
  process.stderr.write(
    `${msg}\nusage: temporal-test-server <port> [--enable-time-skipping]\n       temporal-test-server --port <n> [--time-skipping] [--quiet]\n`,
  );
  process.exit(2);
}

export function parseArgs(argv: string[]): ServerOptions & { quiet: boolean } {
  let port: number | undefined;
  let standalone = false;
  let timeSkippingFlag = false;
  let enableTimeSkipping = false;
  let quiet = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port') {
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
    } else if (/^\d+$/.test(a) && port === undefined) {
      port = Number(a);
    } else {
      // The SDK may pass extra args meant for the Java server; ignore unknown flags, say so.
      process.stderr.write(`temporal-test-server: ignoring unknown argument ${a}\n`);
    }
  }
  if (port === undefined || !Number.isInteger(port) || port < 0 || port > 65535) usage('a port is required');
  if (standalone) {
    return { port, timeSkipping: timeSkippingFlag, startLocked: !timeSkippingFlag, quiet };
  }
  return { port, timeSkipping: true, startLocked: !enableTimeSkipping, quiet: true };
}

export async function main(argv: string[]): Promise<void> {
  const opts = parseArgs(argv);
  const logger = consoleLogger(opts.quiet ? 'warn' : 'info');
  process.on('uncaughtException', (err) => logger.error({ err: err.stack ?? String(err) }, 'uncaught exception (kept running)'));
  process.on('unhandledRejection', (err) => logger.error({ err: String(err) }, 'unhandled rejection (kept running)'));
  const server = await startServer({ ...opts, logger });
  logger.info({ address: server.address, timeSkipping: opts.timeSkipping }, 'temporal-test-server listening');
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
    process.stderr.write(`temporal-test-server failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
