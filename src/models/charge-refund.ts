import { BaseModel } from './base';

export class ChargeRefund extends BaseModel {
  static override tableName = 'charge_refunds';

  id!: string;
  chargeId!: string;
  merchantId!: string;
  amount!: number;
  reason!: string | null;
  /** MERCHANT: asked by the merchant; UNPAYABLE_PAYMENT: a payment the charge could not take;
   *  INFRACTION: returned to the payer under a MED infraction. */
  kind!: 'MERCHANT' | 'UNPAYABLE_PAYMENT' | 'INFRACTION';
  status!: 'REQUESTED' | 'CONFIRMED' | 'FAILED';
  rtrId!: string | null;
  e2eId!: string | null;
  failureReason!: string | null;
  createdAt!: Date;
  confirmedAt!: Date | null;
}
