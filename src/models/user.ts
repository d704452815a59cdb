import { BaseModel } from './base';

export class User extends BaseModel {
  static override tableName = 'users';

  id!: string;
  email!: string;
  passwordHash!: string;
  role!: 'USER' | 'ADMIN';
  merchantId!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}
