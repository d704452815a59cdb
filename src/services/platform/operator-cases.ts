/**
 * Operator cases (docs/operations.md "Operator cases"): every situation a workflow must not decide alone is
 * opened here — never only a log line. Opening is idempotent on a reference (activities retry), and
 * the first opening writes an audit entry (`case.opened`, actor `system`), an error log and the
 * `pixflow_operator_cases_opened_total` metric, in the caller's transaction where it has one.
 *
 * Resolving is the operator's: `npm run ops -- cases resolve <id> --action …`. Which actions a kind
 * accepts, and what an action does to the subject (e.g. an infraction's devolução retried or its
 * money released), belongs to the domain that opened the case: it registers a `CaseResolver` for
 * the kind in the composition root, so this module knows no domain.
 */
import type { Knex } from 'knex';
import { bindContext } from '../../lib/bind-context';
import type { Db } from '../../db/types';
import type { Logger } from '../../lib/logger';
import { invalid, notFound } from '../../lib/errors';
import type { OperatorCaseAction, OperatorCaseKind, OperatorCaseStatus } from '../../contracts/statuses';
import { operatorCasesStore, type NewOperatorCase, type OperatorCase } from '../../stores/operator-cases';
import { recordOperatorCaseOpened } from '../../observability/metrics';
import { recordAudit, type Actor } from './audit';
import { errorMessage } from '../../lib/error-message';

const SYSTEM: Actor = { userId: null, email: 'system' };

/** Opens the case once; true when this call opened it (then it was audited, logged and counted). */
export async function openOperatorCase(db: Db, logger: Logger, c: NewOperatorCase): Promise<boolean> {
  const row = await operatorCasesStore(db).openOnce(c);
  if (!row) return false;
  logger.error(
    { caseId: row.id, kind: c.kind, subjectId: c.subjectId, reason: c.reason },
    'operator case opened: needs an operator',
  );
  await recordAudit(db, SYSTEM, {
    action: 'case.opened',
    targetType: c.subjectType,
    targetId: c.subjectId,
    details: { caseId: row.id, kind: c.kind, reason: c.reason, merchantId: c.merchantId, ...c.details },
  });
  // Counted when the row is written: a transaction that then rolls back may count a case that is
  // not there, never the reverse — the table is the truth, the metric the alarm.
  recordOperatorCaseOpened(c.kind);
  return true;
}

/**
 * Resolves the OPEN case of `reference` as the system (actor `system`, audit `case.resolved`): the
 * situation ended without an operator (e.g. the acquirer answered again). A case already resolved,
 * or never opened, is left alone; true when this call resolved it.
 */
export async function closeOperatorCase(
  db: Db,
  logger: Logger,
  reference: string,
  resolution: string,
): Promise<boolean> {
  const store = operatorCasesStore(db);
  const c = await store.findByReference(reference, { lock: true });
  if (!c || c.status !== 'OPEN') return false;
  if (!(await store.resolve(c.id, { resolution, resolvedBy: SYSTEM.email }))) return false;
  await recordAudit(db, SYSTEM, {
    action: 'case.resolved',
    targetType: c.subjectType,
    targetId: c.subjectId,
    details: { caseId: c.id, kind: c.kind, action: 'closed', note: resolution },
  });
  logger.info(
    { caseId: c.id, kind: c.kind, subjectId: c.subjectId, resolution },
    'operator case closed: resolved without an operator',
  );
  return true;
}

/** What a domain does when an operator resolves one of its cases, inside the resolving transaction. */
export interface CaseResolver {
  actions: readonly OperatorCaseAction[];
  /** Applies the action to the case's subject; may return work to do once the transaction commits. */
  apply(trx: Knex.Transaction, c: OperatorCase, action: OperatorCaseAction): Promise<(() => Promise<void>) | void>;
}

export type CaseResolvers = Partial<Record<OperatorCaseKind, CaseResolver>>;

export interface OperatorCaseView {
  id: string;
  kind: OperatorCaseKind;
  status: OperatorCaseStatus;
  merchantId: string | null;
  subjectType: string;
  subjectId: string;
  reason: string;
  details: Record<string, unknown>;
  /** The actions `cases resolve` accepts for this kind. */
  actions: readonly OperatorCaseAction[];
  resolution: string | null;
  resolvedBy: string | null;
  createdAt: string;
  resolvedAt: string | null;
}

