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
