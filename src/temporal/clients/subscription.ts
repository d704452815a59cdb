/**
 * How the API side talks to subscription workflows (`subscription-<id>`): start once at creation,
 * then signal-with-start, so a message to a closed run starts one that reads the database first.
 * MerchantId and EntityId search attributes as every money workflow (./starter.ts).
 */
import type { Client } from '@temporalio/client';
import { subscriptionWorkflowId } from '../workflow-ids';
import { workflowStarter } from './starter';

export interface SubscriptionRef {
  id: string;
  merchantId: string;
}

export interface SubscriptionWorkflows {
  start(s: SubscriptionRef): Promise<void>;
  /** The acquirer called back about the rec or a cobr: look again (a signal never proves anything). */
  lookAgain(s: SubscriptionRef): Promise<void>;
  cancelRequested(s: SubscriptionRef): Promise<void>;
}

export function subscriptionWorkflowClient(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean } = {},
): SubscriptionWorkflows {
  const run = workflowStarter(client, taskQueue, opts, {
    type: 'subscriptionWorkflow',
    workflowId: (s: SubscriptionRef) => subscriptionWorkflowId(s.id),
    input: (s) => ({ subscriptionId: s.id }),
    memo: (s) => ({ subscriptionId: s.id, merchantId: s.merchantId }),
    merchantId: (s) => s.merchantId,
    entityId: (s) => s.id,
  });
  return {
    async start(s) {
      await run.start(s);
    },
    lookAgain: (s) => run.signal(s, 'lookAgain', []),
    cancelRequested: (s) => run.signal(s, 'cancel', []),
  };
}
