import { BaseModel } from './base';
import type { RefundKind, RefundStatus } from '../contracts/statuses';

export class ChargeRefund extends BaseModel {
  static override tableName = 'charge_refunds';

  id!: string;
  chargeId!: string;
  merchantId!: string;
  amount!: number;
  reason!: string | null;
  kind!: RefundKind;
  status!: RefundStatus;
  rtrId!: string | null;
  e2eId!: string | null;
  failureReason!: string | null;
  createdAt!: Date;
  confirmedAt!: Date | null;
}
