/**
 * Every query on `acquirer_callbacks`, the inbox of signed acquirer callbacks: kept once per
 * (kind, external id), leased while handed on, then APPLIED or PARKED. `db` is the knex instance
 * or the caller's transaction.
 */
import type { Db } from '../db/types';
import { newId } from '../lib/ids';
import { AcquirerCallback } from '../models/acquirer-callback';
import { bindContext } from '../lib/bind-context';

export { AcquirerCallback };

/** Until when a callback being handed on is left alone by the reconciler: a minute from now. */
const LEASE_END = `now() + interval '1 minute'`;

/** A callback's row as it is first kept (RECEIVED, due now unless the caller leases it). */
const newRow = (kind: string, externalId: string, payload: unknown, traceparent: string | undefined) => ({
  id: newId('acb'),
  kind,
  external_id: externalId,
  payload: JSON.stringify(payload),
  traceparent: traceparent ?? null,
  // Only the route keeps callbacks, after verifying their signature.
  signed: true,
});

export const callbackInboxStore = (db: Db) =>
  bindContext(db, {
    keepLeased,
    keep,
    findSigned,
    park,
    markAppliedIfKept,
    upsertApplied,
    markApplied,
    setAttempts,
    retryLater,
    lease,
    claimDue,
    nudge,
    list,
    unpark,
    backlog,
    findMany,
  });

/**
 * Inserts the callback leased for its first hand-off (due again in a minute, as `lease` sets),
 * in one statement; undefined when (kind, externalId) was kept already.
 */
export async function keepLeased(
  db: Db,
  kind: string,
  externalId: string,
  payload: unknown,
  traceparent?: string,
): Promise<AcquirerCallback | undefined> {
  const [row] = (await db('acquirer_callbacks')
    .insert({ ...newRow(kind, externalId, payload, traceparent), next_attempt_at: db.raw(LEASE_END) })
    .onConflict(['kind', 'external_id'])
    .ignore()
    .returning('*')) as Array<Record<string, unknown>>;
  return row ? AcquirerCallback.fromDatabaseJson(row) : undefined;
}

/** Inserts the callback unless (kind, externalId) is kept already; returns the kept row. */
export async function keep(
  db: Db,
  kind: string,
  externalId: string,
  payload: unknown,
  traceparent?: string,
): Promise<AcquirerCallback> {
  // A row the service wrote itself first (an outcome learnt by asking, a payment parked) takes
  // the signed body now, so it becomes evidence; a signed row is never rewritten.
  await db('acquirer_callbacks')
    .insert(newRow(kind, externalId, payload, traceparent))
    .onConflict(['kind', 'external_id'])
    .merge({ signed: true, payload: db.raw('excluded.payload') })
    .where('acquirer_callbacks.signed', false);
  return (await AcquirerCallback.query(db).findOne({ kind, external_id: externalId })) as AcquirerCallback;
}

/** The row the acquirer signed for (kind, externalId), if one was kept. */
export async function findSigned(db: Db, kind: string, externalId: string): Promise<AcquirerCallback | undefined> {
  return AcquirerCallback.query(db).findOne({ kind, external_id: externalId, signed: true });
}

/** Parks it (kept first if it was not) unless it is APPLIED or PARKED already; the parked row or undefined. */
export async function park(
  db: Db,
  kind: string,
  externalId: string,
  payload: unknown,
  reason: string,
): Promise<{ id: string; attempts: number } | undefined> {
  await db('acquirer_callbacks')
    .insert({ id: newId('acb'), kind, external_id: externalId, payload: JSON.stringify(payload) })
    .onConflict(['kind', 'external_id'])
    .ignore();
  const parked = (await db('acquirer_callbacks')
    .where({ kind, external_id: externalId })
    .whereNot('status', 'PARKED')
    .whereNot('status', 'APPLIED')
    .update({ status: 'PARKED', parked_at: db.fn.now(), last_error: reason, updated_at: db.fn.now() })
    .returning(['id', 'attempts'])) as Array<{ id: string; attempts: number }>;
  return parked[0];
}

/** APPLIED by (kind, externalId) if it was kept and is not APPLIED yet (nothing is created). */
export async function markAppliedIfKept(db: Db, kind: string, externalId: string, resolution: string): Promise<void> {
  await db('acquirer_callbacks')
    .where({ kind, external_id: externalId })
    .whereNot('status', 'APPLIED')
    .update({ status: 'APPLIED', resolution, applied_at: db.fn.now(), updated_at: db.fn.now() });
}

/** APPLIED by (kind, externalId), created so if it was never kept (an outcome learnt by asking). */
export async function upsertApplied(
  db: Db,
  kind: string,
  externalId: string,
  payload: unknown,
  resolution: string,
): Promise<void> {
  await db('acquirer_callbacks')
    .insert({
      id: newId('acb'),
      kind,
      external_id: externalId,
      payload: JSON.stringify(payload),
      status: 'APPLIED',
      resolution,
      applied_at: db.fn.now(),
    })
    .onConflict(['kind', 'external_id'])
    .merge({ status: 'APPLIED', resolution, applied_at: db.fn.now(), last_error: null, updated_at: db.fn.now() });
}

