/** `npm run api`: the HTTP API alone, against configured PostgreSQL and Temporal. */
import { loadConfig } from '../config';
import { ensureAdmin } from '../services/accounts/admin-bootstrap';
import { startApi } from '../runtime/processes';
import { printStartupTable } from '../process/lifecycle';
import { bootProcess, requireConfiguredServices, runEntryPoint } from '../process/entry-point';

runEntryPoint(async () => {
  const config = loadConfig();
  const { temporalAddress } = requireConfiguredServices(config, 'npm run api');
  const { logger, db, own, openAcquirer } = await bootProcess(config);
  await ensureAdmin(db.knex, config);
  const acquirer = await openAcquirer();
  const api = await startApi({ config, logger, knex: db.knex, temporalAddress, acquirer });
  own('api', () => api.stop());
  printStartupTable([
    ['API', api.url],
    ['Temporal', temporalAddress],
  ]);
});
