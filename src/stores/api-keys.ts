/**
 * Every query on `api_keys`: creation under the per-merchant limit, the masked list, deletion and
 * the authentication lookup (docs/api.md "Authentication"). `db` is the knex
 * instance or the transaction the caller runs in.
 */
import type { Db } from '../db/types';
import { ApiKey } from '../models/api-key';

export { ApiKey };

/** What authentication reads of a key and its merchant, as stored. */
export interface ApiKeyAuthRow {
  id: string;
  merchant_id: string;
  status: string;
  last_used_at: Date | null;
  merchant_status: string;
}

export function apiKeysStore(db: Db) {
  return {
    /** Serialises key creations of one merchant until the transaction ends (inside a transaction). */
    async lockMerchantCreations(merchantId: string): Promise<void> {
      await db.raw('select pg_advisory_xact_lock(hashtext(?))', [`api_keys:${merchantId}`]);
    },

    async countOf(merchantId: string): Promise<number> {
      return ApiKey.query(db).where({ merchant_id: merchantId }).resultSize();
    },

    async insert(
      k: Pick<
        ApiKey,
        'id' | 'merchantId' | 'createdByUserId' | 'name' | 'description' | 'keyHash' | 'keyLast4' | 'status'
      >,
    ): Promise<ApiKey> {
      return ApiKey.query(db).insertAndFetch(k);
    },

    /** A merchant's keys, newest first. */
    async listOf(merchantId: string): Promise<ApiKey[]> {
      return ApiKey.query(db)
        .where({ merchant_id: merchantId })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ]);
    },

    /** Deletes the merchant's key; the number of rows deleted (0 for another merchant's id). */
    async deleteOf(merchantId: string, id: string): Promise<number> {
      return ApiKey.query(db).delete().where({ id, merchant_id: merchantId });
    },

    /** One indexed read joining the key (by hash) to its merchant's status; a plain row. */
    async findForAuth(keyHash: string): Promise<ApiKeyAuthRow | undefined> {
      return (await db('api_keys as k')
        .join('merchants as m', 'm.id', 'k.merchant_id')
        .where('k.key_hash', keyHash)
        .first('k.id', 'k.merchant_id', 'k.status', 'k.last_used_at', 'm.status as merchant_status')) as
        ApiKeyAuthRow | undefined;
    },

    async touchLastUsed(id: string, at: Date): Promise<void> {
      await ApiKey.query(db).patch({ lastUsedAt: at }).where({ id });
    },
  };
}
