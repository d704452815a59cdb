import { BaseModel } from './base';

export class PixKey extends BaseModel {
  static override tableName = 'pix_keys';

  id!: string;
  merchantId!: string;
  type!: 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'CHAVE_ALEATORIA';
  key!: string;
  status!: 'PENDING' | 'ACTIVE' | 'INACTIVE';
  acquirerKeyId!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}
