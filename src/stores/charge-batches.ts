/**
 * Queries on `charge_batches` and `charge_batch_items` (docs/api.md "Charge batches"): a batch,
 * once per merchant idempotency key, and each item's outcome by its index.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/types';

export type BatchItemStatus = 'PENDING' | 'ACCEPTED' | 'REFUSED';

export interface BatchRow {
  id: string;
  acquirer_batch_id: number | string;
  status: 'PROCESSING' | 'COMPLETED';
  item_count: number;
  created_at: Date;
  completed_at: Date | null;
}

export interface BatchItemRow {
  index: number;
  charge_id: string | null;
  status: BatchItemStatus;
  error_code: string | null;
  error_message: string | null;
}

export function chargeBatchesStore(db: Db) {
  return {
    /** A new batch unless the merchant's key is taken (then null). */
    async insertUnlessKeyTaken(b: {
      id: string;
      merchantId: string;
      idempotencyKey: string | null;
      itemCount: number;
    }): Promise<BatchRow | null> {
      const rows = (await db('charge_batches')
        .insert({ id: b.id, merchant_id: b.merchantId, idempotency_key: b.idempotencyKey, item_count: b.itemCount })
        .onConflict(['merchant_id', 'idempotency_key'])
        .ignore()
        .returning('*')) as BatchRow[];
      return rows[0] ?? null;
    },

    async findOwn(merchantId: string, id: string): Promise<BatchRow | undefined> {
      return (await db('charge_batches').where({ id, merchant_id: merchantId }).first()) as BatchRow | undefined;
    },

    async findByIdempotencyKey(merchantId: string, key: string): Promise<BatchRow | undefined> {
      return (await db('charge_batches').where({ merchant_id: merchantId, idempotency_key: key }).first()) as
        BatchRow | undefined;
    },

    async insertItems(batchId: string, items: Array<Omit<BatchItemRow, never>>): Promise<void> {
      for (let i = 0; i < items.length; i += 500) {
        await db('charge_batch_items').insert(items.slice(i, i + 500).map((it) => ({ batch_id: batchId, ...it })));
      }
    },

    /** Settles the PENDING items: accepted, or refused with a reason. */
    async settleItems(
      batchId: string,
      outcomes: Array<{ index: number; refusal: { code: string; message: string } | null }>,
    ) {
      if (outcomes.length === 0) return;
      await db.raw(
        `update charge_batch_items i set status = v.status, error_code = v.code, error_message = v.message
         from (select * from unnest(?::int[], ?::text[], ?::text[], ?::text[]) as t(index, status, code, message)) v
         where i.batch_id = ? and i.index = v.index and i.status = 'PENDING'`,
        [
          outcomes.map((o) => o.index) as unknown as Knex.RawBinding,
          outcomes.map((o) => (o.refusal ? 'REFUSED' : 'ACCEPTED')),
          outcomes.map((o) => o.refusal?.code ?? null) as unknown as Knex.RawBinding,
          outcomes.map((o) => o.refusal?.message ?? null) as unknown as Knex.RawBinding,
          batchId,
        ],
      );
    },

    async complete(batchId: string): Promise<void> {
      await db('charge_batches')
        .where({ id: batchId, status: 'PROCESSING' })
        .update({ status: 'COMPLETED', completed_at: db.fn.now() });
    },

    async items(batchId: string): Promise<BatchItemRow[]> {
      return (await db('charge_batch_items')
        .where({ batch_id: batchId })
        .orderBy('index')
        .select('index', 'charge_id', 'status', 'error_code', 'error_message')) as BatchItemRow[];
    },
  };
}
