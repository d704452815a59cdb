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
  /** The envelope's exact bytes, serialised once when the event was recorded. */
  payload!: string | null;
  /** Last attempt number of the current series; null: the first series, sized by configuration. */
  attemptLimit!: number | null;
  /** Set once the dispatcher has started the delivery's workflow (outbox marker). */
  workflowStartedAt!: Date | null;
  completedAt!: Date | null;
  lastError!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}
