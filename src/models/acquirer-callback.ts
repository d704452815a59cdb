import { BaseModel } from './base';

export type CallbackStatus = 'RECEIVED' | 'APPLIED' | 'PARKED';

export class AcquirerCallback extends BaseModel {
  static override tableName = 'acquirer_callbacks';
  static override get jsonAttributes(): string[] {
    return ['payload'];
  }
  id!: string;
  kind!: string;
  externalId!: string;
  payload!: unknown;
  status!: CallbackStatus;
  attempts!: number;
  lastError!: string | null;
  nextAttemptAt!: Date;
  resolution!: string | null;
  appliedAt!: Date | null;
  parkedAt!: Date | null;
  receivedAt!: Date;
  updatedAt!: Date;
}
