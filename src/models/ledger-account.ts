import { BaseModel } from './base';

/** Merchant-facing kinds first; then the platform-side counterparts kept per merchant. */
export type LedgerAccountKind =
  'available' | 'pending' | 'blocked' | 'in_transit' | 'fee_revenue' | 'acquirer' | 'adjustments';

export class LedgerAccount extends BaseModel {
  static override tableName = 'ledger_accounts';

  id!: string;
  merchantId!: string;
  kind!: LedgerAccountKind;
  balance!: number;
  /** Running sum of the account's postings, kept by the database; equals `balance` at every commit. */
  posted!: number;
  updatedAt!: Date;
}
