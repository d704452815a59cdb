/**
 * How the API side talks to withdrawal workflows (`withdrawal-<id>`). The endpoint starts one after
 * the withdrawal and its debit have committed; every acquirer callback about the transfer is
 * signal-with-start, so a result that arrives after a run has closed (a return days after
 * completion) starts a fresh run that picks up from the database.
 *
 * Runs carry the merchant and the withdrawal as memo and, unless turned off, as the Keyword search
 * attributes MerchantId and EntityId, as charge workflows do.
 */
import { recordWorkflowStartFailure } from '../observability/metrics';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { TransferNotice, WithdrawalWorkflowInput } from '../../workflows/withdrawal-types';
import { ENTITY_ID_ATTRIBUTE, MERCHANT_ID_ATTRIBUTE } from './charge-workflow-client';
import { withdrawalWorkflowId } from './workflow-ids';

export interface WithdrawalRef {
  id: string;
  merchantId: string;
}

/** The signal name the workflow listens on for transfer results. */
export const TRANSFER_SIGNAL = 'transfer';

export interface WithdrawalWorkflows {
  start(withdrawal: WithdrawalRef): Promise<void>;
  transferUpdated(withdrawal: WithdrawalRef, notice: TransferNotice): Promise<void>;
}

export function withdrawalWorkflowClient(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean; resultDeadlineMs?: number } = {},
): WithdrawalWorkflows {
  const base = (w: WithdrawalRef) => {
    const typedSearchAttributes: SearchAttributePair[] = [
      { key: MERCHANT_ID_ATTRIBUTE, value: w.merchantId },
      { key: ENTITY_ID_ATTRIBUTE, value: w.id },
    ];
    return {
      taskQueue,
      workflowId: withdrawalWorkflowId(w.id),
      args: [
        {
          withdrawalId: w.id,
          ...(opts.resultDeadlineMs === undefined ? {} : { resultDeadlineMs: opts.resultDeadlineMs }),
        },
      ] as [WithdrawalWorkflowInput],
      memo: { withdrawalId: w.id, merchantId: w.merchantId },
      ...(opts.searchAttributes === false ? {} : { typedSearchAttributes }),
    };
  };
  return {
    async start(w) {
      try {
        await client.workflow.start('withdrawalWorkflow', base(w));
      } catch (err) {
        // Starting an id that already runs is success: workflow ids derive from business ids.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
          recordWorkflowStartFailure('withdrawalWorkflow');
          throw err;
        }
      }
    },
    async transferUpdated(w, notice) {
      await client.workflow.signalWithStart('withdrawalWorkflow', {
        ...base(w),
        signal: TRANSFER_SIGNAL,
        signalArgs: [notice],
      });
    },
  };
}
