/**
 * Publishing an event to webhooks (README "Webhooks"): inside the transaction that records the
 * event, one delivery per ACTIVE webhook of the merchant subscribed to the event's type (or to
 * all events), each holding the envelope's exact bytes, serialised once here. The rows are an
 * outbox: `webhook-dispatcher.ts` starts their workflows after the commit. `pg_notify` is
 * delivered by PostgreSQL only when the transaction commits, so the dispatcher wakes exactly for
 * committed deliveries, whichever process recorded them; its poll catches any it missed.
 */
import type { Knex } from 'knex';
import { newId } from '../lib/ids';

/** LISTEN/NOTIFY channel that wakes the dispatcher. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

export interface PublishedEvent {
  eventId: string;
  merchantId: string;
  type: string;
  data: Record<string, unknown>;
  /** ISO 8601, the envelope's `timestamp`. */
  timestamp: string;
}

/** The body every delivery of the event POSTs (the envelope of README "Receiving webhooks": event, timestamp, data). */
export function serialiseEnvelope(e: Pick<PublishedEvent, 'type' | 'timestamp' | 'data'>): string {
  return JSON.stringify({ event: e.type, timestamp: e.timestamp, data: e.data });
}

/** Must run inside the event's transaction. Returns the ids of the deliveries created. */
export async function enqueueDeliveries(trx: Knex.Transaction, e: PublishedEvent): Promise<string[]> {
  const webhooks = (await trx('webhooks')
    .where({ merchant_id: e.merchantId, status: 'ACTIVE' })
    .andWhere((q) => q.whereRaw(`events = '[]'::jsonb`).orWhereRaw('events @> ?::jsonb', [JSON.stringify([e.type])]))
    .select('id')) as Array<{ id: string }>;
  if (webhooks.length === 0) return [];
  const payload = serialiseEnvelope(e);
  const inserted = (await trx('webhook_deliveries')
    .insert(
      webhooks.map((w) => ({
        id: newId('whd'),
        event_id: e.eventId,
        webhook_id: w.id,
        merchant_id: e.merchantId,
        status: 'PENDING',
        payload,
      })),
    )
    .onConflict(['event_id', 'webhook_id'])
    .ignore()
    .returning('id')) as Array<{ id: string }>;
  if (inserted.length > 0) await trx.raw('select pg_notify(?, ?)', [DELIVERY_CHANNEL, e.merchantId]);
  return inserted.map((r) => r.id);
}
