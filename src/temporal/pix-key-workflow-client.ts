/**
 * Starts `pixkey-<id>`, the registration of one PIX key at the acquirer
 * (docs/architecture.md "PIX keys: registration and activation"). Starting an id that already runs is success; one that has closed
 * starts again (the workflow first checks whether the key still needs registering).
 */
import { recordWorkflowStartFailure } from '../observability/metrics';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { ENTITY_ID_ATTRIBUTE, MERCHANT_ID_ATTRIBUTE } from './charge-workflow-client';
import { pixKeyWorkflowId } from './workflow-ids';

export interface PixKeyRef {
  id: string;
  merchantId: string;
}

export interface PixKeyWorkflows {
  register(key: PixKeyRef): Promise<void>;
}

export function pixKeyWorkflowClient(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean } = {},
): PixKeyWorkflows {
  return {
    async register(key) {
      const typedSearchAttributes: SearchAttributePair[] = [
        { key: MERCHANT_ID_ATTRIBUTE, value: key.merchantId },
        { key: ENTITY_ID_ATTRIBUTE, value: key.id },
      ];
      try {
        await client.workflow.start('pixKeyRegistrationWorkflow', {
          taskQueue,
          workflowId: pixKeyWorkflowId(key.id),
          args: [{ pixKeyId: key.id }],
          memo: { pixKeyId: key.id, merchantId: key.merchantId },
          ...(opts.searchAttributes === false ? {} : { typedSearchAttributes }),
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
          recordWorkflowStartFailure('pixKeyRegistrationWorkflow');
          throw err;
        }
      }
    },
  };
}
