/** `npm run worker`: the Temporal worker alone, against configured PostgreSQL and Temporal. */
import { loadConfig } from '../config';
import { createLogger } from '../lib/logger';
import { openDatabase } from '../db';
import { startWorker } from '../runtime/processes';
import { openAcquirer } from '../acquirer';
import { onShutdown, printStartupTable } from '../runtime/lifecycle';
import { startMetricsServer } from '../observability/metrics-server';
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
  const metrics = config.METRICS_PORT > 0 ? await startMetricsServer({ port: config.METRICS_PORT, token: config.METRICS_TOKEN }) : undefined;
  if (metrics) stops.push(['metrics', () => metrics.close()]);
  printStartupTable([
    ['Worker', `task queue ${config.TEMPORAL_TASK_QUEUE}`],
    ['Temporal', temporalAddress],
    ['Metrics', metrics ? `${metrics.url}/metrics` : 'off (set METRICS_PORT)'],
    ['SDK metrics', config.TEMPORAL_METRICS_ADDRESS ? `http://${config.TEMPORAL_METRICS_ADDRESS}/metrics` : 'off (set TEMPORAL_METRICS_ADDRESS)'],
  ]);
});
