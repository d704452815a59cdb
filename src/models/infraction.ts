import { BaseModel } from './base';

export class Infraction extends BaseModel {
  static override tableName = 'infractions';

  id!: string;
  merchantId!: string;
  chargeId!: string | null;
  acquirerInfractionId!: string;
  e2eId!: string | null;
  amount!: number;
  reason!: string | null;
  status!: 'OPEN' | 'ACCEPTED' | 'REJECTED' | 'REFUNDED';
  blockedAmount!: number;
  refundedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}
