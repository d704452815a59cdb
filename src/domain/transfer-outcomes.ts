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
 * Whether a final outcome contradicts the applied one: COMPLETED on FAILED (paid twice) or REJECTED
 * on COMPLETED/REFUNDED (money booked as gone that never left). The first outcome stays; a
 * contradiction is an operator case, never a second movement (RETURNED on FAILED is none: the
 * money is back with the merchant either way).
 */
export function contradictsApplied(outcome: TransferStatus, status: WithdrawalStatus): boolean {
  if (outcome === 'COMPLETED') return status === 'FAILED';
  if (outcome === 'REJECTED') return status === 'COMPLETED' || status === 'REFUNDED';
  return false;
}
