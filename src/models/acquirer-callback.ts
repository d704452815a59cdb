import { BaseModel } from './base';

export class AcquirerCallback extends BaseModel {
  static override tableName = 'acquirer_callbacks';
  static override get jsonAttributes(): string[] {
    return ['payload'];
  }
  id!: string;
  kind!: string;
  externalId!: string;
  payload!: unknown;
  receivedAt!: Date;
}
