/**
 * Starting `webhook-delivery-<deliveryId>` workflows. A start of an id that is already running is
 * success (docs/architecture.md "Architecture": workflow ids make every start idempotent), so the dispatcher and the
 * reconciler may both start the same delivery. Runs carry the merchant and the delivery as memo
 * and, where registered, as the MerchantId/EntityId search attributes.
 */
import type { Client } from '@temporalio/client';
import type {
  DeliveryRef,
  WebhookDeliveryInput,
  WebhookDeliveryWorkflows,
} from '../../../workflows/webhook-delivery-types';
import { webhookDeliveryWorkflowId } from '../workflow-ids';
import { workflowStarter } from './starter';

export type { DeliveryRef, WebhookDeliveryWorkflows };

export function webhookDeliveryWorkflowClient(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean } = {},
): WebhookDeliveryWorkflows {
  const run = workflowStarter(client, taskQueue, opts, {
    type: 'webhookDeliveryWorkflow',
    workflowId: (d: DeliveryRef) => webhookDeliveryWorkflowId(d.deliveryId),
    input: (d): WebhookDeliveryInput => ({ deliveryId: d.deliveryId, firstAttempt: d.firstAttempt }),
    memo: (d) => ({ deliveryId: d.deliveryId, merchantId: d.merchantId }),
    merchantId: (d) => d.merchantId,
    entityId: (d) => d.deliveryId,
  });
  return { start: (d) => run.start(d) };
}
