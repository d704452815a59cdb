import { BaseModel } from './base';

export class ApiKey extends BaseModel {
  static override tableName = 'api_keys';

  id!: string;
  merchantId!: string;
  createdByUserId!: string | null;
  name!: string;
  description!: string | null;
  /** HMAC-SHA256 of the key value keyed with API_KEY_PEPPER; the value itself is never stored. */
  keyHash!: string;
  keyLast4!: string;
  status!: 'ACTIVE';
  lastUsedAt!: Date | null;
  createdAt!: Date;
}
