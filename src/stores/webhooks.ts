/**
 * Every query of webhook management: `webhooks`, their `webhook_deliveries` (list, cancel,
 * redeliver) and `webhook_delivery_logs` (the newest of each webhook). `db` is the knex instance
 * or the caller's transaction; every query is scoped to the merchant.
 */
import type { Db } from '../db/types';
import type { WebhookEventType } from '../contracts/webhook-events';
import type { WebhookDeliveryStatus, WebhookStatus } from '../contracts/statuses';
import { newId } from '../lib/ids';
import { MAX_LIST_DEPTH } from '../contracts/validation';
import { bindContext } from '../lib/bind-context';

/** LISTEN/NOTIFY channel that wakes the webhook dispatcher. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

export interface WebhookRow {
  id: string;
  merchant_id: string;
  name: string | null;
  url: string;
  events: string[];
  /** The current secret, encrypted (src/lib/secret-box.ts); never the secret in clear. */
  secret_ciphertext: string;
  /** The secret a rotation replaced, still signing until `previous_secret_expires_at`. */
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  status: WebhookStatus;
  created_at: Date;
  updated_at: Date;
}

export interface LogRow {
  id: string;
  delivery_id: string;
  webhook_id: string;
  event: WebhookEventType;
  url: string;
  payload: string;
  status_code: number | null;
  response: string | null;
  attempt: number;
  success: boolean;
  error: string | null;
  created_at: Date;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** The columns a webhook's patch may set (events as the JSON text of the array). */
export interface WebhookPatch {
  url?: string;
  name?: string | null;
  events?: string;
  status?: WebhookStatus;
}

/** The merchant's ACTIVE webhooks subscribed to this event type (or to every event: `[]`), as a subquery of their ids. */
export const subscribedWebhooks = (db: Db, merchantId: string, type: string) =>
  db('webhooks')
    .where({ merchant_id: merchantId, status: 'ACTIVE' })
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- knex ignores a where/modify callback's return; the builder is thenable, not a query in flight
    .andWhere((q) => q.whereRaw(`events = '[]'::jsonb`).orWhereRaw('events @> ?::jsonb', [JSON.stringify([type])]))
    .select('id');

export const webhooksStore = (db: Db) =>
  bindContext(db, {
    enqueueDeliveries,
    findForMerchant,
    lockMerchantCreations,
    countForMerchant,
    insert,
    listForMerchant,
    newestLogs,
    update,
    lockForMerchant,
    rotateSecret,
    lockSecretsAfter,
    setSecrets,
    deleteAndCancelPending,
    deliveriesPage,
    lockDelivery,
    restartDelivery,
    unstarted,
    pendingAfter,
    markWorkflowStarted,
    attemptContext,
    finishDelivery,
    setPayloadOnce,
    logAndRecordAttempt,
  });

/**
 * One PENDING delivery of the event per webhook (once per pair) and, unless `notify` is false, a
 * NOTIFY that reaches the dispatcher only when the transaction commits. Without it the recording
 * process starts the deliveries itself after the commit, and the dispatcher's poll is the safety
 * net (docs/performance.md "Payment to webhook: the timeline"). Returns the ids created.
 */
export async function enqueueDeliveries(
  db: Db,
  d: {
    eventId: string;
    merchantId: string;
    webhookIds: string[];
    payload: string;
    /** W3C traceparent of the work recording the event (docs/operations.md "Tracing"). */
    traceparent?: string;
    /** False: no NOTIFY, the caller starts the deliveries once committed. */
    notify?: boolean;
  },
): Promise<string[]> {
  // One statement: the NOTIFY is sent with each inserted row, which PostgreSQL folds into one
  // per transaction (same channel, same payload), and with none when every pair existed.
  const notified = d.notify === false ? [] : [db.raw('pg_notify(?, ?) as notified', [DELIVERY_CHANNEL, d.merchantId])];
  const inserted = (await db
    .with(
      'd',
      db('webhook_deliveries')
        .insert(
          d.webhookIds.map((webhookId) => ({
            id: newId('whd'),
            event_id: d.eventId,
            webhook_id: webhookId,
            merchant_id: d.merchantId,
            status: 'PENDING',
            payload: d.payload,
            traceparent: d.traceparent ?? null,
          })),
        )
        .onConflict(['event_id', 'webhook_id'])
        .ignore()
        .returning('id'),
    )
    .from('d')
    .select('d.id', ...notified)) as Array<{ id: string }>;
  return inserted.map((r) => r.id);
}

export async function findForMerchant(db: Db, merchantId: string, id: string): Promise<WebhookRow | undefined> {
  return (await db('webhooks').where({ id, merchant_id: merchantId }).first()) as WebhookRow | undefined;
}

/** Serialises creations per merchant (inside a transaction) so a limit check holds. */
export async function lockMerchantCreations(db: Db, merchantId: string): Promise<void> {
  await db.raw('select pg_advisory_xact_lock(hashtext(?))', [`webhooks:${merchantId}`]);
}

export async function countForMerchant(db: Db, merchantId: string): Promise<number> {
  const [{ count }] = (await db('webhooks').where({ merchant_id: merchantId }).count({ count: '*' })) as [
    { count: string | number },
  ];
  return Number(count);
}

export async function insert(
  db: Db,
  w: {
    id: string;
    merchantId: string;
    name: string | null;
    url: string;
    events: string;
    secretCiphertext: string;
  },
): Promise<WebhookRow> {
  const [inserted] = (await db('webhooks')
    .insert({
      id: w.id,
      merchant_id: w.merchantId,
      name: w.name,
      url: w.url,
      events: w.events,
      secret_ciphertext: w.secretCiphertext,
      status: 'ACTIVE',
    })
    .returning('*')) as WebhookRow[];
  return inserted as WebhookRow;
}

/** Newest first. */
export async function listForMerchant(db: Db, merchantId: string): Promise<WebhookRow[]> {
  return (await db('webhooks')
    .where({ merchant_id: merchantId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])) as WebhookRow[];
}

/** The newest `perWebhook` logs of each webhook: one LATERAL read per webhook walks its index. */
export async function newestLogs(
  db: Db,
  merchantId: string,
  webhookIds: string[],
  perWebhook: number,
): Promise<LogRow[]> {
  const { rows } = (await db.raw(
    `select l.* from unnest(?::text[]) as w(id)
   cross join lateral (
     select * from webhook_delivery_logs
     where webhook_id = w.id and merchant_id = ?
     order by created_at desc, id desc
     limit ${Number(perWebhook)}
   ) l`,
    [webhookIds, merchantId],
  )) as { rows: LogRow[] };
  return rows;
}

/** The updated row, or undefined when the merchant has no such webhook. */
export async function update(
  db: Db,
  merchantId: string,
  id: string,
  patch: WebhookPatch,
): Promise<WebhookRow | undefined> {
  const [row] = (await db('webhooks')
    .where({ id, merchant_id: merchantId })
    .update({ ...patch, updated_at: db.fn.now() })
    .returning('*')) as WebhookRow[];
  return row;
}

/** The merchant's webhook, locked until the transaction ends (a rotation reads and replaces its secrets). */
export async function lockForMerchant(db: Db, merchantId: string, id: string): Promise<WebhookRow | undefined> {
  return (await db('webhooks').where({ id, merchant_id: merchantId }).forUpdate().first()) as WebhookRow | undefined;
}

/**
 * A new current secret; the replaced one, re-encrypted for the previous slot by the caller,
 * keeps signing for `overlapSeconds` (none when null or 0). One overlap at a time.
 */
export async function rotateSecret(
  db: Db,
  merchantId: string,
  id: string,
  secrets: { current: string; previous: string | null },
  overlapSeconds: number,
): Promise<WebhookRow | undefined> {
  const keep = overlapSeconds > 0 && secrets.previous !== null;
  const [row] = (await db('webhooks')
    .where({ id, merchant_id: merchantId })
    .update({
      previous_secret_ciphertext: keep ? secrets.previous : null,
      previous_secret_expires_at: keep ? db.raw('now() + make_interval(secs => ?)', [overlapSeconds]) : null,
      secret_ciphertext: secrets.current,
      updated_at: db.fn.now(),
    })
    .returning('*')) as WebhookRow[];
  return row;
}

/** One keyset page of every webhook's ciphertexts, locked (re-encryption under a new key). */
export async function lockSecretsAfter(db: Db, after: string, limit: number): Promise<StoredSecrets[]> {
  return (await db('webhooks')
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .select(
      'id',
      'secret_ciphertext',
      db.raw(
        'case when previous_secret_expires_at > now() then previous_secret_ciphertext end as previous_secret_ciphertext',
      ),
      db.raw(
        'case when previous_secret_expires_at > now() then previous_secret_expires_at end as previous_secret_expires_at',
      ),
    )) as StoredSecrets[];
}

/** Replaces a webhook's ciphertexts (an expired previous secret goes with its expiry). */
export async function setSecrets(db: Db, s: StoredSecrets): Promise<void> {
  await db('webhooks').where({ id: s.id }).update({
    secret_ciphertext: s.secret_ciphertext,
    previous_secret_ciphertext: s.previous_secret_ciphertext,
    previous_secret_expires_at: s.previous_secret_expires_at,
  });
}

/** Deletes the webhook and cancels its pending deliveries (false: no such webhook). */
export async function deleteAndCancelPending(db: Db, merchantId: string, id: string): Promise<boolean> {
  const deleted = await db('webhooks').where({ id, merchant_id: merchantId }).delete();
  if (deleted === 0) return false;
  await db('webhook_deliveries').where({ webhook_id: id, merchant_id: merchantId, status: 'PENDING' }).update({
    status: 'CANCELED',
    last_error: 'webhook deleted',
    completed_at: db.fn.now(),
    updated_at: db.fn.now(),
  });
  return true;
}

/**
 * One page of a webhook's deliveries with their event type, newest first, and the total, in
 * one statement, as the withdrawal list (docs/api.md "Pagination limits"): the total from
 * `list_counts`, the ids from walking (webhook_id, created_at desc, id desc) alone, nothing
 * walked for a page past the end or too deep (`pageIsRead`).
 */
export async function deliveriesPage(
  db: Db,
  merchantId: string,
  webhookId: string,
  opts: { limit: number; offset: number },
): Promise<{ total: number; rows: DeliveryRow[] }> {
  const { rows } = (await db.raw(
    `select t.total, d.id, d.event_id, d.type, d.status, d.attempts, d.last_status_code, d.last_error, d.created_at, d.updated_at, d.completed_at
     from (select coalesce(sum(n), 0)::bigint as total from list_counts where list = 'webhook_deliveries' and owner_id = :webhook) t
     left join lateral (
       select x.*, e.type from (select id from webhook_deliveries where webhook_id = :webhook
                                  order by created_at desc, id desc limit :take offset :skip) p
       cross join lateral (select * from webhook_deliveries where id = p.id and merchant_id = :merchant limit 1) x
       join events e on e.id = x.event_id
       where :skip::bigint < t.total and least(:skip::bigint + :take, t.total) <= ${MAX_LIST_DEPTH}
       offset 0
     ) d on true
     order by d.created_at desc, d.id desc`,
    { webhook: webhookId, merchant: merchantId, take: opts.limit, skip: opts.offset },
  )) as { rows: Array<DeliveryRow & { total: string | number }> };
  const total = Number(rows[0]?.total ?? 0);
  return {
    total,
    rows: rows.filter((r) => (r.id as string | null) !== null).map(({ total: _total, ...r }) => r as DeliveryRow),
  };
}

export async function lockDelivery(
  db: Db,
  merchantId: string,
  webhookId: string,
  deliveryId: string,
): Promise<{ id: string; status: string; attempts: number } | undefined> {
  return (await db('webhook_deliveries')
    .where({ id: deliveryId, webhook_id: webhookId, merchant_id: merchantId })
    .forUpdate()
    .first('id', 'status', 'attempts')) as { id: string; status: string; attempts: number } | undefined;
}

/** A new series of attempts for a finished delivery; wakes the dispatcher (NOTIFY at commit). */
export async function restartDelivery(
  db: Db,
  merchantId: string,
  deliveryId: string,
  attemptLimit: number,
): Promise<DeliveryRow> {
  await db('webhook_deliveries').where({ id: deliveryId }).update({
    status: 'PENDING',
    attempt_limit: attemptLimit,
    workflow_started_at: null,
    completed_at: null,
    last_error: null,
    updated_at: db.fn.now(),
  });
  await db.raw('select pg_notify(?, ?)', [DELIVERY_CHANNEL, merchantId]);
  const [row] = (await db('webhook_deliveries as d')
    .join('events as e', 'e.id', 'd.event_id')
    .where('d.id', deliveryId)
    .select('d.*', 'e.type')) as DeliveryRow[];
  return row as DeliveryRow;
}

// ---- the delivery side (the dispatcher and the delivery workflow's activity) -------------

/** PENDING deliveries whose workflow was not started yet, oldest first. */
export async function unstarted(db: Db, limit: number): Promise<PendingDelivery[]> {
  return (await db('webhook_deliveries')
    .where({ status: 'PENDING' })
    .whereNull('workflow_started_at')
    .orderBy('created_at')
    .limit(limit)
    .select('id', 'merchant_id', 'attempts', 'traceparent')) as PendingDelivery[];
}

/** Every PENDING delivery after `after` in id order (keyset pages for the reconciler). */
export async function pendingAfter(db: Db, after: string, limit: number): Promise<PendingDelivery[]> {
  return (await db('webhook_deliveries')
    .where({ status: 'PENDING' })
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .select('id', 'merchant_id', 'attempts', 'traceparent')) as PendingDelivery[];
}

export async function markWorkflowStarted(db: Db, id: string): Promise<void> {
  await db('webhook_deliveries')
    .where({ id })
    .whereNull('workflow_started_at')
    .update({ workflow_started_at: db.fn.now() });
}

/**
 * Everything an attempt reads before it POSTs, in one statement: the delivery, whether this
 * attempt number was logged already (a retried activity), its webhook if it is still its
 * merchant's, and its event (the data only for a row written before it carried its envelope).
 */
export async function attemptContext(db: Db, id: string, attempt: number): Promise<AttemptContext | undefined> {
  const { rows } = (await db.raw(
    `select d.id, d.event_id, d.webhook_id, d.merchant_id, d.status, d.attempts, d.attempt_limit, d.payload,
            l.success as logged_success,
            w.id as target_id, w.url as target_url, w.status as target_status,
            w.secret_ciphertext as target_secret_ciphertext,
            case when w.previous_secret_expires_at > now() then w.previous_secret_ciphertext end
              as target_previous_secret_ciphertext,
            e.type as event_type, e.created_at as event_created_at,
            case when d.payload is null then e.data end as event_data
       from webhook_deliveries d
       join events e on e.id = d.event_id
       left join webhook_delivery_logs l on l.delivery_id = d.id and l.attempt = ?
       left join webhooks w on w.id = d.webhook_id and w.merchant_id = d.merchant_id
      where d.id = ?`,
    [attempt, id],
  )) as { rows: AttemptContextRow[] };
  const r = rows[0];
  if (!r) return undefined;
  return {
    delivery: {
      id: r.id,
      event_id: r.event_id,
      webhook_id: r.webhook_id,
      merchant_id: r.merchant_id,
      status: r.status,
      attempts: r.attempts,
      attempt_limit: r.attempt_limit,
      payload: r.payload,
    },
    logged: r.logged_success === null ? undefined : { success: r.logged_success },
    target:
      r.target_id === null || r.target_url === null || r.target_status === null || r.target_secret_ciphertext === null
        ? undefined
        : {
            id: r.target_id,
            url: r.target_url,
            status: r.target_status,
            secret_ciphertext: r.target_secret_ciphertext,
            previous_secret_ciphertext: r.target_previous_secret_ciphertext,
          },
    event: { type: r.event_type, created_at: r.event_created_at, data: r.event_data },
  };
}

/** Ends a PENDING delivery (no more attempts). */
export async function finishDelivery(
  db: Db,
  id: string,
  status: 'FAILED' | 'CANCELED',
  reason?: string,
): Promise<void> {
  await db('webhook_deliveries')
    .where({ id, status: 'PENDING' })
    .update({
      status,
      ...(reason === undefined ? {} : { last_error: reason }),
      completed_at: db.fn.now(),
      updated_at: db.fn.now(),
    });
}

/** Stores the envelope bytes once; returns the stored ones (a concurrent writer may have won). */
export async function setPayloadOnce(db: Db, id: string, payload: string): Promise<string> {
  await db('webhook_deliveries').where({ id }).whereNull('payload').update({ payload });
  return ((await db('webhook_deliveries').where({ id }).first('payload')) as { payload: string }).payload;
}

/**
 * Logs one attempt once per (delivery, attempt) and records what it did to the PENDING delivery,
 * in one statement (so one commit); false when the attempt was logged already, and then the
 * delivery is left as it is.
 */
export async function logAndRecordAttempt(
  db: Db,
  l: {
    deliveryId: string;
    webhookId: string;
    merchantId: string;
    event: string;
    url: string;
    payload: string;
    statusCode: number | null;
    response: string | null;
    attempt: number;
    success: boolean;
    error: string | null;
    durationMs: number;
    status: WebhookDeliveryStatus;
  },
): Promise<boolean> {
  const { rows } = (await db.raw(
    `with logged as (
       insert into webhook_delivery_logs
         (id, delivery_id, webhook_id, merchant_id, event, url, payload, status_code, response, attempt, success, error, duration_ms)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (delivery_id, attempt) do nothing
       returning id
     ), recorded as (
       update webhook_deliveries
          set attempts = greatest(attempts, ?), last_status_code = ?, last_error = ?, status = ?,
              completed_at = case when ? = 'PENDING' then null else now() end, updated_at = now()
        where id = ? and status = 'PENDING' and exists (select 1 from logged)
     )
     select exists (select 1 from logged) as logged`,
    [
      newId('whl'),
      l.deliveryId,
      l.webhookId,
      l.merchantId,
      l.event,
      l.url,
      l.payload,
      l.statusCode,
      l.response,
      l.attempt,
      l.success,
      l.error,
      l.durationMs,
      l.attempt,
      l.statusCode,
      l.error,
      l.status,
      l.status,
      l.deliveryId,
    ],
  )) as { rows: Array<{ logged: boolean }> };
  return rows[0]?.logged === true;
}

/** What `attemptContext` reads, as PostgreSQL answers it. */
interface AttemptContextRow extends DeliveryForAttempt {
  logged_success: boolean | null;
  target_id: string | null;
  target_url: string | null;
  target_status: DeliveryTarget['status'] | null;
  target_secret_ciphertext: string | null;
  target_previous_secret_ciphertext: string | null;
  event_type: string;
  event_created_at: Date;
  event_data: Record<string, unknown> | null;
}

/** What an attempt reads before it POSTs (`attemptContext`). */
export interface AttemptContext {
  delivery: DeliveryForAttempt;
  /** This attempt number's log, when it ran already. */
  logged: { success: boolean } | undefined;
  /** The webhook, unless it was deleted or is not the delivery's merchant's. */
  target: DeliveryTarget | undefined;
  /** `data` only when the delivery has no stored envelope yet. */
  event: { type: string; created_at: Date; data: Record<string, unknown> | null };
}

/** A delivery as its attempts read it. */
export interface DeliveryForAttempt {
  id: string;
  event_id: string;
  webhook_id: string;
  merchant_id: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  attempt_limit: number | null;
  payload: string | null;
}

/** A delivery the dispatcher starts a workflow for. */
export interface PendingDelivery {
  id: string;
  merchant_id: string;
  attempts: number;
  traceparent: string | null;
}

/** Where a delivery goes and the secrets that sign it (the previous one only within its overlap). */
export interface DeliveryTarget {
  id: string;
  url: string;
  status: WebhookStatus;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
}

/** A webhook's encrypted secrets (the previous one null once its overlap is over). */
export interface StoredSecrets {
  id: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
}
