/**
 * A merchant refund still in transit when a MED devolução was chosen was counted against what the
 * payer was owed, as money on its way back to them (docs/operations.md "The money of an
 * infraction"). When that merchant refund then fails, its money returns to the merchant and the
 * payer is short: a MED_SHORTFALL case per infraction and failed refund, so an operator settles it.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { infractionsStore } from '../../stores/infractions';
import { openOperatorCase } from '../platform/operator-cases';

export async function reportFailedRefundShortfall(
  trx: Knex.Transaction,
  logger: Logger,
  refund: { id: string; chargeId: string; merchantId: string; amount: number },
): Promise<void> {
  for (const inf of await infractionsStore(trx).withDevolucaoOnCharge(refund.chargeId)) {
    const shortfall = Math.min(refund.amount, inf.amount - (inf.refundAmount ?? 0));
    if (shortfall <= 0) continue;
    await openOperatorCase(trx, logger, {
      reference: `infraction:${inf.id}:MED_SHORTFALL:${refund.id}`,
      kind: 'MED_SHORTFALL',
      merchantId: inf.merchantId,
      subjectType: 'infraction',
      subjectId: inf.id,
      reason: `merchant refund ${refund.id} of ${refund.amount} cents, counted as returned to the payer, failed: the payer is ${shortfall} cents short`,
      details: {
        chargeId: refund.chargeId,
        failedRefundId: refund.id,
        owed: inf.amount,
        returned: inf.refundAmount ?? 0,
        shortfall,
      },
    });
  }
}
