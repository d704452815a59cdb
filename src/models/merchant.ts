import type { KycStatus, MerchantStatus } from '../contracts/statuses';
import { BaseModel } from './base';

export class Merchant extends BaseModel {
  static override tableName = 'merchants';

  id!: string;
  name!: string;
  document!: string;
  email!: string;
  status!: MerchantStatus;
  kycStatus!: KycStatus;
  /** Null until the operator configures the acquirer receiving account. */
  acquirerAccountId!: string | null;
  feeBps!: number;
  feeFixed!: number;
  settlementDelaySeconds!: number;
  createdAt!: Date;
  updatedAt!: Date;
}
