import { BaseModel } from './base';

export class WebhookDelivery extends BaseModel {
  static override tableName = 'webhook_deliveries';

  id!: string;
  eventId!: string;
  webhookId!: string;
  merchantId!: string;
  status!: 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'CANCELED';
  attempts!: number;
  lastStatusCode!: number | null;
  createdAt!: Date;
  updatedAt!: Date;
}
