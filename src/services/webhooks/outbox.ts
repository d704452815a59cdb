/**
 * Publishing an event to webhooks (docs/api.md "Webhooks"): the deliveries are an outbox, written by
 * `recordEvent` in the event's transaction and started after the commit by `webhooks/dispatcher.ts`.
 * The code lives in platform/events.ts, so that events never import back from webhooks.
 */
export { DELIVERY_CHANNEL } from '../../stores/webhooks';
export { enqueueDeliveries, serialiseEnvelope, type PublishedEvent } from '../platform/events';
