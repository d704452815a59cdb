/**
 * The acquirer callback inbox: the durable source of truth for acquirer events
 * (docs/operations.md "The callback inbox and reconciliation").
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
import { bindContext } from '../../lib/bind-context';
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import type { Logger } from '../../lib/logger';
import type { AcquirerCallback } from '../../models/acquirer-callback';
import type { CallbackKind, CallbackStatus } from '../../contracts/statuses';
import { callbackInboxStore } from '../../stores/callback-inbox';
import { recordAudit, type Actor } from '../platform/audit';
import { currentTraceparent, withTraceparent } from '../../observability/tracing';
import { errorMessage } from '../../lib/error-message';

export type { CallbackKind };

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

/**
 * Marks a callback APPLIED, inside the caller's transaction (so the effect and the mark commit
 * together). A row that does not exist (an outcome learnt by asking the acquirer) is created.
 */
export async function markCallbackApplied(
  db: Db,
  c: { kind: CallbackKind; externalId: string; payload: unknown; resolution: string },
): Promise<void> {
  await callbackInboxStore(db).upsertApplied(c.kind, c.externalId, c.payload, c.resolution);
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
  const row = await callbackInboxStore(db).park(c.kind, c.externalId, c.payload, c.reason);
  if (!row) return;
  logger.error(
    { callbackId: row.id, kind: c.kind, externalId: c.externalId, reason: c.reason },
    'acquirer callback parked: needs an operator',
  );
  await recordAudit(db, SYSTEM_ACTOR, {
    action: 'callback.parked',
    targetType: 'acquirer_callback',
    targetId: row.id,
    details: {
      kind: c.kind,
      externalId: c.externalId,
      reason: c.reason,
      attempts: row.attempts,
      merchantId: c.merchantId ?? null,
    },
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

/** What every inbox function works with. */
interface InboxCtx {
  knex: Knex;
  logger: Logger;
  handlers: CallbackHandlers;
  opts: Required<InboxOptions>;
}

export function createCallbackInbox(deps: {
  knex: Knex;
  logger: Logger;
  handlers: CallbackHandlers;
  options?: InboxOptions;
}) {
  const ctx: InboxCtx = {
    knex: deps.knex,
    logger: deps.logger,
    handlers: deps.handlers,
    opts: { ...DEFAULTS, ...deps.options },
  };
  return bindContext(ctx, {
    keep: keepCallback,
    receive: receiveCallback,
    dispatch: dispatchCallback,
    redriveDue: redriveDueCallbacks,
    nudge: nudgeCallback,
    list: listCallbacks,
    redrive: redriveParked,
    backlog: inboxBacklog,
  });
}

/** Keeps the callback once per (kind, externalId) and returns its row (the first delivery's). */
async function keepCallback(
  ctx: InboxCtx,
  kind: CallbackKind,
  externalId: string,
  payload: unknown,
): Promise<AcquirerCallback> {
  // The first receipt's trace goes with the row: a later hand-off continues it (docs/operations.md "Tracing").
  return callbackInboxStore(ctx.knex).keep(kind, externalId, payload, currentTraceparent());
}

/** Records what the handler said; `attempts` counts every try that did not finish the callback. */
async function recordOutcome(
  { knex, logger, opts }: InboxCtx,
  entry: AcquirerCallback,
  outcome: HandlerOutcome,
): Promise<void> {
  if (outcome.kind === 'applied') {
    await callbackInboxStore(knex).markApplied(entry.id, outcome.resolution);
    return;
  }
  const attempts = entry.attempts + 1;
  if (outcome.kind === 'park' || attempts >= opts.maxAttempts) {
    const reason =
      outcome.kind === 'park'
        ? outcome.reason
        : `not applied after ${attempts} attempts${outcome.kind === 'wait' ? `: ${outcome.reason}` : ''}`;
    await knex.transaction(async (trx) => {
      await callbackInboxStore(trx).setAttempts(entry.id, attempts);
      await parkCallback(trx, logger, {
        kind: entry.kind as CallbackKind,
        externalId: entry.externalId,
        payload: entry.payload,
        reason,
      });
    });
    return;
  }
  const backoff = Math.min(opts.baseDelayMs * 2 ** Math.max(attempts - 1, 0), opts.maxDelayMs);
  const delay = outcome.kind === 'handed' ? opts.recheckMs : backoff;
  await callbackInboxStore(knex).retryLater(entry.id, attempts, outcome.kind === 'wait' ? outcome.reason : null, delay);
}

/** Runs the kind's handler on a RECEIVED callback and records the outcome. Never throws. */
async function dispatchCallback(ctx: InboxCtx, entry: AcquirerCallback): Promise<void> {
  const { logger } = ctx;
  const handler = ctx.handlers[entry.kind as CallbackKind];
  if (!handler || entry.status !== 'RECEIVED') return;
  let outcome: HandlerOutcome;
  try {
    outcome = await withTraceparent(entry.traceparent, () => handler(entry));
  } catch (err) {
    const message = errorMessage(err);
    outcome =
      err instanceof PermanentCallbackError ? { kind: 'park', reason: message } : { kind: 'wait', reason: message };
    logger.warn({ callbackId: entry.id, kind: entry.kind, err: message }, 'acquirer callback not handed on yet');
  }
  try {
    await recordOutcome(ctx, entry, outcome);
  } catch (err) {
    // The row stays RECEIVED and due: the next reconciliation picks it up again.
    logger.error({ callbackId: entry.id, err: errorMessage(err) }, 'could not record a callback outcome');
  }
}

/**
 * Keep, then hand on at once. Only `keep` must succeed for the acquirer to get its 2xx: the
 * hand-off is waited for at most `handOffWaitMs` (a slow or unreachable Temporal must not hold the
 * acquirer's request past its timeout), and carries on in the background; the row's one-minute
 * lease keeps the reconciler off it meanwhile.
 */
async function receiveCallback(
  ctx: InboxCtx,
  kind: CallbackKind,
  externalId: string,
  payload: unknown,
): Promise<AcquirerCallback> {
  const handled = ctx.handlers[kind] !== undefined;
  if (handled) {
    // The first delivery of a callback is kept and leased in one statement.
    const fresh = await callbackInboxStore(ctx.knex).keepLeased(kind, externalId, payload, currentTraceparent());
    if (fresh) return handOff(ctx, fresh);
  }
  const entry = await keepCallback(ctx, kind, externalId, payload);
  if (entry.status !== 'RECEIVED' || !handled) return entry;
  // Someone (the reconciler, a concurrent delivery) is handing it on already.
  if (!(await callbackInboxStore(ctx.knex).lease(entry.id))) return entry;
  return handOff(ctx, entry);
}

/** Hands a leased callback on, waiting for that at most `handOffWaitMs`. */
async function handOff(ctx: InboxCtx, entry: AcquirerCallback): Promise<AcquirerCallback> {
  const handedOff = dispatchCallback(ctx, entry);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    handedOff,
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ctx.opts.handOffWaitMs))),
  ]);
  clearTimeout(timer);
  return entry;
}

