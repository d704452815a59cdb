/** Every query on `events`: one row per unique reference, the source of webhook deliveries. */
import type { Knex } from 'knex';
import type { Db } from '../db/types';

export function eventsStore(db: Db) {
  return {
    /**
     * Inserts the event unless its reference exists and, in the same statement, reads the ids of
     * the webhooks it goes to (`subscribers`, a subquery of ids): null when the reference existed.
     */
    async insertOnceFor(
      e: {
        id: string;
        merchantId: string;
        type: string;
        data: Record<string, unknown>;
        reference: string;
        createdAt: Date;
      },
      subscribers: Knex.QueryBuilder,
    ): Promise<{ webhookIds: string[] } | null> {
      const rows = (await db
        .with(
          'e',
          db('events')
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
            .returning('id'),
        )
        .from('e')
        .leftJoin(subscribers.as('w'), db.raw('true'))
        .select({ webhook_id: 'w.id' })) as Array<{ webhook_id: string | null }>;
      if (rows.length === 0) return null;
      return { webhookIds: rows.flatMap((r) => (r.webhook_id ? [r.webhook_id] : [])) };
    },

    async idByReference(reference: string): Promise<string> {
      return ((await db('events').where({ reference }).first('id')) as { id: string }).id;
    },
  };
}
