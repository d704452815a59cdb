import type { WithdrawalStatus } from '../contracts/statuses';
import { BaseModel } from './base';

export class Withdrawal extends BaseModel {
  static override tableName = 'withdrawals';

  id!: string;
  merchantId!: string;
  amount!: number;
  description!: string | null;
  pixKeyType!: 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'CHAVE_ALEATORIA';
  pixKey!: string;
  status!: WithdrawalStatus;
  batchId!: string | null;
  transferId!: string | null;
  idempotencyKey!: string | null;
  failureReason!: string | null;
  completedAt!: Date | null;
  failedAt!: Date | null;
  refundedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}
