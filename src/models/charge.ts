import type { ChargeStatus, ChargeType } from '../contracts/statuses';
import type { DueAmount, DueDateRules } from '../domain/due-date-amount';
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
    return ['tracking', 'dueRules', 'paymentBreakdown'];
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
  /** A DUE_DATE charge's rules (null otherwise); its due date and validity are also columns. */
  dueRules!: DueDateRules | null;
  /** What the payer paid (a due-date charge's amount due that day), beside the nominal `amount`. */
  amountPaid!: number | null;
  paymentBreakdown!: Omit<DueAmount, 'total'> | null;
  createdAt!: Date;
  updatedAt!: Date;
}
