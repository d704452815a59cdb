import { BaseModel } from './base';

import type { CallbackStatus } from '../contracts/statuses';

export type { CallbackStatus };

export class AcquirerCallback extends BaseModel {
  static override tableName = 'acquirer_callbacks';
  static override get jsonAttributes(): string[] {
    return ['payload'];
  }
  id!: string;
  kind!: string;
  externalId!: string;
  payload!: unknown;
  status!: CallbackStatus;
  attempts!: number;
  lastError!: string | null;
  nextAttemptAt!: Date;
  resolution!: string | null;
  appliedAt!: Date | null;
  parkedAt!: Date | null;
  receivedAt!: Date;
  updatedAt!: Date;
  /** W3C traceparent of the request that brought it (docs/operations.md "Tracing"); null when untraced. */
  traceparent!: string | null;
  /** Kept by the callback route after its signature was verified: evidence of what the acquirer said. */
  signed!: boolean;
}
