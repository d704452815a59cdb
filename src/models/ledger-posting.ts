import { BaseModel } from './base';

export class LedgerPosting extends BaseModel {
  static override tableName = 'ledger_postings';

  id!: number;
  transactionId!: string;
  accountId!: string;
  /** Signed cents: + credit, − debit. */
  amount!: number;
  createdAt!: Date;
}
