/**
 * How the API side talks to charge workflows. Every message is signal-with-start on
 * `charge-<id>`: if the run has closed (a late payment, a refund a week later) a new run starts
 * from the database state and handles it, so no signal is ever lost to a closed workflow.
 *
 * Each run carries the merchant and the charge as memo and, where the cluster has them registered
 * (docker-compose does; TEMPORAL_SEARCH_ATTRIBUTES=false turns them off), as the Keyword search
 * attributes MerchantId and EntityId, so operators filter money movements by merchant in the UI.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { defineSearchAttributeKey, type SearchAttributePair } from '@temporalio/common';
import type { PaymentNotice, RefundSettledNotice } from '../../workflows/charge-types';
import { chargeWorkflowId } from './workflow-ids';
import { recordWorkflowStartFailure } from '../observability/metrics';
import { ENTITY_ID_ATTRIBUTE_NAME, MERCHANT_ID_ATTRIBUTE_NAME } from './search-attribute-names';

export const MERCHANT_ID_ATTRIBUTE = defineSearchAttributeKey(MERCHANT_ID_ATTRIBUTE_NAME, 'KEYWORD');
export const ENTITY_ID_ATTRIBUTE = defineSearchAttributeKey(ENTITY_ID_ATTRIBUTE_NAME, 'KEYWORD');

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
  const base = (charge: ChargeRef) => {
    const typedSearchAttributes: SearchAttributePair[] = [
      { key: MERCHANT_ID_ATTRIBUTE, value: charge.merchantId },
      { key: ENTITY_ID_ATTRIBUTE, value: charge.id },
    ];
    return {
      taskQueue,
      workflowId: chargeWorkflowId(charge.id),
      args: [{ chargeId: charge.id }] as [{ chargeId: string }],
      memo: { chargeId: charge.id, merchantId: charge.merchantId },
      ...(opts.searchAttributes === false ? {} : { typedSearchAttributes }),
    };
  };
  const signal = async (charge: ChargeRef, name: string, args: unknown[]): Promise<void> => {
    try {
      await client.workflow.signalWithStart('chargeWorkflow', { ...base(charge), signal: name, signalArgs: args });
    } catch (err) {
      recordWorkflowStartFailure('chargeWorkflow');
      throw err;
    }
  };
  return {
    async start(charge, startOpts) {
      const delay = startOpts?.startDelayMs ?? 0;
      try {
        await client.workflow.start('chargeWorkflow', { ...base(charge), ...(delay > 0 ? { startDelay: delay } : {}) });
      } catch (err) {
        // Starting an id that already runs is success (docs/architecture.md "Architecture": workflow ids).
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
          recordWorkflowStartFailure('chargeWorkflow');
          throw err;
        }
      }
    },
    paymentReceived: (charge, notice) => signal(charge, 'paid', [notice]),
    cancelRequested: (charge) => signal(charge, 'cancel', []),
    refundRequested: (charge, refundId) => signal(charge, 'refund', [{ refundId }]),
    refundSettled: (charge, notice) => signal(charge, 'refundSettled', [notice]),
    askAcquirer: (charge) => signal(charge, 'askAcquirer', []),
  };
}
