/**
 * Opening the database for a process: the configured DATABASE_URL, or the embedded PostgreSQL
 * under DATA_DIR when it is unset (the `npm start` default), with the objection models bound to it.
 * Migrations are not run here; the entry points decide (npm start migrates first).
 */
import path from 'node:path';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../lib/logger';
import { bindModels, createKnex } from './knex';
import { startEmbeddedPostgres } from './embedded-postgres';

export interface Database {
  knex: Knex;
  url: string;
  /** 'embedded' when this process started its own PostgreSQL. */
  kind: 'configured' | 'embedded';
  /** Embedded only: the folder holding the cluster (see src/db/postgres-runtime-paths.ts). */
  location?: string;
  close(): Promise<void>;
}

export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  if (config.DATABASE_URL) {
    const knex = createKnex(config.DATABASE_URL, config.DATABASE_POOL_MAX);
    bindModels(knex);
    return { knex, url: config.DATABASE_URL, kind: 'configured', close: () => knex.destroy() };
  }
  const dataDir = path.join(config.DATA_DIR, 'postgres');
  logger.warn({ dataDir }, 'DATABASE_URL is not set: starting an embedded PostgreSQL');
  const embedded = await startEmbeddedPostgres({ dataDir, onLog: (line) => logger.debug({ pg: line }) });
  const knex = createKnex(embedded.url, config.DATABASE_POOL_MAX);
  bindModels(knex);
  return {
    knex,
    url: embedded.url,
    kind: 'embedded',
    location: embedded.dataDir,
    close: async () => {
      await knex.destroy();
      await embedded.stop();
    },
  };
}

export { bindModels, createKnex } from './knex';
export { migrateLatest, migrateRollbackAll } from './migrate';
