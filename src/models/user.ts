import type { UserStatus } from '../contracts/statuses';
import { BaseModel } from './base';

export class User extends BaseModel {
  static override tableName = 'users';

  id!: string;
  email!: string;
  passwordHash!: string;
  role!: 'USER' | 'ADMIN';
  merchantId!: string | null;
  status!: UserStatus;
  /** Copied into each JWT as `ver`; bumping it revokes every JWT issued before. */
  tokenVersion!: number;
  createdAt!: Date;
  updatedAt!: Date;
}
