import { BaseModel } from './base';

export class WebhookDeliveryLog extends BaseModel {
  static override tableName = 'webhook_delivery_logs';

  id!: string;
  deliveryId!: string;
  webhookId!: string;
  merchantId!: string;
  event!: string;
  url!: string;
  payload!: string;
  statusCode!: number | null;
  response!: string | null;
  attempt!: number;
  success!: boolean;
  error!: string | null;
  durationMs!: number | null;
  createdAt!: Date;
}
