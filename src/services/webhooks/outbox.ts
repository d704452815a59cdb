/**
 * Publishing an event to webhooks (docs/api.md "Webhooks"): inside the transaction that records the
 * event, one delivery per ACTIVE webhook of the merchant subscribed to the event's type (or to
 * all events), each holding the envelope's exact bytes, serialised once here. The rows are an
 * outbox: `webhooks/dispatcher.ts` starts their workflows after the commit. `pg_notify` is
 * delivered by PostgreSQL only when the transaction commits, so the dispatcher wakes exactly for
 * committed deliveries, whichever process recorded them; its poll catches any it missed.
 */
import type { Knex } from 'knex';
import { DELIVERY_CHANNEL, webhooksStore } from '../../stores/webhooks';
import { currentTraceparent } from '../../observability/tracing';

export { DELIVERY_CHANNEL };

export interface PublishedEvent {
  eventId: string;
  merchantId: string;
  type: string;
  data: Record<string, unknown>;
  /** ISO 8601, the envelope's `timestamp`. */
  timestamp: string;
}

/** The body every delivery of the event POSTs (the envelope of docs/api.md "Receiving webhooks": event, timestamp, data). */
export function serialiseEnvelope(e: Pick<PublishedEvent, 'type' | 'timestamp' | 'data'>): string {
  return JSON.stringify({ event: e.type, timestamp: e.timestamp, data: e.data });
}

/**
 * Must run inside the event's transaction, with the ids of the webhooks subscribed to it
 * (`subscribedWebhooks`, read with the event's insert). Returns the ids of the deliveries created.
 */
export async function enqueueDeliveries(
  trx: Knex.Transaction,
  e: PublishedEvent,
  webhookIds: readonly string[],
): Promise<string[]> {
  if (webhookIds.length === 0) return [];
  return webhooksStore(trx).enqueueDeliveries({
    eventId: e.eventId,
    merchantId: e.merchantId,
    webhookIds: [...webhookIds],
    payload: serialiseEnvelope(e),
    // The outbox breaks the call chain: the row carries the trace on (docs/operations.md "Tracing").
    traceparent: currentTraceparent(),
  });
}
