/**
 * Idempotency keys replay for IDEMPOTENCY_KEY_TTL_SECONDS (docs/api.md "Idempotency"), then this
 * periodic job purges them: the API process runs a pass at start and one every hour, never two at
 * once in one process, like the callback inbox's reconciler. Several API processes may purge at
 * the same time; each statement is idempotent and takes a batch, so they only share the work.
 * After the purge the same key is a new request: it creates a new charge, refund, withdrawal or
 * adjustment.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { expiredIdempotencyKeysStore } from '../../stores/idempotency-keys';

export const IDEMPOTENCY_PURGE_INTERVAL_MS = 60 * 60_000;
const BATCH = 1000;

export interface PurgedKeys {
  keyRows: number;
  charges: number;
  withdrawals: number;
}

/** Purges every key created before now − `ttlSeconds`; returns how many of each kind went. */
export async function purgeExpiredIdempotencyKeys(
  knex: Knex,
  opts: { ttlSeconds: number; now?: Date },
): Promise<PurgedKeys> {
  const before = new Date((opts.now ?? new Date()).getTime() - opts.ttlSeconds * 1000);
  const store = expiredIdempotencyKeysStore(knex);
  const drain = async (step: () => Promise<number>): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await step();
      total += n;
      if (n < BATCH) return total;
    }
  };
  return {
    keyRows: await drain(() => store.deleteKeyRows(before, BATCH)),
    charges: await drain(() => store.releaseResourceKeys('charges', before, BATCH)),
    withdrawals: await drain(() => store.releaseResourceKeys('withdrawals', before, BATCH)),
  };
}

export function startIdempotencyKeyPurge(deps: {
  knex: Knex;
  logger: Logger;
  ttlSeconds: number;
  intervalMs?: number;
}) {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const pass = (): void => {
    if (busy) return;
    busy = true;
    running = purgeExpiredIdempotencyKeys(deps.knex, { ttlSeconds: deps.ttlSeconds })
      .then((purged) => {
        if (purged.keyRows + purged.charges + purged.withdrawals > 0)
          deps.logger.info({ purged }, 'expired idempotency keys purged');
      })
      .catch((err: unknown) => deps.logger.error({ err }, 'idempotency key purge failed'))
      .finally(() => {
        busy = false;
      });
  };
  pass();
  const timer = setInterval(pass, deps.intervalMs ?? IDEMPOTENCY_PURGE_INTERVAL_MS);
  timer.unref();
  return {
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
    },
  };
}
