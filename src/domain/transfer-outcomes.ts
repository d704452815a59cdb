/**
 * What a transfer outcome means for its withdrawal (docs/architecture.md "Withdrawals: the saga"). Pure, so the
 * withdrawal workflow, its activities and the transfer callback handler share one rule.
 */
import type { TransferStatus, WithdrawalStatus } from '../contracts/statuses';

/** The withdrawal status each transfer outcome leads to: once there, the outcome has nothing to add. */
export const WITHDRAWAL_STATUS_AFTER: Record<TransferStatus, WithdrawalStatus | null> = {
  PROCESSING: null,
  COMPLETED: 'COMPLETED',
  REJECTED: 'FAILED',
  RETURNED: 'REFUNDED',
};

/**
 * Whether a final outcome contradicts the one the withdrawal already applied: the money either
 * left (COMPLETED, and RETURNED after it) or it never did (REJECTED). COMPLETED on a FAILED
 * withdrawal means the platform paid twice (the transfer went out and the merchant's balance was
 * restored); REJECTED on a COMPLETED or REFUNDED one means the books say money left that never did.
 * RETURNED on a FAILED withdrawal is no contradiction of where the money is: either way it is back
 * with the merchant. The first applied outcome stays (the ledger enforces one resolution of a
 * withdrawal); a contradiction is an operator case, never a second movement.
 */
export function contradictsApplied(outcome: TransferStatus, status: WithdrawalStatus): boolean {
  if (outcome === 'COMPLETED') return status === 'FAILED';
  if (outcome === 'REJECTED') return status === 'COMPLETED' || status === 'REFUNDED';
  return false;
}
