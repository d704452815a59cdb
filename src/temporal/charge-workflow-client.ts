/**
 * How the API side talks to charge workflows. Every message is signal-with-start on
 * `charge-<id>`: if the run has closed (a late payment, a refund a week later) a new run starts
 * from the database state and handles it, so no signal is ever lost to a closed workflow.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { PaymentNotice, RefundSettledNotice } from '../../workflows/charge-types';
import { chargeWorkflowId } from './workflow-ids';

export interface ChargeWorkflows {
  start(chargeId: string, merchantId: string): Promise<void>;
  paymentReceived(chargeId: string, notice: PaymentNotice): Promise<void>;
  cancelRequested(chargeId: string): Promise<void>;
  refundRequested(chargeId: string, refundId: string): Promise<void>;
  refundSettled(chargeId: string, notice: RefundSettledNotice): Promise<void>;
}

export function chargeWorkflowClient(client: Client, taskQueue: string): ChargeWorkflows {
  const base = (chargeId: string) => ({
    taskQueue,
    workflowId: chargeWorkflowId(chargeId),
    args: [{ chargeId }] as [{ chargeId: string }],
    memo: { chargeId },
  });
  const signal = async (chargeId: string, name: string, args: unknown[]): Promise<void> => {
    await client.workflow.signalWithStart('chargeWorkflow', { ...base(chargeId), signal: name, signalArgs: args });
  };
  return {
    async start(chargeId, merchantId) {
      try {
        await client.workflow.start('chargeWorkflow', { ...base(chargeId), memo: { chargeId, merchantId } });
      } catch (err) {
        // Starting an id that already runs is success (DESIGN §2b).
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    },
    paymentReceived: (chargeId, notice) => signal(chargeId, 'paid', [notice]),
    cancelRequested: (chargeId) => signal(chargeId, 'cancel', []),
    refundRequested: (chargeId, refundId) => signal(chargeId, 'refund', [{ refundId }]),
    refundSettled: (chargeId, notice) => signal(chargeId, 'refundSettled', [notice]),
  };
}
