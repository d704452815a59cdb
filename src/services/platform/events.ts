/**
 * Domain events (`charge.paid`, `charge.refunded`, …): the one way every state change publishes
 * what happened. An event is recorded once per reference in the same transaction as the change
 * it announces, together with one delivery per subscribed ACTIVE webhook (the outbox, below), so
 * an event and its deliveries exist exactly when the change committed. Their workflows are started
 * after the commit: by the webhook dispatcher, or (`startAfterCommit`, a payment's `charge.paid`)
 * by the process that recorded them (docs/performance.md "Payment to webhook: the timeline").
 *
 * The outbox (docs/api.md "Webhooks"): each delivery holds the envelope's exact bytes, serialised
 * once here. `pg_notify` is delivered by PostgreSQL only when the transaction commits, so
 * `webhooks/dispatcher.ts` wakes exactly for committed deliveries, whichever process recorded them;
 * its poll catches any it missed, those recorded without NOTIFY included. It lives here, not in
 * webhooks/, so events never import back.
 */
import { eventsStore } from '../../stores/events';
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import { newId } from '../../lib/ids';
import { subscribedWebhooks, webhooksStore, type PendingDelivery } from '../../stores/webhooks';
import { currentTraceparent } from '../../observability/tracing';
import type { WebhookEventData, WebhookEventType } from '../../contracts/webhook-events';

/** An event of the catalogue with the data its contract (src/contracts/webhook-events.ts) gives it. */
export type RecordEventInput = {
  [E in WebhookEventType]: {
    merchantId: string;
    type: E;
    data: WebhookEventData<E>;
    /** Idempotency reference, e.g. `charge.paid:ch_x`. */
    reference: string;
  };
}[WebhookEventType];

/** How the recording process means to have the event's deliveries started. */
export interface RecordEventOptions {
  /**
   * The caller starts the deliveries itself once the transaction committed (so no NOTIFY wakes
   * the dispatcher for them); the dispatcher's poll still starts any it did not.
   */
  startAfterCommit?: boolean;
}

/** The event, and the deliveries this call created (none for an event recorded before). */
export interface RecordedEvent {
  id: string;
  created: boolean;
  deliveries: PendingDelivery[];
}

/**
 * Returns the event id, new or existing. Call it with the transaction of the change; given a plain
 * knex it opens its own, so the event and its deliveries still commit together.
 */
export async function recordEvent(trx: Db, e: RecordEventInput, opts: RecordEventOptions = {}): Promise<RecordedEvent> {
  if (!(trx as Knex.Transaction).isTransaction) return trx.transaction((t) => recordEvent(t, e, opts));
  const id = newId('evt');
  const timestamp = new Date();
  const store = eventsStore(trx);
  // The event and the webhooks it goes to in one statement, its deliveries (and their NOTIFY) in
  // one more (docs/performance.md "Payment to webhook: the timeline").
  const inserted = await store.insertOnceFor(
    { id, merchantId: e.merchantId, type: e.type, data: e.data, reference: e.reference, createdAt: timestamp },
    subscribedWebhooks(trx, e.merchantId, e.type),
  );
  if (inserted) {
    const deliveries = await enqueueDeliveries(
      trx as Knex.Transaction,
      { eventId: id, merchantId: e.merchantId, type: e.type, data: e.data, timestamp: timestamp.toISOString() },
      inserted.webhookIds,
      { notify: opts.startAfterCommit !== true },
    );
    return { id, created: true, deliveries };
  }
  return { id: await store.idByReference(e.reference), created: false, deliveries: [] };
}

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
 * (`subscribedWebhooks`, read with the event's insert). Returns the deliveries created, as the
 * dispatcher reads them (`PendingDelivery`), for a caller that starts them after the commit.
 */
export async function enqueueDeliveries(
  trx: Knex.Transaction,
  e: PublishedEvent,
  webhookIds: readonly string[],
  opts: { notify?: boolean } = {},
): Promise<PendingDelivery[]> {
  if (webhookIds.length === 0) return [];
  // The outbox breaks the call chain: the row carries the trace on (docs/operations.md "Tracing").
  const traceparent = currentTraceparent();
  const ids = await webhooksStore(trx).enqueueDeliveries({
    eventId: e.eventId,
    merchantId: e.merchantId,
    webhookIds: [...webhookIds],
    payload: serialiseEnvelope(e),
    traceparent,
    notify: opts.notify,
  });
  return ids.map((id) => ({ id, merchant_id: e.merchantId, attempts: 0, traceparent: traceparent ?? null }));
}
