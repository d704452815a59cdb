/** The charge as the API shows it (docs/architecture.md "Charges: how they work"): one mapping, used by create, replay, list and get. */
import type { z } from 'zod';
import type { chargeDetailView, chargeListItem, chargeReplayView, customerView } from '../../contracts/charges';
import type { ChargeRow } from '../../stores/charge-rows';
import type { ChargePaymentRow, ChargeRefundRow } from '../../stores/charges';

export type { ChargeRow } from '../../stores/charge-rows';

/** The views are typed from the response contracts, so what the API sends is what the document says. */
export type CustomerView = z.infer<typeof customerView>;
export type ChargeListItem = z.infer<typeof chargeListItem>;
export type ChargeReplayView = z.infer<typeof chargeReplayView>;
export type ChargeDetailView = z.infer<typeof chargeDetailView>;

export function customerOf(row: ChargeRow): CustomerView | null {
  if (!row.customerId) return null;
  return { id: row.customerId, name: row.customerName ?? '', document: row.customerDocument ?? '' };
}

export function listItem(row: ChargeRow): ChargeListItem {
  return {
    id: row.id,
    type: row.type,
    txid: row.txid,
    qrCode: row.qrCode,
    amount: row.amount,
    description: row.description,
    status: row.status,
    expiresIn: row.expiresIn,
    paidAt: row.paidAt ? row.paidAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
    customer: customerOf(row),
  };
}

/** The replayed creation response (docs/architecture.md "Charges: how they work"): no imageBase64, plus createdAt. */
export function replayView(row: ChargeRow): ChargeReplayView {
  return {
    id: row.id,
    type: row.type,
    txid: row.txid,
    qrCode: row.qrCode,
    amount: row.amount,
    status: row.status,
    expiresIn: row.expiresIn,
    customer: customerOf(row),
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * One charge with the refunds of its payment (docs/api.md "Charges"): MED devoluções show as kind
 * MED; `refundedAmount` sums the CONFIRMED ones, so it says what went back to the payer.
 */
export function detailView(
  row: ChargeRow,
  payment: ChargePaymentRow | undefined,
  refunds: readonly ChargeRefundRow[],
): ChargeDetailView {
  const payer = payment?.payerName || payment?.payerDocument ? payment : undefined;
  return {
    ...listItem(row),
    payer: payer ? { name: payer.payerName ?? '', document: payer.payerDocument ?? '' } : null,
    endToEndId: payment?.e2eId ?? null,
    fee: payment?.feeAmount ?? null,
    refundedAmount: refunds.filter((r) => r.status === 'CONFIRMED').reduce((sum, r) => sum + r.amount, 0),
    refunds: refunds.map((r) => ({
      id: r.id,
      kind: r.kind === 'INFRACTION' ? 'MED' : 'MERCHANT',
      amount: r.amount,
      status: r.status,
      reason: r.reason,
      createdAt: r.createdAt.toISOString(),
      completedAt: r.confirmedAt ? r.confirmedAt.toISOString() : null,
    })),
  };
}
