/** `npm run worker`: the Temporal worker alone, against configured PostgreSQL and Temporal. */
import { loadConfig } from '../config';
import { createLogger } from '../lib/logger';
import { openDatabase } from '../db';
import { startWorker } from '../runtime/processes';
import { openAcquirer } from '../acquirer';
import { onShutdown, printStartupTable } from '../runtime/lifecycle';
import { requireConfiguredServices, runEntryPoint } from '../runtime/entry-point';

runEntryPoint(async () => {
  const config = loadConfig();
  const { temporalAddress } = requireConfiguredServices(config, 'npm run worker');
  const logger = createLogger({ level: config.LOG_LEVEL });
  const stops: Array<[string, () => Promise<void>]> = [];
  onShutdown(logger, stops);
  const db = await openDatabase(config, logger);
  stops.push(['database', () => db.close()]);
  const acquirer = await openAcquirer(config);
  stops.push(['acquirer', () => acquirer.close()]);
  const worker = await startWorker({ config, logger, knex: db.knex, temporalAddress, acquirer });
  stops.push(['worker', () => worker.stop()]);
  printStartupTable([
    ['Worker', `task queue ${config.TEMPORAL_TASK_QUEUE}`],
    ['Temporal', temporalAddress],
  ]);
});
