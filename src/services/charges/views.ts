/** The charge as the API shows it (docs/architecture.md "Charges: how they work"): one mapping, used by create, replay, list and get. */
import type { z } from 'zod';
import type { chargeListItem, chargeReplayView, customerView } from '../../contracts/charges';
import type { ChargeRow } from '../../stores/charge-rows';

export type { ChargeRow } from '../../stores/charge-rows';

/** The views are typed from the response contracts, so what the API sends is what the document says. */
export type CustomerView = z.infer<typeof customerView>;
export type ChargeListItem = z.infer<typeof chargeListItem>;
export type ChargeReplayView = z.infer<typeof chargeReplayView>;

export function customerOf(row: ChargeRow): CustomerView | null {
  if (!row.customerId) return null;
  return { id: row.customerId, name: row.customerName ?? '', document: row.customerDocument ?? '' };
}

export function listItem(row: ChargeRow): ChargeListItem {
  return {
    id: row.id,
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
    txid: row.txid,
    qrCode: row.qrCode,
    amount: row.amount,
    status: row.status,
    expiresIn: row.expiresIn,
    customer: customerOf(row),
    createdAt: row.createdAt.toISOString(),
  };
}
