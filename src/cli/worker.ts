/** `npm run worker`: the Temporal worker alone, against configured PostgreSQL and Temporal. */
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../lib/logger';
import { openDatabase } from '../db';
import { startWorker } from '../runtime/processes';
import { onShutdown, printStartupTable } from '../runtime/lifecycle';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
    throw new ConfigError(['npm run worker needs DATABASE_URL and TEMPORAL_ADDRESS (use npm start for embedded defaults)']);
  }
  const logger = createLogger({ level: config.LOG_LEVEL });
  const stops: Array<[string, () => Promise<void>]> = [];
  onShutdown(logger, stops);
  const db = await openDatabase(config, logger);
  stops.push(['database', () => db.close()]);
  const worker = await startWorker({ config, logger, knex: db.knex, temporalAddress: config.TEMPORAL_ADDRESS });
  stops.push(['worker', () => worker.stop()]);
  printStartupTable([
    ['Worker', `task queue ${config.TEMPORAL_TASK_QUEUE}`],
    ['Temporal', config.TEMPORAL_ADDRESS],
  ]);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
