/**
 * The operator audit log: one row per operator action, from the admin API or the ops CLI, written
 * in the same transaction as the action so an action and its trace commit (or roll back) together.
 */
import type { z } from 'zod';
import type { auditLogEntry } from '../../contracts/admin';
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import { auditLogStore } from '../../stores/audit-log';
import { assertPageWithinDepth } from '../../contracts/validation';

/** Who acted: an ADMIN user (API) or the ops CLI (no user; email "cli"). */
export interface Actor {
  userId: string | null;
  email: string;
}

export const CLI_ACTOR: Actor = { userId: null, email: 'cli' };

export interface AuditEntry {
  action: string;
  targetType: string;
  targetId: string;
  /** What changed. Never put secrets here (passwords, key values): the log is read by humans. */
  details?: Record<string, unknown>;
}

export async function recordAudit(trx: Db, actor: Actor, entry: AuditEntry): Promise<void> {
  // Tokens carry only the user id; the e-mail is resolved here so the log reads without joins.
  const store = auditLogStore(trx);
  let email = actor.email;
  if (!email && actor.userId) email = (await store.actorEmail(actor.userId)) ?? '';
  await store.insert({
    actorUserId: actor.userId,
    actorEmail: email,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    details: entry.details ?? {},
  });
}

export type AuditLogView = z.infer<typeof auditLogEntry>;

export async function listAudit(
  knex: Knex,
  opts: { page: number; limit: number; targetType?: string; targetId?: string },
): Promise<{ total: number; entries: AuditLogView[] }> {
  // Every operator action so far targets a merchant, hence the default target type.
  const { total, rows } = await auditLogStore(knex).page({
    limit: opts.limit,
    offset: (opts.page - 1) * opts.limit,
    target: opts.targetId ? { type: opts.targetType ?? 'merchant', id: opts.targetId } : undefined,
  });
  assertPageWithinDepth(opts.page, opts.limit, total);
  return {
    total,
    entries: rows.map((r) => ({
      id: r.id,
      actorUserId: r.actorUserId ?? null,
      actorEmail: r.actorEmail,
      action: r.action,
      targetType: r.targetType,
      targetId: r.targetId,
      details: r.details,
      createdAt: new Date(r.createdAt).toISOString(),
    })),
  };
}

/** The audit log as the admin routes read it. */
export function createAuditLogService(deps: { knex: Knex }) {
  return {
    list: (opts: { page: number; limit: number; targetType?: string; targetId?: string }) => listAudit(deps.knex, opts),
  };
}

export type AuditLogService = ReturnType<typeof createAuditLogService>;
