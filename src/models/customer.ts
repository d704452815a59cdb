import { BaseModel } from './base';

export class Customer extends BaseModel {
  static override tableName = 'customers';

  id!: string;
  merchantId!: string;
  name!: string;
  email!: string;
  phone!: string;
  document!: string;
  createdAt!: Date;
  updatedAt!: Date;
}