/**
 * One reconciliation pass: every RECEIVED callback that is due, of a kind with a handler, is
 * handed on again. Rows are claimed with SKIP LOCKED and a one-minute lease on
 * `next_attempt_at`, so several API processes share the work without handling one twice at once.
 */
async function redriveDueCallbacks(
  ctx: InboxCtx,
  o: { batchSize?: number; maxBatches?: number } = {},
): Promise<number> {
  const kinds = Object.keys(ctx.handlers) as CallbackKind[];
  if (kinds.length === 0) return 0;
  const batch = o.batchSize ?? 100;
  let done = 0;
  for (let i = 0; i < (o.maxBatches ?? 50); i++) {
    const claimed = await ctx.knex.transaction((trx) => callbackInboxStore(trx).claimDue(kinds, batch));
    for (const entry of claimed) await dispatchCallback(ctx, entry);
    done += claimed.length;
    if (claimed.length < batch) break;
  }
  if (done > 0) ctx.logger.info({ callbacks: done }, 'acquirer callbacks re-driven');
  return done;
}

/** Makes one callback due now (e.g. the outcome it was waiting for has arrived). */
async function nudgeCallback(ctx: InboxCtx, kind: CallbackKind, externalId: string): Promise<void> {
  await callbackInboxStore(ctx.knex).nudge(kind, externalId);
}

async function listCallbacks(
  ctx: InboxCtx,
  q: { status?: CallbackStatus; kind?: string; limit?: number } = {},
): Promise<CallbackView[]> {
  const rows = await callbackInboxStore(ctx.knex).list({ status: q.status, kind: q.kind, limit: q.limit ?? 100 });
  return rows.map(view);
}

/**
 * Puts parked callbacks (the given ids, or all) back to RECEIVED, due now, attempts reset, and
 * audits it; the next reconciliation pass hands them on.
 */
async function redriveParked(ctx: InboxCtx, actor: Actor, ids: string[] | 'all-parked'): Promise<CallbackView[]> {
  return ctx.knex.transaction(async (trx) => {
    const store = callbackInboxStore(trx);
    const unparked = await store.unpark(ids);
    for (const id of unparked) {
      await recordAudit(trx, actor, { action: 'callback.redrive', targetType: 'acquirer_callback', targetId: id });
    }
    const found = await store.findMany(unparked);
    return found.map(view);
  });
}

/** The backlog /metrics shows (docs/operations.md "Metrics and logs"). */
const inboxBacklog = (ctx: InboxCtx) => callbackInboxStore(ctx.knex).backlog();

export type CallbackInbox = ReturnType<typeof createCallbackInbox>;
