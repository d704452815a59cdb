import { BaseModel } from './base';

export class Notification extends BaseModel {
  static override tableName = 'notifications';
  static override get jsonAttributes(): string[] {
    return ['data'];
  }
  id!: string;
  merchantId!: string;
  kind!: string;
  title!: string;
  body!: string;
  data!: Record<string, unknown> | null;
  reference!: string | null;
  readAt!: Date | null;
  createdAt!: Date;
}
