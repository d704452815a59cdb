import { BaseModel } from './base';

export class LedgerTransaction extends BaseModel {
  static override tableName = 'ledger_transactions';
  static override get jsonAttributes(): string[] {
    return ['metadata'];
  }
  id!: string;
  /** Idempotency reference: one transaction per reference, ever. */
  reference!: string;
  kind!: string;
  merchantId!: string;
  description!: string | null;
  metadata!: Record<string, unknown> | null;
  createdAt!: Date;
}
