import type { OperatorCaseKind, OperatorCaseStatus } from '../contracts/statuses';
import { BaseModel } from './base';

export class OperatorCase extends BaseModel {
  static override tableName = 'operator_cases';
  static override get jsonAttributes(): string[] {
    return ['details'];
  }
  id!: string;
  reference!: string;
  kind!: OperatorCaseKind;
  status!: OperatorCaseStatus;
  merchantId!: string | null;
  subjectType!: string;
  subjectId!: string;
  reason!: string;
  details!: Record<string, unknown>;
  resolution!: string | null;
  resolvedBy!: string | null;
  createdAt!: Date;
  resolvedAt!: Date | null;
}