/** Cases without a registered resolver can only be acknowledged. */
const ACKNOWLEDGE_ONLY: CaseResolver = { actions: ['acknowledge'], apply: async () => undefined };

type OperatorCasesCtx = { knex: Knex; logger: Logger; resolvers: CaseResolvers };

export function createOperatorCases(deps: { knex: Knex; logger: Logger; resolvers: CaseResolvers }) {
  return bindContext(deps, { list, get, resolve });
}

const resolverOf = (ctx: OperatorCasesCtx, kind: OperatorCaseKind): CaseResolver =>
  ctx.resolvers[kind] ?? ACKNOWLEDGE_ONLY;

const view = (ctx: OperatorCasesCtx, c: OperatorCase): OperatorCaseView => ({
  id: c.id,
  kind: c.kind,
  status: c.status,
  merchantId: c.merchantId,
  subjectType: c.subjectType,
  subjectId: c.subjectId,
  reason: c.reason,
  details: c.details,
  actions: resolverOf(ctx, c.kind).actions,
  resolution: c.resolution,
  resolvedBy: c.resolvedBy,
  createdAt: new Date(c.createdAt).toISOString(),
  resolvedAt: c.resolvedAt ? new Date(c.resolvedAt).toISOString() : null,
});

/** Every case matching the filter, oldest first, walked in keyset pages of `limit`. */
export async function list(
  ctx: OperatorCasesCtx,
  q: {
    status?: OperatorCaseStatus;
    kind?: OperatorCaseKind;
    subjectId?: string;
    limit?: number;
  },
): Promise<OperatorCaseView[]> {
  const { knex } = ctx;
  const store = operatorCasesStore(knex);
  if (q.subjectId) return (await store.ofSubject(q.subjectId)).map((c) => view(ctx, c));
  return (await store.list({ status: q.status, kind: q.kind, limit: q.limit ?? 100 })).map((c) => view(ctx, c));
}

export async function get(ctx: OperatorCasesCtx, id: string): Promise<OperatorCaseView> {
  const { knex } = ctx;
  const c = await operatorCasesStore(knex).find(id);
  if (!c) throw notFound('Case not found');
  return view(ctx, c);
}

/**
 * Resolves an OPEN case with one of its kind's actions: the domain's effect, the case RESOLVED and
 * an audit entry `case.resolved` commit together; the domain's follow-up (waking a workflow) runs
 * after the commit. A case already resolved is refused, so an action never runs twice.
 */
export async function resolve(
  ctx: OperatorCasesCtx,
  actor: Actor,
  id: string,
  action: OperatorCaseAction,
  note?: string,
): Promise<OperatorCaseView> {
  const { knex, logger } = ctx;
  let after: (() => Promise<void>) | undefined;
  await knex.transaction(async (trx) => {
    const store = operatorCasesStore(trx);
    const c = await store.find(id, { lock: true });
    if (!c) throw notFound('Case not found');
    if (c.status !== 'OPEN') throw invalid(`Case ${id} is already ${c.status}`);
    const resolver = resolverOf(ctx, c.kind);
    if (!resolver.actions.includes(action)) {
      throw invalid(`A ${c.kind} case accepts ${resolver.actions.join(', ')}, not ${action}`);
    }
    after = (await resolver.apply(trx, c, action)) ?? undefined;
    const resolution = note ? `${action}: ${note}` : action;
    await store.resolve(id, { resolution, resolvedBy: actor.email });
    await recordAudit(trx, actor, {
      action: 'case.resolved',
      targetType: c.subjectType,
      targetId: c.subjectId,
      details: { caseId: c.id, kind: c.kind, action, note: note ?? null },
    });
  });
  const followUp = after as (() => Promise<void>) | undefined;
  if (followUp) {
    try {
      await followUp();
    } catch (err) {
      // The decision is committed; the workflow reads it from the database on its next check.
      logger.warn(
        { caseId: id, err: errorMessage(err) },
        'case resolved; its workflow will pick the decision up on its next check',
      );
    }
  }
  return get(ctx, id);
}

export type OperatorCases = ReturnType<typeof createOperatorCases>;
