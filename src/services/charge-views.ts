/** The charge as the API shows it (docs/architecture.md "Charges: how they work"): one mapping, used by create, replay, list and get. */
import type { Charge } from '../models/charge';
import type { ChargeRow } from '../stores/charge-rows';

export type { ChargeRow } from '../stores/charge-rows';

export interface CustomerView {
  id: string;
  name: string;
  document: string;
}

export interface ChargeListItem {
  id: string;
  txid: string | null;
  qrCode: string | null;
  amount: number;
  description: string;
  status: Charge['status'];
  expiresIn: number;
  paidAt: string | null;
  createdAt: string;
  customer: CustomerView | null;
}

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
export function replayView(row: ChargeRow) {
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
