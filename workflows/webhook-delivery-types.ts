/** Pure types shared by the webhook delivery workflow, its activity and its starters. */
export interface WebhookDeliveryInput {
  deliveryId: string;
  /** Number of this run's first attempt (1, or the next one after a restart or a redelivery). */
  firstAttempt: number;
}

export type WebhookAttemptOutcome =
  { status: 'SUCCEEDED' | 'FAILED' | 'CANCELED' } | { status: 'RETRY'; retryInSeconds: number };

export interface WebhookDeliveryResult {
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELED';
  /** Number of the last attempt this run made or found made. */
  lastAttempt: number;
}

/** A delivery as its starters name its run. */
export interface DeliveryRef {
  deliveryId: string;
  merchantId: string;
  firstAttempt: number;
}

/**
 * Starting `webhook-delivery-<id>` runs (src/temporal/clients/webhook.ts). Here, beside the run's
 * input, so that the charge lifecycle, which the workflows reach through their activities' types,
 * can take one without importing the Temporal clients (and through them the workflows) back.
 */
export interface WebhookDeliveryWorkflows {
  /** Resolves true when this call started the run, false when one was already running. */
  start(delivery: DeliveryRef): Promise<boolean>;
}
