/** Every query on `operator_cases` (docs/operations.md "Operator cases"). */
import type { Db } from '../db/types';
import { newId } from '../lib/ids';
import type { OperatorCaseKind, OperatorCaseStatus } from '../contracts/statuses';
import { OperatorCase } from '../models/operator-case';
import { bindContext } from '../lib/bind-context';

export { OperatorCase };

export interface NewOperatorCase {
  /** Unique: a retried step opens nothing the second time. */
  reference: string;
  kind: OperatorCaseKind;
  merchantId: string | null;
  subjectType: string;
  subjectId: string;
  reason: string;
  details?: Record<string, unknown>;
}

export const operatorCasesStore = (db: Db) =>
  bindContext(db, { openOnce, find, findByReference, ofSubject, list, resolve });

/** Inserts the case unless its reference exists; the new row, or undefined when it existed. */
export async function openOnce(db: Db, c: NewOperatorCase): Promise<OperatorCase | undefined> {
  const rows = (await db('operator_cases')
    .insert({
      id: newId('case'),
      reference: c.reference,
      kind: c.kind,
      merchant_id: c.merchantId,
      subject_type: c.subjectType,
      subject_id: c.subjectId,
      reason: c.reason,
      details: JSON.stringify(c.details ?? {}),
    })
    .onConflict('reference')
    .ignore()
    .returning('id')) as Array<{ id: string }>;
  const id = rows[0]?.id;
  return id ? OperatorCase.query(db).findById(id) : undefined;
}

export async function find(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<OperatorCase | undefined> {
  const q = OperatorCase.query(db);
  if (opts.lock) q.forUpdate();
  return q.findById(id);
}

export async function findByReference(
  db: Db,
  reference: string,
  opts: { lock?: boolean } = {},
): Promise<OperatorCase | undefined> {
  const q = OperatorCase.query(db).findOne({ reference });
  if (opts.lock) q.forUpdate();
  return q;
}

/** Cases of one subject (an infraction, a withdrawal, a charge), newest first. */
export async function ofSubject(db: Db, subjectId: string): Promise<OperatorCase[]> {
  return OperatorCase.query(db)
    .where({ subject_id: subjectId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
}

/** A page of cases, oldest first, after the keyset `after` (created_at, id). */
export async function list(
  db: Db,
  q: {
    status?: OperatorCaseStatus;
    kind?: OperatorCaseKind;
    limit: number;
    after?: { createdAt: Date; id: string };
  },
): Promise<OperatorCase[]> {
  const query = OperatorCase.query(db)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(q.limit);
  if (q.status) query.where({ status: q.status });
  if (q.kind) query.where({ kind: q.kind });
  const after = q.after;
  if (after) query.whereRaw('(created_at, id) > (?, ?)', [after.createdAt, after.id]);
  return query;
}

/** OPEN → RESOLVED (guarded); false when it was not OPEN. */
export async function resolve(db: Db, id: string, r: { resolution: string; resolvedBy: string }): Promise<boolean> {
  const n = await db('operator_cases')
    .where({ id, status: 'OPEN' })
    .update({ status: 'RESOLVED', resolution: r.resolution, resolved_by: r.resolvedBy, resolved_at: db.fn.now() });
  return n > 0;
}
