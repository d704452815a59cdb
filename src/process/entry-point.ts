/**
 * What the process entry points (src/cli/start.ts, api.ts, worker.ts) share: how they fail, what
 * they require, and the boot sequence up to the database.
 */
import { ConfigError, type Config } from '../config';
import { EmbeddedPostgresError } from '../db/embedded-postgres';
import { DatabaseRoleError, openDatabase, type Database } from '../db';
import { createLogger, type Logger } from '../lib/logger';
import { openAcquirer, type AcquirerHandle } from '../acquirer';
import { onShutdown } from './lifecycle';
import { limitHeapGrowth } from './heap';
import { noProgress, type Progress } from './progress';
import { LocalTemporalError } from '../temporal/local-server';

/** Runs a process entry point: configuration errors print their list; anything else its stack. */
export function runEntryPoint(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    const known =
      err instanceof ConfigError ||
      err instanceof EmbeddedPostgresError ||
      err instanceof LocalTemporalError ||
      err instanceof DatabaseRoleError;
    console.error(known ? err.message : err);
    process.exit(1);
  });
}

/** `npm run api` / `npm run worker` run against real services only; `npm start` embeds them. */
export function requireConfiguredServices(
  config: { DATABASE_URL?: string; TEMPORAL_ADDRESS?: string; ACQUIRER_URL?: string },
  command: string,
): { databaseUrl: string; temporalAddress: string } {
  // Split processes must share one database, one Temporal and one acquirer: no embedded defaults.
  if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS || !config.ACQUIRER_URL) {
    throw new ConfigError([
      `${command} needs DATABASE_URL, TEMPORAL_ADDRESS and ACQUIRER_URL (use npm start for embedded defaults)`,
    ]);
  }
  return { databaseUrl: config.DATABASE_URL, temporalAddress: config.TEMPORAL_ADDRESS };
}

/** What every process entry point opens first, and stops last (in reverse order of `own`). */
export interface ProcessScope {
  config: Config;
  logger: Logger;
  db: Database;
  /** Registers a component to stop on SIGTERM/SIGINT; components stop in reverse order. */
  own(name: string, stop: () => Promise<void>): void;
  /** The configured acquirer (or the embedded simulator), closed at shutdown. */
  openAcquirer(): Promise<AcquirerHandle>;
}

/** The boot sequence the three entry points share: logger, shutdown handler, database. */
export async function bootProcess(config: Config, progress: Progress = noProgress): Promise<ProcessScope> {
  // Before any worker thread starts: the isolates created from here on get the small young
  // generation (docs/performance.md "Memory").
  limitHeapGrowth();
  const logger = createLogger({ level: config.LOG_LEVEL });
  const stops: Array<[string, () => Promise<void>]> = [];
  onShutdown(logger, stops);
  const own = (name: string, stop: () => Promise<void>): void => void stops.push([name, stop]);
  progress(
    config.DATABASE_URL
      ? 'database: connecting to DATABASE_URL'
      : `database: starting the embedded PostgreSQL under ${config.DATA_DIR} (the first start runs initdb)`,
  );
  const db = await openDatabase(config, logger);
  own('database', () => db.close());
  return {
    config,
    logger,
    db,
    own,
    openAcquirer: async () => {
      const acquirer = await openAcquirer(config);
      own('acquirer', () => acquirer.close());
      return acquirer;
    },
  };
}
