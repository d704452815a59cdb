import type { InfractionStatus } from '../contracts/statuses';
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
  status!: InfractionStatus;
  blockedAmount!: number;
  refundedAt!: Date | null;
  /** The devolução (charge_refunds id) that returns the blocked funds once accepted. */
  refundId!: string | null;
  refundAmount!: number | null;
  /** The furthest status the acquirer has announced. */
  acquirerStatus!: InfractionStatus;
  closedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}
