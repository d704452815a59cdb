/**
 * `x-idempotency-key` for operations that move money without creating a keyed row of their own
 * (refunds, operator adjustments; README "Idempotent refunds and adjustments").
 *
 * The key row is inserted first, inside the operation's own transaction. PostgreSQL makes a second
 * insert of the same key wait until the first transaction ends: if it committed, the second finds
 * the key and replays the stored result; if it rolled back (the operation was refused), the second
 * goes ahead as if it were first. So twenty concurrent requests with one key move money once and
 * all get the same answer, and a refused request never poisons its key.
 */
import type { Knex } from 'knex';
import { conflict } from '../lib/errors';
import { idempotencyKeysStore } from '../stores/idempotency-keys';

export interface IdempotencyScope {
  /** What the key protects, e.g. `charge_refund`, `adjustment`. */
  scope: string;
  /** Whose key space: the merchant. */
  ownerId: string;
  key: string;
  /** The resource acted on; the same key on another resource is a 409. */
  targetId: string;
}

export type Idempotent<T> = { replay: false; result: T } | { replay: true; result: T };

export async function withIdempotencyKey<T>(
  trx: Knex.Transaction,
  k: IdempotencyScope,
  run: () => Promise<T>,
): Promise<Idempotent<T>> {
  const store = idempotencyKeysStore(trx);
  if (!(await store.take(k))) {
    const row = await store.find<T>(k);
    if (!row || row.result === null) throw conflict('A request with this idempotency key is still being processed');
    if (row.target_id !== k.targetId) throw conflict('This idempotency key was already used for another resource');
    return { replay: true, result: row.result };
  }
  const result = await run();
  await store.storeResult(k, result);
  return { replay: false, result };
}
