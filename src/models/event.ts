import { BaseModel } from './base';

export class Event extends BaseModel {
  static override tableName = 'events';
  static override get jsonAttributes(): string[] {
    return ['data'];
  }
  id!: string;
  merchantId!: string;
  type!: string;
  data!: Record<string, unknown>;
  /** Idempotency reference, e.g. `charge.paid:ch_x`: an event is recorded once. */
  reference!: string;
  createdAt!: Date;
}
