/**
 * `npm run migrate` — applies pending migrations as the owner role: DATABASE_MIGRATION_URL (else
 * DATABASE_URL), or the embedded PostgreSQL's owner under DATA_DIR when DATABASE_URL is unset
 * (docs/production.md "Database roles"). `npm run migrate -- --rollback` rolls every migration back.
 */
import { loadConfig } from '../config';
import { createLogger } from '../lib/logger';
import { openDatabase, migrateLatest, migrateRollbackAll, withOwner } from '../db';
import { runEntryPoint } from '../process/entry-point';

runEntryPoint(async () => {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL });
  // Only the migration URL is used; the service's role is checked where the service starts.
  const db = await openDatabase(config, logger, { checkServiceRole: false });
  try {
    await withOwner(db, async (owner) => {
      if (process.argv.includes('--rollback')) {
        const rolled = await migrateRollbackAll(owner);
        logger.info({ rolled }, rolled.length ? 'migrations rolled back' : 'nothing to roll back');
      } else {
        const applied = await migrateLatest(owner);
        logger.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
      }
    });
  } finally {
    await db.close();
  }
});
