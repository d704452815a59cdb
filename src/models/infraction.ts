import type { InfractionOperatorAction, InfractionStatus } from '../contracts/statuses';
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
  /**
   * An operator's part (docs/operations.md "Operator cases"): `pending` while a case waits for a decision,
   * `retry` or `release` once decided, until the workflow has applied it; null otherwise.
   */
  operatorAction!: InfractionOperatorAction | null;
  /** The part of the devolução in transit paid from the platform's fee on the payment. */
  feeReturned!: number;
  /** The acquirer's free text on the report, when it sent one. */
  reportDetails!: string | null;
  /** Until when the merchant may defend the payment (docs/api.md "Infractions"). */
  defenseDeadline!: Date;
  createdAt!: Date;
  updatedAt!: Date;
}
