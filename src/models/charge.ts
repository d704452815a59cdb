import type { ChargeStatus, ChargeType } from '../contracts/statuses';
import { BaseModel } from './base';

export type { ChargeStatus, ChargeType };

export interface ChargeTracking {
  utmSource?: string;
  utmMedium?: string;
  utmCampaign?: string;
  utmContent?: string;
  utmTerm?: string;
  fbclid?: string;
  fbc?: string;
  fbp?: string;
  sourceUrl?: string;
  clientIp?: string;
  userAgent?: string;
}

export class Charge extends BaseModel {
  static override tableName = 'charges';
  static override get jsonAttributes(): string[] {
    return ['tracking'];
  }
  id!: string;
  merchantId!: string;
  customerId!: string | null;
  type!: ChargeType;
  amount!: number;
  description!: string;
  status!: ChargeStatus;
  expiresIn!: number;
  expiresAt!: Date;
  txid!: string | null;
  qrCode!: string | null;
  idempotencyKey!: string | null;
  tracking!: ChargeTracking | null;
  e2eId!: string | null;
  payerName!: string | null;
  payerDocument!: string | null;
  paidAt!: Date | null;
  feeAmount!: number | null;
  settleAt!: Date | null;
  settledAt!: Date | null;
  refundedAmount!: number;
  failureReason!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}
