import { BaseModel } from './base';

export class AuditLog extends BaseModel {
  static override tableName = 'audit_log';
  static override get jsonAttributes(): string[] {
    return ['details'];
  }
  id!: string;
  actorUserId!: string | null;
  actorEmail!: string;
  action!: string;
  targetType!: string;
  targetId!: string;
  details!: unknown;
  createdAt!: Date;
}
