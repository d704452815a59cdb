/**
 * `webhook-delivery-<deliveryId>`: POSTs one event to one webhook, attempt after attempt, with a
 * durable timer between attempts (docs/api.md "Webhooks": at once, then after the configured delays).
 * The activity decides everything — whether the webhook may still receive, whether the answer
 * was a success, how long to wait — so the schedule follows configuration and the workflow stays
 * a loop. A timer survives worker restarts; nothing is lost while it waits.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from './webhook-delivery-types';

/*
 * The attempt returns the HTTP outcome as a value and throws only on our own failures (retried for
 * an hour); its log row is unique per attempt, so a retry never counts twice. 90 s covers the HTTP
 * deadline (60 s at most) and the writes.
 */
const { attemptWebhookDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '90 seconds',
  scheduleToCloseTimeout: '1 hour',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: ['NotFoundError'],
  },
});

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  for (let attempt = input.firstAttempt; ; attempt++) {
    const outcome = await attemptWebhookDelivery(input.deliveryId, attempt);
    if (outcome.status !== 'RETRY') return { status: outcome.status, lastAttempt: attempt };
    await sleep(outcome.retryInSeconds * 1000);
  }
}
