/** Start-up table and orderly shutdown shared by the entry points. */
import type { Logger } from '../lib/logger';

const SHUTDOWN_DEADLINE_MS = 30_000;

/**
 * On SIGTERM/SIGINT, runs the registered stops in reverse order of start (API first, database
 * last), each awaited, then exits 0. Repeated signals are ignored: a terminal's Ctrl-C reaches the
 * process both directly and relayed by npm/tsx. If draining hangs, a deadline forces exit 1.
 */
export function onShutdown(logger: Logger, stops: Array<[string, () => Promise<void>]>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error({ timeoutMs: SHUTDOWN_DEADLINE_MS }, 'shutdown did not finish in time: exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    void (async () => {
      for (const [name, stop] of [...stops].reverse()) {
        try {
          await stop();
          logger.info({ component: name }, 'stopped');
        } catch (err) {
          logger.error({ component: name, err }, 'stop failed');
        }
      }
      process.exit(0);
    })();
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

export function printStartupTable(rows: Array<[string, string]>): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`);
  process.stdout.write(`\npixflow is running\n${lines.join('\n')}\n\n`);
}
