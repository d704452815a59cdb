/** `npm run api`: the HTTP API alone, against configured PostgreSQL and Temporal. */
import { loadConfig } from '../config';
import { createLogger } from '../lib/logger';
import { openDatabase } from '../db';
import { ensureAdmin } from '../services/admin-bootstrap';
import { startApi } from '../runtime/processes';
import { openAcquirer } from '../acquirer';
import { onShutdown, printStartupTable } from '../runtime/lifecycle';
import { requireConfiguredServices, runEntryPoint } from '../runtime/entry-point';

runEntryPoint(async () => {
  const config = loadConfig();
  const { temporalAddress } = requireConfiguredServices(config, 'npm run api');
  const logger = createLogger({ level: config.LOG_LEVEL });
  const stops: Array<[string, () => Promise<void>]> = [];
  onShutdown(logger, stops);
  const db = await openDatabase(config, logger);
  stops.push(['database', () => db.close()]);
  await ensureAdmin(db.knex, config);
  const acquirer = await openAcquirer(config);
  stops.push(['acquirer', () => acquirer.close()]);
  const api = await startApi({ config, logger, knex: db.knex, temporalAddress, acquirer });
  stops.push(['api', () => api.stop()]);
  printStartupTable([
    ['API', api.url],
    ['Temporal', temporalAddress],
  ]);
});
