/**
 * Plain types shared by the charge workflow, its activities and the code that signals it.
 * Pure types only: this file enters the workflow bundle.
 */

import type { ChargeStatus } from '../src/contracts/statuses';

/** What the acquirer told us about a payment (from the `/v1/acquirer/pix` callback). */
export interface PaymentNotice {
  endToEndId: string;
  txid: string;
  /** Integer cents. */
  amount: number;
  /** ISO 8601, the acquirer's `horario`. */
  paidAt: string;
  payer: { name: string; document: string } | null;
}

export interface RefundSettledNotice {
  refundId: string;
  outcome: 'CONFIRMED' | 'FAILED';
  reason?: string;
}

export interface ChargeWorkflowInput {
  chargeId: string;
  /** Refund polls made so far, per refund id (carried across continue-as-new). */
  refundPolls?: Record<string, number>;
  /** A due charge waiting for the acquirer to answer about its cob (carried across continue-as-new). */
  expiryWait?: ExpiryWait;
}

/**
 * A due charge whose cob the acquirer could not be asked about (docs/architecture.md "Charges: how they work",
 * Expiry): it stays PENDING, an EXPIRY_ACQUIRER_UNREACHABLE operator case is open, and the workflow
 * asks again on a backoff until `since` + the maximum wait. Instants are on the workflow's clock.
 */
export interface ExpiryWait {
  /** When the first question failed: names the outage (and its case's reference). */
  since: number;
  /** Questions that failed since then. */
  asks: number;
  /** When to ask next; null once the maximum wait is over (the case waits for an operator). */
  nextAskAt: number | null;
}

/** What the workflow tells the case when it opens it. */
export interface ExpiryCaseNotice {
  reference: string;
  /** Why the acquirer could not be asked (the activity's failure). */
  error: string;
  /** ISO instants on the workflow's clock: the outage's start and the last question. */
  since: string;
  askUntil: string;
}

/** The charge as the workflow needs it; read from PostgreSQL, the system of record. */
export interface ChargeSnapshot {
  id: string;
  merchantId: string;
  status: ChargeStatus;
  txid: string | null;
  amount: number;
  /**
   * Time left, at the moment of reading, until a PENDING charge expires (≤ 0: due). A duration,
   * not an instant: the workflow turns it into a deadline on its own clock the first time it sees
   * it, so database time and workflow time never get compared (under a time-skipping test server
   * they differ by days).
   */
  expiresInMs: number;
  /** Time left until a PAID charge's net moves pending → available; null while unpaid. */
  settlesInMs: number | null;
  settled: boolean;
  /** Refunds requested but not yet confirmed or failed at the acquirer. */
  openRefundIds: string[];
}

export type RecordPaymentOutcome =
  /** This payment made the charge PAID (ledger credited, `charge.paid` recorded). */
  | { kind: 'paid' }
  /** The same endToEndId was already applied: a duplicate callback, harmless. */
  | { kind: 'duplicate' }
  /** The charge can no longer take a payment (CANCELED, FAILED, or already paid by another e2e id):
   *  the money must go back to the payer. `refundId` names the refund created for it. */
  | { kind: 'not_payable'; refundId: string }
  /** Neither a signed callback nor the acquirer knows this payment: nothing applied, the signal recorded. */
  | { kind: 'unconfirmed' };

/**
 * What the `recordPayment` activity answers: the outcome and the charge as the payment left it, so
 * the workflow needs no second activity to read it (docs/performance.md "Payment to webhook: the
 * timeline"). `snapshot` is absent from results recorded before it existed.
 */
export type RecordedPayment = RecordPaymentOutcome & { snapshot?: ChargeSnapshot };

export type ExpireOutcome = { kind: 'canceled' } | { kind: 'not_pending' };

export interface ChargeWorkflowState {
  phase: 'awaiting_payment' | 'awaiting_settlement' | 'refunding' | 'done';
  chargeStatus: ChargeSnapshot['status'];
  openRefunds: string[];
  /** Present while a due charge waits for the acquirer to answer (ISO instants; nextAskAt null: stopped asking). */
  acquirerUnreachable?: { since: string; asks: number; nextAskAt: string | null };
}
