/**
 * Starting `webhook-delivery-<deliveryId>` workflows. A start of an id that is already running is
 * success (docs/architecture.md "Architecture": workflow ids make every start idempotent), so the dispatcher and the
 * reconciler may both start the same delivery. Runs carry the merchant and the delivery as memo
 * and, where registered, as the MerchantId/EntityId search attributes.
 */
import { recordWorkflowStartFailure } from '../observability/metrics';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { WebhookDeliveryInput } from '../../workflows/webhook-delivery-types';
import { ENTITY_ID_ATTRIBUTE, MERCHANT_ID_ATTRIBUTE } from './charge-workflow-client';
import { webhookDeliveryWorkflowId } from './workflow-ids';

export interface DeliveryRef {
  deliveryId: string;
  merchantId: string;
  firstAttempt: number;
}

export interface WebhookDeliveryWorkflows {
  /** Resolves true when this call started the run, false when one was already running. */
  start(delivery: DeliveryRef): Promise<boolean>;
}

export function webhookDeliveryWorkflowClient(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean } = {},
): WebhookDeliveryWorkflows {
  return {
    async start(d) {
      const typedSearchAttributes: SearchAttributePair[] = [
        { key: MERCHANT_ID_ATTRIBUTE, value: d.merchantId },
        { key: ENTITY_ID_ATTRIBUTE, value: d.deliveryId },
      ];
      const args: [WebhookDeliveryInput] = [{ deliveryId: d.deliveryId, firstAttempt: d.firstAttempt }];
      try {
        await client.workflow.start('webhookDeliveryWorkflow', {
          taskQueue,
          workflowId: webhookDeliveryWorkflowId(d.deliveryId),
          args,
          memo: { deliveryId: d.deliveryId, merchantId: d.merchantId },
          ...(opts.searchAttributes === false ? {} : { typedSearchAttributes }),
        });
        return true;
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
        recordWorkflowStartFailure('webhookDeliveryWorkflow');
        throw err;
      }
    },
  };
}
