/**
 * How the API side talks to charge workflows. Every message is signal-with-start on
 * `charge-<id>`: if the run has closed (a late payment, a refund a week later) a new run starts
 * from the database state and handles it, so no signal is ever lost to a closed workflow.
 *
 * Each run carries the merchant and the charge as memo and, where the cluster has them registered
 * (docker-compose does; TEMPORAL_SEARCH_ATTRIBUTES=false turns them off), as the Keyword search
 * attributes MerchantId and EntityId, so operators filter money movements by merchant in the UI.
 */
import type { Client } from '@temporalio/client';
import type { PaymentNotice, RefundSettledNotice } from '../../../workflows/charge-types';
import { chargeWorkflowId } from '../workflow-ids';
import { workflowStarter } from './starter';

export { ENTITY_ID_ATTRIBUTE, MERCHANT_ID_ATTRIBUTE } from './starter';

/** The charge a message is about: both ids name the workflow and tag it. */
export interface ChargeRef {
  id: string;
  merchantId: string;
}

export interface ChargeWorkflows {
  /**
   * Starts the charge's workflow. `startDelayMs` (creation passes the charge's expiry) defers its
   * first workflow task: until something happens to the charge it costs the worker nothing, and
   * every message below is signal-with-start, which ends the delay at once
   * (docs/performance.md "Where a charge's time goes").
   */
  start(charge: ChargeRef, opts?: { startDelayMs?: number }): Promise<void>;
  paymentReceived(charge: ChargeRef, notice: PaymentNotice): Promise<void>;
  cancelRequested(charge: ChargeRef): Promise<void>;
  refundRequested(charge: ChargeRef, refundId: string): Promise<void>;
  refundSettled(charge: ChargeRef, notice: RefundSettledNotice): Promise<void>;
  /** An operator's retry of an EXPIRY_ACQUIRER_UNREACHABLE case: ask the acquirer about the cob now (docs/operations.md "Operator cases"). */
  askAcquirer(charge: ChargeRef): Promise<void>;
}

export function chargeWorkflowClient(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean } = {},
): ChargeWorkflows {
  const run = workflowStarter(client, taskQueue, opts, {
    type: 'chargeWorkflow',
    workflowId: (charge: ChargeRef) => chargeWorkflowId(charge.id),
    input: (charge) => ({ chargeId: charge.id }),
    memo: (charge) => ({ chargeId: charge.id, merchantId: charge.merchantId }),
    merchantId: (charge) => charge.merchantId,
    entityId: (charge) => charge.id,
  });
  const signal = run.signal;
  return {
    async start(charge, startOpts) {
      await run.start(charge, startOpts);
    },
    paymentReceived: (charge, notice) => signal(charge, 'paid', [notice]),
    cancelRequested: (charge) => signal(charge, 'cancel', []),
    refundRequested: (charge, refundId) => signal(charge, 'refund', [{ refundId }]),
    refundSettled: (charge, notice) => signal(charge, 'refundSettled', [notice]),
    askAcquirer: (charge) => signal(charge, 'askAcquirer', []),
  };
}
