/**
 * `npm start`: the whole service in one process, on embedded defaults where nothing is configured.
 *
 *   config → database (DATABASE_URL or embedded PostgreSQL) → migrations → admin bootstrap →
 *   Temporal (TEMPORAL_ADDRESS, or the official dev server with its Web UI, spawned here) → API +
 *   worker → a table of what runs where.
 *
 * SIGTERM/SIGINT: stop accepting requests and drain them, shut the worker down (in-flight activities
 * finish), then stop whatever this process started; exit 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config';
import { migrateAsOwner } from '../db';
import { ensureAdmin } from '../services/accounts/admin-bootstrap';
import { localAddressFile, startLocalTemporal } from '../temporal/local-server';
import { startApi, startWorker } from '../runtime/processes';
import { printStartupTable } from '../process/lifecycle';
import { bootProcess, runEntryPoint } from '../process/entry-point';
import { stderrProgress } from '../process/progress';
import { buildDashboard, dashboardBuilt, describeBuild } from '../../tools/dashboard/src/build';

runEntryPoint(async () => {
  const config = loadConfig();
  // Each step on stderr as it begins, so a first start (initdb, bundling) never looks stuck.
  const progress = stderrProgress();
  const { logger, db, own, openAcquirer } = await bootProcess(config, progress);
  if (config.generatedSecrets.length > 0) {
    logger.warn(
      { secrets: config.generatedSecrets, file: `${config.DATA_DIR}/secrets.json` },
      'secrets not set: using generated development values (required in production)',
    );
  }

  progress('migrations: applying pending migrations (as the owner role)');
  const applied = await migrateAsOwner(db);
  if (applied.length) logger.info({ applied }, 'migrations applied');
  const admin = await ensureAdmin(db.knex, config);
  if (admin === 'created') logger.info({ email: config.ADMIN_EMAIL }, 'admin user created');

  let temporalAddress = config.TEMPORAL_ADDRESS;
  let temporalKind = 'configured';
  let temporalHttp: string | undefined;
  let temporalLog: string | undefined;
  progress(
    temporalAddress
      ? `Temporal: using TEMPORAL_ADDRESS ${temporalAddress}`
      : `Temporal: starting the official dev server (temporal server start-dev) under ${config.DATA_DIR}/temporal`,
  );
  let temporalUi: string | undefined;
  if (!temporalAddress) {
    const local = await startLocalTemporal({
      dataDir: config.DATA_DIR,
      logger,
      ui: config.TEMPORAL_UI === 'on',
      port: config.TEMPORAL_LOCAL_PORT,
      uiPort: config.TEMPORAL_UI_PORT,
    });
    own('temporal', () => local.stop());
    temporalAddress = local.address;
    temporalKind = local.kind;
    temporalHttp = local.httpUrl;
    temporalLog = local.logFile;
    temporalUi = local.uiUrl;
    const addressFile = localAddressFile(config.DATA_DIR);
    fs.mkdirSync(path.dirname(addressFile), { recursive: true });
    fs.writeFileSync(addressFile, `${local.address}\n`);
    own('temporal address file', async () => fs.rmSync(addressFile, { force: true }));
  }

  progress(config.ACQUIRER_URL ? `acquirer: ${config.ACQUIRER_URL}` : 'acquirer: starting the embedded simulator');
  const acquirer = await openAcquirer();
  if (acquirer.sandbox)
    logger.warn(
      { url: acquirer.url },
      'ACQUIRER_URL is not set: using the embedded acquirer simulator (sandbox endpoints on)',
    );

  // npm install builds the dashboard; a checkout that skipped it gets it built here, once.
  if (!dashboardBuilt()) {
    progress('dashboard: building dashboard/src (first start)');
    await buildDashboard().then(
      (built) => progress(`dashboard: ${describeBuild(built)}`),
      (err: unknown) =>
        logger.warn({ err }, 'dashboard build failed: /dashboard answers 404 until `npm run dashboard:build`'),
    );
  }

  const worker = await startWorker({ config, logger, knex: db.knex, temporalAddress, acquirer, progress });
  own('worker', () => worker.stop());
  progress(`API: listening on ${config.HOST}:${config.PORT}`);
  const api = await startApi({ config, logger, knex: db.knex, temporalAddress, acquirer });
  own('api', () => api.stop());

  printStartupTable([
    ['API', api.url],
    [
      'PostgreSQL',
      db.kind === 'embedded' ? `embedded (${db.location ?? `${config.DATA_DIR}/postgres`})` : 'DATABASE_URL',
    ],
    ['Temporal', `${temporalAddress} (${temporalKind})`],
    ...(temporalHttp
      ? [['Temporal HTTP API', `${temporalHttp}/api/v1/namespaces (npm run ops -- workflows list)`] as [string, string]]
      : []),
    ...(temporalUi ? [['Temporal UI', `${temporalUi} (official Web UI)`] as [string, string]] : []),
    ...(temporalLog ? [['Temporal log', temporalLog] as [string, string]] : []),
    ['Acquirer', acquirer.sandbox ? `${acquirer.url} (embedded simulator; sandbox on)` : acquirer.url],
    ['Worker', `task queue ${config.TEMPORAL_TASK_QUEUE}, namespace ${config.TEMPORAL_NAMESPACE}`],
    [
      'Metrics',
      `${api.url}/metrics${config.TEMPORAL_METRICS_ADDRESS ? `; Temporal SDK: http://${config.TEMPORAL_METRICS_ADDRESS}/metrics` : ''}`,
    ],
    [
      'Admin',
      config.ADMIN_EMAIL ? `${config.ADMIN_EMAIL} (${admin})` : 'not configured (set ADMIN_EMAIL/ADMIN_PASSWORD)',
    ],
  ]);
});
