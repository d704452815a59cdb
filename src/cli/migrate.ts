/**
 * `npm run migrate` — applies pending migrations to DATABASE_URL (or the embedded PostgreSQL
 * under DATA_DIR when unset). `npm run migrate -- --rollback` rolls every migration back.
 */
import { loadConfig } from '../config';
import { createLogger } from '../lib/logger';
import { openDatabase, migrateLatest, migrateRollbackAll } from '../db';
import { runEntryPoint } from '../process/entry-point';

runEntryPoint(async () => {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL });
  const db = await openDatabase(config, logger);
  try {
    if (process.argv.includes('--rollback')) {
      const rolled = await migrateRollbackAll(db.knex);
      logger.info({ rolled }, rolled.length ? 'migrations rolled back' : 'nothing to roll back');
    } else {
      const applied = await migrateLatest(db.knex);
      logger.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
    }
  } finally {
    await db.close();
  }
});
