import type { UserStatus } from '../contracts/statuses';
import { BaseModel } from './base';
import type { Role } from '../contracts/statuses';

export class User extends BaseModel {
  static override tableName = 'users';

  id!: string;
  email!: string;
  passwordHash!: string;
  role!: Role;
  merchantId!: string | null;
  status!: UserStatus;
  /** Copied into each JWT as `ver`; bumping it revokes every JWT issued before. */
  tokenVersion!: number;
  createdAt!: Date;
  updatedAt!: Date;
}
