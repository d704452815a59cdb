/**
 * Opening the database for a process: the configured DATABASE_URL, or the embedded PostgreSQL
 * under DATA_DIR when it is unset (the `npm start` default), with the objection models bound to it.
 * Migrations are not run here; the entry points decide (npm start migrates first), as the owner
 * role (`migrateAsOwner`), never as the service's (docs/production.md "Database roles").
 */
import path from 'node:path';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../lib/logger';
import { bindModels, createKnex } from './knex';
import { startEmbeddedPostgres } from './embedded-postgres';
import { migrateLatest } from './migrate';
import { assertLeastPrivilege } from './privileges';

export interface Database {
  /** As the service's role. */
  knex: Knex;
  url: string;
  /** The owner role's URL, for migrations: DATABASE_MIGRATION_URL (else DATABASE_URL) or the embedded owner. */
  migrationUrl: string;
  /** 'embedded' when this process started its own PostgreSQL. */
  kind: 'configured' | 'embedded';
  /** Embedded only: the folder holding the cluster (see src/db/postgres-runtime-paths.ts). */
  location?: string;
  close(): Promise<void>;
}

/**
 * `checkServiceRole` (default: in production) refuses a DATABASE_URL whose role could get around
 * the database's rules; `npm run migrate`, which uses only the migration URL, turns it off.
 */
export async function openDatabase(
  config: Config,
  logger: Logger,
  opts: { checkServiceRole?: boolean } = {},
): Promise<Database> {
  if (config.DATABASE_URL) {
    const knex = createKnex(config.DATABASE_URL, config.DATABASE_POOL_MAX);
    try {
      if (opts.checkServiceRole ?? config.isProduction) await assertLeastPrivilege(knex);
    } catch (err) {
      await knex.destroy();
      throw err;
    }
    bindModels(knex);
    return {
      knex,
      url: config.DATABASE_URL,
      migrationUrl: config.DATABASE_MIGRATION_URL ?? config.DATABASE_URL,
      kind: 'configured',
      close: () => knex.destroy(),
    };
  }
  const dataDir = path.join(config.DATA_DIR, 'postgres');
  logger.warn({ dataDir }, 'DATABASE_URL is not set: starting an embedded PostgreSQL');
  const embedded = await startEmbeddedPostgres({
    dataDir,
    secretsFile: path.join(config.DATA_DIR, 'secrets.json'),
    onLog: (line) => logger.debug({ pg: line }),
  });
  const knex = createKnex(embedded.url, config.DATABASE_POOL_MAX);
  bindModels(knex);
  return {
    knex,
    url: embedded.url,
    migrationUrl: embedded.ownerUrl,
    kind: 'embedded',
    location: embedded.dataDir,
    close: async () => {
      await knex.destroy();
      await embedded.stop();
    },
  };
}

/** Runs `fn` with a knex of the owner role (two connections at most), closed afterwards. */
export async function withOwner<T>(db: Pick<Database, 'migrationUrl'>, fn: (owner: Knex) => Promise<T>): Promise<T> {
  const owner = createKnex(db.migrationUrl, 2);
  try {
    return await fn(owner);
  } finally {
    await owner.destroy();
  }
}

/** Applies pending migrations as the owner role; returns the names applied. */
export function migrateAsOwner(db: Pick<Database, 'migrationUrl'>): Promise<string[]> {
  return withOwner(db, migrateLatest);
}

export { bindModels, createKnex } from './knex';
export { migrateLatest, migrateRollbackAll } from './migrate';
export { DatabaseRoleError } from './privileges';
