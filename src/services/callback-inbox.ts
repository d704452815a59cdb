/**
 * The acquirer callback inbox: the durable source of truth for acquirer events (README "The
 * callback inbox and reconciliation").
 *
 * A callback is kept first (unique per kind + the body's own id, so duplicates collapse), then
 * handed on by the handler registered for its kind. Its row says where it stands:
 *
 *   RECEIVED ──handler/workflow applied it──▶ APPLIED
 *      │  └─ not yet (Temporal down, no charge for the txid yet, handed to a workflow): try again
 *      │     at `next_attempt_at`, with backoff, counting `attempts`
 *      └─ cannot be applied (refused for good, or still not applied after `maxAttempts`) ──▶ PARKED
 *         + an operator alert (audit log, action `callback.parked`); `ops callbacks redrive` puts
 *         it back to RECEIVED once the cause is fixed.
 *
 * The route only needs `keep` to succeed to answer 2xx: from then on the reconciler (`redriveDue`,
 * run by the API at start and periodically, and by `ops callbacks reconcile`) owns the callback
 * until it is applied or parked. Handlers are a registry keyed by kind, so features plug in their
 * own (`pix` and `refund` are the charges'; `transfers`, `infractions`, `pix-keys` are kept and
 * left RECEIVED until a handler for them is registered).
 */
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import { newId } from '../lib/ids';
import { AcquirerCallback, type CallbackStatus } from '../models/acquirer-callback';
import { recordAudit, type Actor } from './audit';

export type CallbackKind = 'pix' | 'refund' | 'transfers' | 'infractions' | 'pix-keys';

export type HandlerOutcome =
  /** The callback's effect is complete. */
  | { kind: 'applied'; resolution: string }
  /**
   * Handed to a workflow, whose activity marks the row APPLIED in the transaction that applies it
   * (`markCallbackApplied`). Until then the reconciler hands it on again now and then.
   */
  | { kind: 'handed' }
  /** Not possible yet (e.g. no charge with this txid yet): try again later. */
  | { kind: 'wait'; reason: string }
  /** Can never be applied as it is: park it for an operator. */
  | { kind: 'park'; reason: string };

export type CallbackHandler = (entry: AcquirerCallback) => Promise<HandlerOutcome>;
export type CallbackHandlers = Partial<Record<CallbackKind, CallbackHandler>>;

/** Thrown by a handler when retrying cannot help: the callback is parked at once. */
export class PermanentCallbackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentCallbackError';
  }
}

export const SYSTEM_ACTOR: Actor = { userId: null, email: 'system' };

