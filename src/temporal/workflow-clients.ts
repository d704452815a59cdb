/**
 * The Temporal clients the API side starts and signals workflows with (one per workflow kind, one
 * task queue), built on the caller's thread or, by `offThreadWorkflowClients`, on a thread of their
 * own (docs/performance.md "Where a charge's time goes").
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { chargeWorkflowClient } from './charge-workflow-client';
import { withdrawalWorkflowClient } from './withdrawal-workflow-client';
import { infractionWorkflowClient } from './infraction-workflow-client';
import { pixKeyWorkflowClient } from './pix-key-workflow-client';
import { webhookDeliveryWorkflowClient } from './webhook-workflow-client';

/** The Temporal clients the API side starts and signals workflows with, on one task queue. */
export function createWorkflowClients(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'TEMPORAL_SEARCH_ATTRIBUTES'>,
) {
  const opts = { searchAttributes: config.TEMPORAL_SEARCH_ATTRIBUTES };
  return {
    charges: chargeWorkflowClient(client, config.TEMPORAL_TASK_QUEUE, opts),
    withdrawals: withdrawalWorkflowClient(client, config.TEMPORAL_TASK_QUEUE, opts),
    infractions: infractionWorkflowClient(client, config.TEMPORAL_TASK_QUEUE, opts),
    pixKeys: pixKeyWorkflowClient(client, config.TEMPORAL_TASK_QUEUE, opts),
    webhookDeliveries: webhookDeliveryWorkflowClient(client, config.TEMPORAL_TASK_QUEUE, opts),
  };
}

export type WorkflowClients = ReturnType<typeof createWorkflowClients>;
