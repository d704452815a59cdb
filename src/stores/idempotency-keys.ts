/**
 * Every query on `idempotency_keys`: a key row per (scope, owner, key), taken inside the caller's
 * transaction, and the stored result a replay answers with.
 */
import type { Knex } from 'knex';

export interface IdempotencyKeyId {
  scope: string;
  ownerId: string;
  key: string;
}

export function idempotencyKeysStore(trx: Knex.Transaction) {
  const where = (k: IdempotencyKeyId) => ({ scope: k.scope, owner_id: k.ownerId, key: k.key });
  return {
    /** Takes the key (true), or finds it taken (false). A concurrent taker waits for this transaction. */
    async take(k: IdempotencyKeyId & { targetId: string; fingerprint: Buffer }): Promise<boolean> {
      const inserted = (await trx('idempotency_keys')
        .insert({ ...where(k), target_id: k.targetId, request_hash: k.fingerprint })
        .onConflict(['scope', 'owner_id', 'key'])
        .ignore()
        .returning('key')) as Array<{ key: string }>;
      return inserted.length > 0;
    },

    /** The key's row; `request_hash` is null on keys stored before fingerprints existed. */
    async find<T>(
      k: IdempotencyKeyId,
    ): Promise<{ target_id: string; result: T | null; request_hash: Buffer | null } | undefined> {
      return (await trx('idempotency_keys').where(where(k)).first('target_id', 'result', 'request_hash')) as
        { target_id: string; result: T | null; request_hash: Buffer | null } | undefined;
    },

    async storeResult(k: IdempotencyKeyId, result: unknown): Promise<void> {
      await trx('idempotency_keys')
        .where(where(k))
        .update({ result: JSON.stringify(result) });
    },
  };
}

/**
 * The purge of expired keys (docs/api.md "Idempotency"), a batch at a time so that no statement
 * holds many row locks: key rows of refunds and adjustments are deleted; charges and withdrawals
 * keep their row and lose the key (and its fingerprint), which frees it for a new request.
 */
export function expiredIdempotencyKeysStore(knex: Knex) {
  return {
    async deleteKeyRows(before: Date, batch: number): Promise<number> {
      return (
        await knex.raw(
          `delete from idempotency_keys where ctid in
           (select ctid from idempotency_keys where created_at < ? limit ?)`,
          [before, batch],
        )
      ).rowCount as number;
    },

    async releaseResourceKeys(table: 'charges' | 'withdrawals', before: Date, batch: number): Promise<number> {
      return (
        await knex.raw(
          `update ?? set idempotency_key = null, request_hash = null where id in
           (select id from ?? where idempotency_key is not null and created_at < ? limit ?)`,
          [table, table, before, batch],
        )
      ).rowCount as number;
    },
  };
}
