/**
 * How the API side talks to withdrawal workflows (`withdrawal-<id>`). The endpoint starts one after
 * the withdrawal and its debit have committed; every acquirer callback about the transfer is
 * signal-with-start, so a result that arrives after a run has closed (a return days after
 * completion) starts a fresh run that picks up from the database.
 *
 * Runs carry the merchant and the withdrawal as memo and, unless turned off, as the Keyword search
 * attributes MerchantId and EntityId, as charge workflows do.
 */
import type { Client } from '@temporalio/client';
import type { TransferNotice, WithdrawalWorkflowInput } from '../../../workflows/withdrawal-types';
import { withdrawalWorkflowId } from '../workflow-ids';
import { workflowStarter } from './starter';

export interface WithdrawalRef {
  id: string;
  merchantId: string;
  /** The debit's ledger transaction, when the endpoint that just posted it starts the run. */
  debitTransactionId?: string;
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
  const run = workflowStarter(client, taskQueue, opts, {
    type: 'withdrawalWorkflow',
    workflowId: (w: WithdrawalRef) => withdrawalWorkflowId(w.id),
    input: (w): WithdrawalWorkflowInput => ({
      withdrawalId: w.id,
      ...(w.debitTransactionId ? { debit: { ledgerTransactionId: w.debitTransactionId } } : {}),
      ...(opts.resultDeadlineMs === undefined ? {} : { resultDeadlineMs: opts.resultDeadlineMs }),
    }),
    memo: (w) => ({ withdrawalId: w.id, merchantId: w.merchantId }),
    merchantId: (w) => w.merchantId,
    entityId: (w) => w.id,
  });
  return {
    async start(w) {
      await run.start(w);
    },
    transferUpdated: (w, notice) => run.signal(w, TRANSFER_SIGNAL, [notice]),
  };
}
