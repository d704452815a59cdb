import type { WebhookStatus } from '../contracts/statuses';
import { BaseModel } from './base';

export class Webhook extends BaseModel {
  static override tableName = 'webhooks';
  static override get jsonAttributes(): string[] {
    return ['events'];
  }
  id!: string;
  merchantId!: string;
  name!: string | null;
  url!: string;
  /** Empty = all events. */
  events!: string[];
  secret!: string;
  status!: WebhookStatus;
  createdAt!: Date;
  updatedAt!: Date;
}
