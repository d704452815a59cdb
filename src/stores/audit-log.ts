/** Every query on `audit_log`: written in the caller's transaction, read by the operator list. */
import type { Db } from '../db/types';
import { newId } from '../lib/ids';
import { AuditLog } from '../models/audit-log';
import { User } from '../models/user';
import { pageIsRead } from '../contracts/validation';

export interface AuditRowInput {
  actorUserId: string | null;
  actorEmail: string;
  action: string;
  targetType: string;
  targetId: string;
  details: Record<string, unknown>;
}

export function auditLogStore(db: Db) {
  return {
    async insert(e: AuditRowInput): Promise<void> {
      await AuditLog.query(db).insert({ id: newId('aud'), ...e });
    },

    /** The e-mail of the acting user (tokens carry only the id). */
    async actorEmail(userId: string): Promise<string | undefined> {
      return (await User.query(db).findById(userId))?.email;
    },

    async exists(q: { action: string; targetType: string; targetId: string }): Promise<boolean> {
      return (
        (await db('audit_log')
          .where({ action: q.action, target_type: q.targetType, target_id: q.targetId })
          .first('id')) !== undefined
      );
    },

    /** A page, newest first, optionally of one target; (target_type, target_id) is audit_log_target_idx. */
    async page(opts: {
      limit: number;
      offset: number;
      target?: { type: string; id: string };
    }): Promise<{ total: number; rows: AuditLog[] }> {
      const base = AuditLog.query(db).modify((q) => {
        if (opts.target) q.where({ target_type: opts.target.type, target_id: opts.target.id });
      });
      const total = await base.clone().resultSize();
      // No rows are read for a page past the end or too deep (`pageIsRead`).
      if (!pageIsRead(opts.offset, opts.limit, total)) return { total, rows: [] };
      const rows = await base
        .clone()
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(opts.limit)
        .offset(opts.offset);
      return { total, rows };
    },
  };
}