export async function markApplied(db: Db, id: string, resolution: string): Promise<void> {
  await db('acquirer_callbacks')
    .where({ id, status: 'RECEIVED' })
    .update({ status: 'APPLIED', resolution, applied_at: db.fn.now(), last_error: null, updated_at: db.fn.now() });
}

export async function setAttempts(db: Db, id: string, attempts: number): Promise<void> {
  await db('acquirer_callbacks').where({ id, status: 'RECEIVED' }).update({ attempts });
}

/** Another try later: due again after `delayMs`. */
export async function retryLater(
  db: Db,
  id: string,
  attempts: number,
  lastError: string | null,
  delayMs: number,
): Promise<void> {
  await db('acquirer_callbacks')
    .where({ id, status: 'RECEIVED' })
    .update({
      attempts,
      last_error: lastError,
      next_attempt_at: db.raw(`now() + make_interval(secs => ?)`, [delayMs / 1000]),
      updated_at: db.fn.now(),
    });
}

/** A one-minute lease on a due RECEIVED callback; false when someone holds it (or it is not due). */
export async function lease(db: Db, id: string): Promise<boolean> {
  const leased = await db('acquirer_callbacks')
    .where({ id, status: 'RECEIVED' })
    .where('next_attempt_at', '<=', db.fn.now())
    .update({ next_attempt_at: db.raw(LEASE_END) });
  return leased > 0;
}

/**
 * Claims up to `limit` due RECEIVED callbacks of these kinds with SKIP LOCKED and a one-minute
 * lease (inside a transaction), oldest first.
 */
export async function claimDue(db: Db, kinds: string[], limit: number): Promise<AcquirerCallback[]> {
  const ids = (await db('acquirer_callbacks')
    .where({ status: 'RECEIVED' })
    .whereIn('kind', kinds)
    .where('next_attempt_at', '<=', db.fn.now())
    .orderBy('next_attempt_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .pluck('id')) as string[];
  if (ids.length === 0) return [];
  await db('acquirer_callbacks')
    .whereIn('id', ids)
    .update({ next_attempt_at: db.raw(`now() + interval '1 minute'`) });
  return AcquirerCallback.query(db).whereIn('id', ids).orderBy('received_at');
}

/** Due now. */
export async function nudge(db: Db, kind: string, externalId: string): Promise<void> {
  await db('acquirer_callbacks')
    .where({ kind, external_id: externalId, status: 'RECEIVED' })
    .update({ next_attempt_at: db.fn.now(), updated_at: db.fn.now() });
}

/** Newest first. */
export async function list(db: Db, q: { status?: string; kind?: string; limit: number }): Promise<AcquirerCallback[]> {
  return AcquirerCallback.query(db)
    .modify((b) => {
      if (q.status) b.where({ status: q.status });
      if (q.kind) b.where({ kind: q.kind });
    })
    .orderBy([
      { column: 'received_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(q.limit);
}

/** Parked callbacks (these ids, or all) back to RECEIVED, due now, attempts reset; their ids. */
export async function unpark(db: Db, ids: string[] | 'all-parked'): Promise<string[]> {
  const q = db('acquirer_callbacks').where({ status: 'PARKED' });
  if (ids !== 'all-parked') q.whereIn('id', ids);
  const rows = (await q
    .update({
      status: 'RECEIVED',
      attempts: 0,
      next_attempt_at: db.fn.now(),
      parked_at: null,
      updated_at: db.fn.now(),
    })
    .returning('id')) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}

/** What /metrics shows of the inbox (each query on its partial index): the backlog, its age, the parked. */
export async function backlog(
  db: Db,
): Promise<{ received: number; oldestAgeSeconds: number; parkedByKind: Record<string, number> }> {
  const [waiting] = (await db('acquirer_callbacks')
    .where('status', 'RECEIVED')
    .select(
      db.raw('count(*)::int as received'),
      db.raw('coalesce(extract(epoch from now() - min(received_at)), 0)::float8 as age'),
    )) as Array<{ received: number; age: number }>;
  const parked = (await db('acquirer_callbacks')
    .where('status', 'PARKED')
    .groupBy('kind')
    .select('kind', db.raw('count(*)::int as n'))) as Array<{ kind: string; n: number }>;
  return {
    received: waiting?.received ?? 0,
    oldestAgeSeconds: Math.max(0, waiting?.age ?? 0),
    parkedByKind: Object.fromEntries(parked.map((p) => [p.kind, p.n])),
  };
}

export async function findMany(db: Db, ids: string[]): Promise<AcquirerCallback[]> {
  return AcquirerCallback.query(db).whereIn('id', ids);
}
