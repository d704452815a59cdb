/** The charge as the API shows it (docs/architecture.md "Charges: how they work"): one mapping, used by create, replay, list and get. */
import type { z } from 'zod';
import type { chargeListItem, chargeReplayView, customerView } from '../contracts/charges';
import type { Knex } from 'knex';
import type { Charge } from '../models/charge';

/** The views are typed from the response contracts, so what the API sends is what the document says. */
export type CustomerView = z.infer<typeof customerView>;
export type ChargeListItem = z.infer<typeof chargeListItem>;
export type ChargeReplayView = z.infer<typeof chargeReplayView>;

/** The columns the views read, as plain rows (no model hydration on the hot reads). */
export type ChargeRow = Pick<
  Charge,
  'id' | 'txid' | 'qrCode' | 'amount' | 'description' | 'status' | 'expiresIn' | 'paidAt' | 'createdAt' | 'customerId'
> & { customerName?: string | null; customerDocument?: string | null };

/**
 * `select` list of a ChargeRow straight from SQL, already in the views' property names: the list,
 * get and replay read plain rows instead of hydrating objection models
 * (docs/performance.md "Where a charge's time goes").
 */
export const CHARGE_ROW_COLUMNS = [
  'charges.id',
  'charges.txid',
  'charges.qr_code as qrCode',
  'charges.amount',
  'charges.description',
  'charges.status',
  'charges.expires_in as expiresIn',
  'charges.paid_at as paidAt',
  'charges.created_at as createdAt',
  'charges.customer_id as customerId',
  'customers.name as customerName',
  'customers.document as customerDocument',
] as const;

/** Charges joined to their customer, selecting CHARGE_ROW_COLUMNS. */
export const chargeRows = (db: Knex | Knex.Transaction): Knex.QueryBuilder =>
  db('charges')
    .select(...CHARGE_ROW_COLUMNS)
    .leftJoin('customers', 'customers.id', 'charges.customer_id');

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
