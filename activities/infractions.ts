/**
 * MED infraction activities: thin adapters from the `infraction-<id>` workflow to
 * src/services/med/lifecycle.ts. Each one is idempotent, so Temporal may retry it freely.
 */
import type { InfractionProgress, MedRefundState } from '../workflows/infraction-types';
import type { InfractionLifecycle } from '../src/services/med/lifecycle';

export interface InfractionActivities {
  /** Sends the merchant's PENDING defense to the acquirer (idempotent on the defense id). */
  forwardInfractionDefense(infractionId: string): Promise<InfractionProgress>;
  /** Blocks what is missing of the disputed amount from available; `infraction.received` once. */
  blockInfractionFunds(infractionId: string): Promise<InfractionProgress>;
  /** OPEN → REJECTED: unblocks; `infraction.updated` (REJECTED). */
  rejectInfraction(infractionId: string): Promise<InfractionProgress>;
  /** OPEN → ACCEPTED; `infraction.updated` (ACCEPTED). */
  acceptInfraction(infractionId: string): Promise<InfractionProgress>;
  /** Chooses the devolução once (blocked, then the fee) and moves it to transit; cases for what falls short. */
  prepareInfractionRefund(infractionId: string): Promise<InfractionProgress>;
  /** Asks the acquirer for the devolução (idempotent on its id). */
  sendMedRefund(infractionId: string): Promise<MedRefundState>;
  /** Asks the acquirer how the devolução stands. */
  checkMedRefund(infractionId: string): Promise<MedRefundState>;
  /** The devolução was refused or not completed: money re-blocked, an operator case opened. */
  failMedRefund(infractionId: string, reason: string): Promise<InfractionProgress>;
  /** The devolução's outcome cannot be learnt: money kept in transit, a MED_REFUND_UNKNOWN case (once per devolução). */
  reportUnknownMedRefund(infractionId: string, reason: string): Promise<InfractionProgress>;
  /** Applies an operator's decision (retry or release), if one was made. */
  applyOperatorAction(infractionId: string): Promise<InfractionProgress>;
  /** Confirmed: ledger, charge refund, REFUNDED, `infraction.refund_completed`, `charge.refunded`. */
  completeMedRefund(infractionId: string, rtrId: string | null): Promise<InfractionProgress>;
}

export function createInfractionActivities(lifecycle: InfractionLifecycle): InfractionActivities {
  return {
    forwardInfractionDefense: (id) => lifecycle.forwardDefense(id),
    blockInfractionFunds: (id) => lifecycle.block(id),
    rejectInfraction: (id) => lifecycle.reject(id),
    acceptInfraction: (id) => lifecycle.accept(id),
    prepareInfractionRefund: (id) => lifecycle.prepareRefund(id),
    sendMedRefund: (id) => lifecycle.sendRefund(id),
    checkMedRefund: (id) => lifecycle.checkRefund(id),
    failMedRefund: (id, reason) => lifecycle.failRefund(id, reason),
    reportUnknownMedRefund: (id, reason) => lifecycle.reportUnknownRefund(id, reason),
    applyOperatorAction: (id) => lifecycle.applyOperatorAction(id),
    completeMedRefund: (id, rtrId) => lifecycle.completeRefund(id, rtrId),
  };
}
