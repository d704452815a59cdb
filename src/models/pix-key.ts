import type { PixKeyStatus } from '../contracts/statuses';
import { BaseModel } from './base';

export class PixKey extends BaseModel {
  static override tableName = 'pix_keys';

  id!: string;
  merchantId!: string;
  type!: 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'CHAVE_ALEATORIA';
  key!: string;
  status!: PixKeyStatus;
  acquirerKeyId!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}
