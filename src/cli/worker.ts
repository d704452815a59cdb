/** `npm run worker`: the Temporal worker alone, against configured PostgreSQL and Temporal. */
import { loadConfig } from '../config';
import { startWorker } from '../runtime/processes';
import { printStartupTable } from '../process/lifecycle';
import { startMetricsServer } from '../observability/metrics-server';
import { bootProcess, requireConfiguredServices, runEntryPoint } from '../process/entry-point';

runEntryPoint(async () => {
  const config = loadConfig();
  const { temporalAddress } = requireConfiguredServices(config, 'npm run worker');
  const { logger, db, own, openAcquirer } = await bootProcess(config);
  const acquirer = await openAcquirer();
  const worker = await startWorker({ config, logger, knex: db.knex, temporalAddress, acquirer });
  own('worker', () => worker.stop());
  const metrics =
    config.METRICS_PORT > 0
      ? await startMetricsServer({ port: config.METRICS_PORT, token: config.METRICS_TOKEN })
      : undefined;
  if (metrics) own('metrics', () => metrics.close());
  printStartupTable([
    ['Worker', `task queue ${config.TEMPORAL_TASK_QUEUE}`],
    ['Temporal', temporalAddress],
    ['Metrics', metrics ? `${metrics.url}/metrics` : 'off (set METRICS_PORT)'],
    [
      'SDK metrics',
      config.TEMPORAL_METRICS_ADDRESS
        ? `http://${config.TEMPORAL_METRICS_ADDRESS}/metrics`
        : 'off (set TEMPORAL_METRICS_ADDRESS)',
    ],
  ]);
});