export interface InboxOptions {
  /** Attempts (failed hand-offs, waits, re-checks) before a callback is parked. */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt up to `maxDelayMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** After a successful hand-off, when to look again whether the workflow applied it. */
  recheckMs?: number;
  /** How long the callback route waits for the hand-off before answering anyway. */
  handOffWaitMs?: number;
}

const DEFAULTS: Required<InboxOptions> = {
  maxAttempts: 48,
  baseDelayMs: 1_000,
  maxDelayMs: 30 * 60_000,
  recheckMs: 10 * 60_000,
  handOffWaitMs: 2_000,
};

type Db = Knex | Knex.Transaction;

/**
 * Marks a callback APPLIED, inside the caller's transaction (so the effect and the mark commit
 * together). A row that does not exist (an outcome learnt by asking the acquirer) is created.
 */
export async function markCallbackApplied(
  db: Db,
  c: { kind: CallbackKind; externalId: string; payload: unknown; resolution: string },
): Promise<void> {
  await db('acquirer_callbacks')
    .insert({
      id: newId('acb'),
      kind: c.kind,
      external_id: c.externalId,
      payload: JSON.stringify(c.payload),
      status: 'APPLIED',
      resolution: c.resolution,
      applied_at: db.fn.now(),
    })
    .onConflict(['kind', 'external_id'])
    .merge({ status: 'APPLIED', resolution: c.resolution, applied_at: db.fn.now(), last_error: null, updated_at: db.fn.now() });
}

/**
 * Parks a callback and alerts operators (once per transition into PARKED: an audit record
 * `callback.parked` and an error log). Creates the row when the event never came by callback.
 */
export async function parkCallback(
  db: Db,
  logger: Logger,
  c: { kind: CallbackKind; externalId: string; payload: unknown; reason: string; merchantId?: string | null },
): Promise<void> {
  await db('acquirer_callbacks')
    .insert({ id: newId('acb'), kind: c.kind, external_id: c.externalId, payload: JSON.stringify(c.payload) })
    .onConflict(['kind', 'external_id'])
    .ignore();
  const parked = (await db('acquirer_callbacks')
    .where({ kind: c.kind, external_id: c.externalId })
    .whereNot('status', 'PARKED')
    .whereNot('status', 'APPLIED')
    .update({ status: 'PARKED', parked_at: db.fn.now(), last_error: c.reason, updated_at: db.fn.now() })
    .returning(['id', 'attempts'])) as Array<{ id: string; attempts: number }>;
  const row = parked[0];
  if (!row) return;
  logger.error({ callbackId: row.id, kind: c.kind, externalId: c.externalId, reason: c.reason }, 'acquirer callback parked: needs an operator');
  await recordAudit(db, SYSTEM_ACTOR, {
    action: 'callback.parked',
    targetType: 'acquirer_callback',
    targetId: row.id,
    details: { kind: c.kind, externalId: c.externalId, reason: c.reason, attempts: row.attempts, merchantId: c.merchantId ?? null },
  });
}

export interface CallbackView {
  id: string;
  kind: string;
  externalId: string;
  status: CallbackStatus;
  attempts: number;
  lastError: string | null;
  resolution: string | null;
  receivedAt: string;
  nextAttemptAt: string;
  parkedAt: string | null;
  appliedAt: string | null;
  payload: unknown;
}

const view = (r: AcquirerCallback): CallbackView => ({
  id: r.id,
  kind: r.kind,
  externalId: r.externalId,
  status: r.status,
  attempts: r.attempts,
  lastError: r.lastError,
  resolution: r.resolution,
  receivedAt: new Date(r.receivedAt).toISOString(),
  nextAttemptAt: new Date(r.nextAttemptAt).toISOString(),
  parkedAt: r.parkedAt ? new Date(r.parkedAt).toISOString() : null,
  appliedAt: r.appliedAt ? new Date(r.appliedAt).toISOString() : null,
  payload: r.payload,
});

export function createCallbackInbox(deps: { knex: Knex; logger: Logger; handlers: CallbackHandlers; options?: InboxOptions }) {
  const { knex, logger, handlers } = deps;
  const opts = { ...DEFAULTS, ...deps.options };
  const handledKinds = (): CallbackKind[] => Object.keys(handlers) as CallbackKind[];

  const backoff = (attempts: number): number => Math.min(opts.baseDelayMs * 2 ** Math.max(attempts - 1, 0), opts.maxDelayMs);

  /** Keeps the callback once per (kind, externalId) and returns its row (the first delivery's). */
  async function keep(kind: CallbackKind, externalId: string, payload: unknown): Promise<AcquirerCallback> {
    await knex('acquirer_callbacks')
      .insert({ id: newId('acb'), kind, external_id: externalId, payload: JSON.stringify(payload) })
      .onConflict(['kind', 'external_id'])
      .ignore();
    return (await AcquirerCallback.query(knex).findOne({ kind, external_id: externalId })) as AcquirerCallback;
  }

  /** Records what the handler said; `attempts` counts every try that did not finish the callback. */
  async function record(entry: AcquirerCallback, outcome: HandlerOutcome): Promise<void> {
    const where = { id: entry.id, status: 'RECEIVED' };
    if (outcome.kind === 'applied') {
      await knex('acquirer_callbacks')
        .where(where)
        .update({ status: 'APPLIED', resolution: outcome.resolution, applied_at: knex.fn.now(), last_error: null, updated_at: knex.fn.now() });
      return;
    }
    const attempts = entry.attempts + 1;
    if (outcome.kind === 'park' || attempts >= opts.maxAttempts) {
      const reason =
        outcome.kind === 'park'
          ? outcome.reason
          : `not applied after ${attempts} attempts${outcome.kind === 'wait' ? `: ${outcome.reason}` : ''}`;
      await knex.transaction(async (trx) => {
        await trx('acquirer_callbacks').where(where).update({ attempts });
        await parkCallback(trx, logger, { kind: entry.kind as CallbackKind, externalId: entry.externalId, payload: entry.payload, reason });
      });
      return;
    }
    const delay = outcome.kind === 'handed' ? opts.recheckMs : backoff(attempts);
    await knex('acquirer_callbacks')
      .where(where)
      .update({
        attempts,
        last_error: outcome.kind === 'wait' ? outcome.reason : null,
        next_attempt_at: knex.raw(`now() + make_interval(secs => ?)`, [delay / 1000]),
        updated_at: knex.fn.now(),
      });
  }

  /** Runs the kind's handler on a RECEIVED callback and records the outcome. Never throws. */
  async function dispatch(entry: AcquirerCallback): Promise<void> {
    const handler = handlers[entry.kind as CallbackKind];
    if (!handler || entry.status !== 'RECEIVED') return;
    let outcome: HandlerOutcome;
    try {
      outcome = await handler(entry);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      outcome = err instanceof PermanentCallbackError ? { kind: 'park', reason: message } : { kind: 'wait', reason: message };
      logger.warn({ callbackId: entry.id, kind: entry.kind, err: message }, 'acquirer callback not handed on yet');
    }
    try {
      await record(entry, outcome);
    } catch (err) {
      // The row stays RECEIVED and due: the next reconciliation picks it up again.
      logger.error({ callbackId: entry.id, err: err instanceof Error ? err.message : String(err) }, 'could not record a callback outcome');
    }
  }

  /**
   * Keep, then hand on at once. Only `keep` must succeed for the acquirer to get its 2xx: the
   * hand-off is waited for at most `handOffWaitMs` (a slow or unreachable Temporal must not hold the
   * acquirer's request past its timeout), and carries on in the background; the row's one-minute
   * lease keeps the reconciler off it meanwhile.
   */
  async function receive(kind: CallbackKind, externalId: string, payload: unknown): Promise<AcquirerCallback> {
    const entry = await keep(kind, externalId, payload);
    if (entry.status !== 'RECEIVED' || !handlers[kind]) return entry;
    const leased = await knex('acquirer_callbacks')
      .where({ id: entry.id, status: 'RECEIVED' })
      .where('next_attempt_at', '<=', knex.fn.now())
      .update({ next_attempt_at: knex.raw(`now() + interval '1 minute'`) });
    // Someone (the reconciler, a concurrent delivery) is handing it on already.
    if (leased === 0) return entry;
    const handOff = dispatch(entry);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([handOff, new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.handOffWaitMs)))]);
    clearTimeout(timer);
    return entry;
  }

  /**
   * One reconciliation pass: every RECEIVED callback that is due, of a kind with a handler, is
   * handed on again. Rows are claimed with SKIP LOCKED and a one-minute lease on
   * `next_attempt_at`, so several API processes share the work without handling one twice at once.
   */
  async function redriveDue(o: { batchSize?: number; maxBatches?: number } = {}): Promise<number> {
    const kinds = handledKinds();
    if (kinds.length === 0) return 0;
    const batch = o.batchSize ?? 100;
    let done = 0;
    for (let i = 0; i < (o.maxBatches ?? 50); i++) {
      const claimed = (await knex.transaction(async (trx) => {
        const ids = (await trx('acquirer_callbacks')
          .where({ status: 'RECEIVED' })
          .whereIn('kind', kinds)
          .where('next_attempt_at', '<=', trx.fn.now())
          .orderBy('next_attempt_at')
          .limit(batch)
          .forUpdate()
          .skipLocked()
          .pluck('id')) as string[];
        if (ids.length === 0) return [];
        await trx('acquirer_callbacks')
          .whereIn('id', ids)
          .update({ next_attempt_at: trx.raw(`now() + interval '1 minute'`) });
        return AcquirerCallback.query(trx).whereIn('id', ids).orderBy('received_at');
      })) as AcquirerCallback[];
      for (const entry of claimed) await dispatch(entry);
      done += claimed.length;
      if (claimed.length < batch) break;
    }
    if (done > 0) logger.info({ callbacks: done }, 'acquirer callbacks re-driven');
    return done;
  }

  /** Makes one callback due now (e.g. the outcome it was waiting for has arrived). */
  async function nudge(kind: CallbackKind, externalId: string): Promise<void> {
    await knex('acquirer_callbacks')
      .where({ kind, external_id: externalId, status: 'RECEIVED' })
      .update({ next_attempt_at: knex.fn.now(), updated_at: knex.fn.now() });
  }

  async function list(q: { status?: CallbackStatus; kind?: string; limit?: number } = {}): Promise<CallbackView[]> {
    const rows = await AcquirerCallback.query(knex)
      .modify((b) => {
        if (q.status) b.where({ status: q.status });
        if (q.kind) b.where({ kind: q.kind });
      })
      .orderBy([
        { column: 'received_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(q.limit ?? 100);
    return rows.map(view);
  }

  /**
   * Puts parked callbacks (the given ids, or all) back to RECEIVED, due now, attempts reset, and
   * audits it; the next reconciliation pass hands them on.
   */
  async function redrive(actor: Actor, ids: string[] | 'all-parked'): Promise<CallbackView[]> {
    return knex.transaction(async (trx) => {
      const q = trx('acquirer_callbacks').where({ status: 'PARKED' });
      if (ids !== 'all-parked') q.whereIn('id', ids);
      const rows = (await q
        .update({ status: 'RECEIVED', attempts: 0, next_attempt_at: trx.fn.now(), parked_at: null, updated_at: trx.fn.now() })
        .returning('id')) as Array<{ id: string }>;
      for (const r of rows) {
        await recordAudit(trx, actor, { action: 'callback.redrive', targetType: 'acquirer_callback', targetId: r.id });
      }
      const found = await AcquirerCallback.query(trx).whereIn('id', rows.map((r) => r.id));
      return found.map(view);
    });
  }

  return { keep, receive, dispatch, redriveDue, nudge, list, redrive };
}

export type CallbackInbox = ReturnType<typeof createCallbackInbox>;
