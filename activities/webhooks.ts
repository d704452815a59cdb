/** Webhook activities: one line over the delivery service, which is idempotent per attempt. */
import type { WebhookDelivery } from '../src/services/webhooks/delivery';
import type { WebhookAttemptOutcome } from '../workflows/webhook-delivery-types';

export interface WebhookActivities {
  /** POSTs attempt `attempt` of a delivery (unless its webhook is gone or inactive) and logs it. */
  attemptWebhookDelivery(deliveryId: string, attempt: number): Promise<WebhookAttemptOutcome>;
}

export function createWebhookActivities(delivery: WebhookDelivery): WebhookActivities {
  return {
    attemptWebhookDelivery: (deliveryId, attempt) => delivery.attempt(deliveryId, attempt),
  };
}
