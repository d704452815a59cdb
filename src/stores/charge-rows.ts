/**
 * The SELECT that builds a charge row for the API (create, replay, list, get), used by the charges
 * store; src/services/charges/views.ts maps these rows to what the API shows.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/types';
import type { Charge } from '../models/charge';

/** The columns the views read, as plain rows (no model hydration on the hot reads). */
export type ChargeRow = Pick<
  Charge,
  | 'id'
  | 'type'
  | 'txid'
  | 'qrCode'
  | 'amount'
  | 'description'
  | 'status'
  | 'expiresIn'
  | 'paidAt'
  | 'createdAt'
  | 'customerId'
> & { customerName?: string | null; customerDocument?: string | null };

/**
 * `select` list of a ChargeRow straight from SQL, already in the views' property names: the list,
 * get and replay read plain rows instead of hydrating objection models
 * (docs/performance.md "Where a charge's time goes").
 */
export const CHARGE_ROW_COLUMNS = [
  'charges.id',
  'charges.type',
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
export const chargeRows = (db: Db): Knex.QueryBuilder =>
  db('charges')
    .select(...CHARGE_ROW_COLUMNS)
    .leftJoin('customers', 'customers.id', 'charges.customer_id');
