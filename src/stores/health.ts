import type { Db } from '../db/types';

/** The database's readiness probe (GET /readyz). */
export function healthStore(db: Db) {
  return {
    async ping(): Promise<void> {
      await db.raw('select 1');
    },
  };
}
