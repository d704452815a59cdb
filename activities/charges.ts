/**
 * Charge activities: thin adapters from the charge workflow to the charge services.
 * Each one is idempotent, so Temporal may retry it freely.
 */
import { recordChargePaid } from '../src/observability/metrics';
import type {
  ChargeSnapshot,
  ExpireOutcome,
  ExpiryCaseNotice,
  PaymentNotice,
  RecordedPayment,
  RefundSettledNotice,
} from '../workflows/charge-types';
import type { ChargeLifecycle } from '../src/services/charges/lifecycle';

export interface ChargeActivities {
  loadChargeSnapshot(chargeId: string): Promise<ChargeSnapshot>;
  /**
   * Applies a payment once per endToEndId, as the signed callback or the acquirer states it (never
   * the notice's word alone): ledger credit with fee split, PAID, `charge.paid`; answers with the
   * charge as it left it.
   */
  recordPayment(chargeId: string, notice: PaymentNotice): Promise<RecordedPayment>;
  /** A payment recordPayment could not apply: parked in the inbox with an operator alert. */
  parkPayment(chargeId: string, notice: PaymentNotice, reason: string): Promise<void>;
  /** What the acquirer says was paid on the charge's cob (`GET /cob/{txid}`). */
  paymentsAtAcquirer(chargeId: string): Promise<PaymentNotice[]>;
  /** PENDING → CANCELED (guarded); anything else is left alone. */
  expireCharge(chargeId: string): Promise<ExpireOutcome>;
  /** Removes the cob at the acquirer; an already removed cob is success; a paid one returns its payments. */
  removeCob(chargeId: string): Promise<PaymentNotice[]>;
  /** Moves the charge's net amount pending → available (idempotent on the charge). */
  settleCharge(chargeId: string): Promise<void>;
  /** Asks the acquirer for the devolução (idempotent on the refund id). */
  sendRefund(refundId: string): Promise<{ settled: RefundSettledNotice | null }>;
  /** Asks the acquirer how a devolução ended; null while it is still processing. */
  checkRefund(refundId: string): Promise<RefundSettledNotice | null>;
  /** Applies a refund outcome: ledger, refunded total, REFUNDED, `charge.refunded` (idempotent). */
  settleRefund(result: RefundSettledNotice): Promise<void>;
  /** A refund the workflow cannot carry: stays REQUESTED, parked with an operator alert. */
  parkRefund(refundId: string, reason: string): Promise<void>;
  /** The acquirer cannot be asked about a due charge's cob: an EXPIRY_ACQUIRER_UNREACHABLE case, opened once per reference. */
  openExpiryCase(chargeId: string, notice: ExpiryCaseNotice): Promise<void>;
  /** The wait is over (the acquirer answered, or the charge left PENDING): the case, if still open, is resolved by the system. */
  closeExpiryCase(chargeId: string, reference: string, resolution: string): Promise<void>;
}

/** The activities over the charge lifecycle service: one line each, by design. */
export function createChargeActivities(lifecycle: ChargeLifecycle): ChargeActivities {
  return {
    loadChargeSnapshot: (chargeId) => lifecycle.loadSnapshot(chargeId),
    recordPayment: async (chargeId, notice) => {
      const recorded = await lifecycle.recordPayment(chargeId, notice);
      // Counted once the transaction committed; a duplicate payment is not counted again.
      if (recorded.kind === 'paid') recordChargePaid(recorded.snapshot?.amount ?? notice.amount);
      return recorded;
    },
    parkPayment: (chargeId, notice, reason) => lifecycle.parkPayment(chargeId, notice, reason),
    paymentsAtAcquirer: (chargeId) => lifecycle.paymentsAtAcquirer(chargeId),
    expireCharge: (chargeId) => lifecycle.expire(chargeId),
    removeCob: (chargeId) => lifecycle.removeCob(chargeId),
    settleCharge: (chargeId) => lifecycle.settle(chargeId),
    sendRefund: (refundId) => lifecycle.sendRefund(refundId),
    checkRefund: (refundId) => lifecycle.checkRefund(refundId),
    settleRefund: (result) => lifecycle.settleRefund(result),
    parkRefund: (refundId, reason) => lifecycle.parkRefund(refundId, reason),
    openExpiryCase: (chargeId, notice) => lifecycle.openExpiryCase(chargeId, notice),
    closeExpiryCase: (chargeId, reference, resolution) => lifecycle.closeExpiryCase(chargeId, reference, resolution),
  };
}
