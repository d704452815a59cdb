/**
 * Withdrawal activities: thin adapters from the withdrawal saga to the withdrawal lifecycle service.
 * Each one is idempotent, so Temporal may retry it freely.
 */
import type {
  ApplyOutcome,
  DebitConfirmation,
  TransferNotice,
  WithdrawalSnapshot,
} from '../workflows/withdrawal-types';
import type { WithdrawalLifecycle } from '../src/services/withdrawals/lifecycle';
import { recordWithdrawal, type WithdrawalOutcome } from '../src/observability/metrics';

/** Counts an outcome once: only the call that changed the withdrawal, never a retry's replay. */
async function counted(outcome: WithdrawalOutcome, applied: Promise<ApplyOutcome>): Promise<ApplyOutcome> {
  const result = await applied;
  if (result.changed) recordWithdrawal(outcome);
  return result;
}

export interface WithdrawalActivities {
  /** The saga's first step: confirms (or, as a fallback, posts) the debit available → in transit. */
  confirmWithdrawalDebit(withdrawalId: string): Promise<DebitConfirmation>;
  loadWithdrawalSnapshot(withdrawalId: string): Promise<WithdrawalSnapshot>;
  /** POST /transfers, idempotent on the withdrawal id; stores transferId and batchId. */
  sendWithdrawalTransfer(withdrawalId: string): Promise<TransferNotice>;
  /** Where the transfer stands at the acquirer (the polling fallback). */
  checkWithdrawalTransfer(withdrawalId: string): Promise<TransferNotice>;
  /** COMPLETED: in transit leaves the books, `withdraw.completed`. */
  completeWithdrawal(withdrawalId: string, notice: TransferNotice): Promise<ApplyOutcome>;
  /** Compensation of a rejected transfer: available restored, FAILED, `withdraw.failed`, notification. */
  failWithdrawal(withdrawalId: string, reason: string): Promise<ApplyOutcome>;
  /** Compensation of a returned transfer: available restored, REFUNDED, `withdraw.refunded`. */
  refundWithdrawal(withdrawalId: string, notice: TransferNotice): Promise<ApplyOutcome>;
  /** Operator alert (audit log + merchant notification) when the transfer stays unresolved. */
  raiseWithdrawalAlert(withdrawalId: string, lastKnown: TransferNotice): Promise<{ raised: boolean }>;
  /** An outcome contradicting the applied one: a TRANSFER_CONTRADICTION case, once per withdrawal and outcome; nothing else changes. */
  reportTransferContradiction(withdrawalId: string, notice: TransferNotice): Promise<{ opened: boolean }>;
}

/** The activities over the withdrawal lifecycle service: one line each, by design (outcomes counted for /metrics). */
export function createWithdrawalActivities(lifecycle: WithdrawalLifecycle): WithdrawalActivities {
  return {
    confirmWithdrawalDebit: (id) => lifecycle.confirmDebit(id),
    loadWithdrawalSnapshot: (id) => lifecycle.loadSnapshot(id),
    sendWithdrawalTransfer: (id) => lifecycle.sendTransfer(id),
    checkWithdrawalTransfer: (id) => lifecycle.checkTransfer(id),
    completeWithdrawal: (id, notice) => counted('completed', lifecycle.complete(id, notice)),
    failWithdrawal: (id, reason) => counted('failed', lifecycle.fail(id, reason)),
    refundWithdrawal: (id, notice) => counted('refunded', lifecycle.refund(id, notice)),
    raiseWithdrawalAlert: (id, lastKnown) => lifecycle.raiseAlert(id, lastKnown),
    reportTransferContradiction: (id, notice) => lifecycle.reportContradiction(id, notice),
  };
}
