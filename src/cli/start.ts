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
import { loadConfig, type Config } from '../config';
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
  const booted = await bootProcess(config, progress);
  const { logger, db, own, openAcquirer } = booted;
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

  const temporal = await temporalFor(config, booted, progress);

  progress(config.ACQUIRER_URL ? `acquirer: ${config.ACQUIRER_URL}` : 'acquirer: starting the embedded simulator');
  const acquirer = await openAcquirer();
  if (acquirer.sandbox)
    logger.warn(
      { url: acquirer.url },
      'ACQUIRER_URL is not set: using the embedded acquirer simulator (sandbox endpoints on)',
    );

  await ensureDashboard(progress, logger);

  const worker = await startWorker({
    config,
    logger,
    knex: db.knex,
    temporalAddress: temporal.address,
    acquirer,
    progress,
  });
  own('worker', () => worker.stop());
  progress(`API: listening on ${config.HOST}:${config.PORT}`);
  const api = await startApi({ config, logger, knex: db.knex, temporalAddress: temporal.address, acquirer });
  own('api', () => api.stop());

  printStartupTable(startupRows({ config, db, temporal, acquirer, apiUrl: api.url, admin }));
});

type Booted = Awaited<ReturnType<typeof bootProcess>>;
type Progress = ReturnType<typeof stderrProgress>;
interface TemporalInUse {
  address: string;
  kind: string;
  http?: string;
  log?: string;
  ui?: string;
}

/** TEMPORAL_ADDRESS, or the official dev server spawned here and stopped on exit (README.md "What `npm start` runs"). */
async function temporalFor(config: Config, booted: Booted, progress: Progress): Promise<TemporalInUse> {
  const { logger, own } = booted;
  progress(
    config.TEMPORAL_ADDRESS
      ? `Temporal: using TEMPORAL_ADDRESS ${config.TEMPORAL_ADDRESS}`
      : `Temporal: starting the official dev server (temporal server start-dev) under ${config.DATA_DIR}/temporal`,
  );
  if (config.TEMPORAL_ADDRESS) return { address: config.TEMPORAL_ADDRESS, kind: 'configured' };
  const local = await startLocalTemporal({
    dataDir: config.DATA_DIR,
    logger,
    ui: config.TEMPORAL_UI === 'on',
    port: config.TEMPORAL_LOCAL_PORT,
    uiPort: config.TEMPORAL_UI_PORT,
  });
  own('temporal', () => local.stop());
  const addressFile = localAddressFile(config.DATA_DIR);
  fs.mkdirSync(path.dirname(addressFile), { recursive: true });
  fs.writeFileSync(addressFile, `${local.address}\n`);
  own('temporal address file', async () => fs.rmSync(addressFile, { force: true }));
  return { address: local.address, kind: local.kind, http: local.httpUrl, log: local.logFile, ui: local.uiUrl };
}

async function ensureDashboard(progress: Progress, logger: Booted['logger']): Promise<void> {
  // npm install builds the dashboard; a checkout that skipped it gets it built here, once.
  if (!dashboardBuilt()) {
    progress('dashboard: building dashboard/src (first start)');
    await buildDashboard().then(
      (built) => progress(`dashboard: ${describeBuild(built)}`),
      (err: unknown) =>
        logger.warn({ err }, 'dashboard build failed: /dashboard answers 404 until `npm run dashboard:build`'),
    );
  }
}

function startupRows(r: {
  config: Config;
  db: Booted['db'];
  temporal: TemporalInUse;
  acquirer: Awaited<ReturnType<Booted['openAcquirer']>>;
  apiUrl: string;
  admin: string;
}): Array<[string, string]> {
  return [
    ['API', r.apiUrl],
    [
      'PostgreSQL',
      r.db.kind === 'embedded' ? `embedded (${r.db.location ?? `${r.config.DATA_DIR}/postgres`})` : 'DATABASE_URL',
    ],
    ['Temporal', `${r.temporal.address} (${r.temporal.kind})`],
    ...optionalRow(
      'Temporal HTTP API',
      r.temporal.http,
      (u) => `${u}/api/v1/namespaces (npm run ops -- workflows list)`,
    ),
    ...optionalRow('Temporal UI', r.temporal.ui, (u) => `${u} (official Web UI)`),
    ...optionalRow('Temporal log', r.temporal.log, (f) => f),
    ['Acquirer', r.acquirer.sandbox ? `${r.acquirer.url} (embedded simulator; sandbox on)` : r.acquirer.url],
    ['Worker', `task queue ${r.config.TEMPORAL_TASK_QUEUE}, namespace ${r.config.TEMPORAL_NAMESPACE}`],
    [
      'Metrics',
      `${r.apiUrl}/metrics${r.config.TEMPORAL_METRICS_ADDRESS ? `; Temporal SDK: http://${r.config.TEMPORAL_METRICS_ADDRESS}/metrics` : ''}`,
    ],
    [
      'Admin',
      r.config.ADMIN_EMAIL ? `${r.config.ADMIN_EMAIL} (${r.admin})` : 'not configured (set ADMIN_EMAIL/ADMIN_PASSWORD)',
    ],
  ];
}

const optionalRow = (label: string, value: string | undefined, show: (v: string) => string): Array<[string, string]> =>
  value ? [[label, show(value)]] : [];
