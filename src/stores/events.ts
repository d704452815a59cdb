/** Every query on `events`: one row per unique reference, the source of webhook deliveries. */
import type { Db } from '../db/types';

export function eventsStore(db: Db) {
  return {
    /** Inserts the event unless its reference exists; true when inserted. */
    async insertOnce(e: {
      id: string;
      merchantId: string;
      type: string;
      data: Record<string, unknown>;
      reference: string;
      createdAt: Date;
    }): Promise<boolean> {
      const inserted = (await db('events')
        .insert({
          id: e.id,
          merchant_id: e.merchantId,
          type: e.type,
          data: JSON.stringify(e.data),
          reference: e.reference,
          created_at: e.createdAt,
        })
        .onConflict('reference')
        .ignore()
        .returning('id')) as Array<{ id: string }>;
      return inserted.length > 0;
    },

    async idByReference(reference: string): Promise<string> {
      return ((await db('events').where({ reference }).first('id')) as { id: string }).id;
    },
  };
}
