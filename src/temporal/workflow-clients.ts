/**
 * The Temporal clients the API side starts and signals workflows with (one per workflow kind, one
 * task queue), built on the caller's thread or, by `offThreadWorkflowClients`, on a thread of their
 * own (docs/performance.md "Where a charge's time goes").
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { chargeWorkflowClient } from './clients/charge';
import { withdrawalWorkflowClient } from './clients/withdrawal';
import { infractionWorkflowClient } from './clients/infraction';
import { pixKeyWorkflowClient } from './clients/pix-key';
import { webhookDeliveryWorkflowClient } from './clients/webhook';
import { subscriptionWorkflowClient } from './clients/subscription';

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
    subscriptions: subscriptionWorkflowClient(client, config.TEMPORAL_TASK_QUEUE, opts),
  };
}

export type WorkflowClients = ReturnType<typeof createWorkflowClients>;
