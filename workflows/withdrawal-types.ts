/**
 * Plain types shared by the withdrawal workflow, its activities and the code that signals it.
 * Pure types only: this file enters the workflow bundle.
 */

import type { TransferStatus, WithdrawalStatus } from '../src/contracts/statuses';

export interface WithdrawalWorkflowInput {
  withdrawalId: string;
  /**
   * The debit the endpoint posted with the withdrawal row, given when the endpoint starts the run
   * right after that commit: the run then begins at the transfer, and its input shows the debit's
   * ledger transaction (docs/architecture.md "Withdrawals: the saga"). Absent when anything else
   * starts the run (the reconciler, a callback): the run confirms the debit from PostgreSQL first.
   */
  debit?: { ledgerTransactionId: string };
  /** How long to wait for the transfer's outcome before the operator alert (default 24 hours). */
  resultDeadlineMs?: number;
}

export type { WithdrawalStatus };

/** The transfer's state at the acquirer, as a callback or a poll reported it. */
export type TransferOutcomeStatus = TransferStatus;

/** What the acquirer told us about the withdrawal's transfer (callback, poll or the send itself). */
export interface TransferNotice {
  status: TransferOutcomeStatus;
  transferId: string | null;
  /** The acquirer's `motivo` for REJECTED and RETURNED. */
  reason?: string;
}

/** The withdrawal as the workflow needs it; read from PostgreSQL, the system of record. */
export interface WithdrawalSnapshot {
  id: string;
  merchantId: string;
  status: WithdrawalStatus;
  amount: number;
  transferId: string | null;
  batchId: string | null;
}

/** The debit the endpoint posted with the withdrawal row, as the saga's first step confirms it. */
export interface DebitConfirmation {
  snapshot: WithdrawalSnapshot;
  /** The ledger transaction holding the debit (available → in transit). */
  ledgerTransactionId: string;
  /** false: already posted by the endpoint in the withdrawal's own transaction (the normal case). */
  postedNow: boolean;
}

/** What applying an outcome did, for the history to read. */
export interface ApplyOutcome {
  status: WithdrawalStatus;
  /** false when it had already been applied (a duplicate callback or a retried activity). */
  changed: boolean;
}

export interface WithdrawalWorkflowState {
  phase: 'sending' | 'awaiting_result' | 'escalated' | 'done';
  status: WithdrawalStatus;
  transferId: string | null;
  polls: number;
}
