/**
 * Starts `pixkey-<id>`, the registration of one PIX key at the acquirer
 * (docs/architecture.md "PIX keys: registration and activation"). Starting an id that already runs is success; one that has closed
 * starts again (the workflow first checks whether the key still needs registering).
 */
import type { Client } from '@temporalio/client';
import { pixKeyWorkflowId } from '../workflow-ids';
import { workflowStarter } from './starter';

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
  const run = workflowStarter(client, taskQueue, opts, {
    type: 'pixKeyRegistrationWorkflow',
    workflowId: (key: PixKeyRef) => pixKeyWorkflowId(key.id),
    input: (key) => ({ pixKeyId: key.id }),
    memo: (key) => ({ pixKeyId: key.id, merchantId: key.merchantId }),
    merchantId: (key) => key.merchantId,
    entityId: (key) => key.id,
  });
  return {
    async register(key) {
      await run.start(key);
    },
  };
}
