/**
 * Every query of webhook management: `webhooks`, their `webhook_deliveries` (list, cancel,
 * redeliver) and `webhook_delivery_logs` (the newest of each webhook). `db` is the knex instance
 * or the caller's transaction; every query is scoped to the merchant.
 */
import type { Knex } from 'knex';
import type { WebhookDeliveryStatus, WebhookStatus } from '../contracts/statuses';
import { newId } from '../lib/ids';
import { DELIVERY_CHANNEL } from '../services/webhook-outbox';

type Db = Knex | Knex.Transaction;

export interface WebhookRow {
  id: string;
  merchant_id: string;
  name: string | null;
  url: string;
  events: string[];
  secret: string;
  status: WebhookStatus;
  created_at: Date;
  updated_at: Date;
}

export interface LogRow {
  id: string;
  delivery_id: string;
  webhook_id: string;
  event: string;
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

export function webhooksStore(db: Db) {
  return {
    async findForMerchant(merchantId: string, id: string): Promise<WebhookRow | undefined> {
      return (await db('webhooks').where({ id, merchant_id: merchantId }).first()) as WebhookRow | undefined;
    },

    /** Serialises creations per merchant (inside a transaction) so a limit check holds. */
    async lockMerchantCreations(merchantId: string): Promise<void> {
      await db.raw('select pg_advisory_xact_lock(hashtext(?))', [`webhooks:${merchantId}`]);
    },

    async countForMerchant(merchantId: string): Promise<number> {
      const [{ count }] = (await db('webhooks').where({ merchant_id: merchantId }).count({ count: '*' })) as [{ count: string | number }];
      return Number(count);
    },

    async insert(w: { merchantId: string; name: string | null; url: string; events: string; secret: string }): Promise<WebhookRow> {
      const [inserted] = (await db('webhooks')
        .insert({ id: newId('wh'), merchant_id: w.merchantId, name: w.name, url: w.url, events: w.events, secret: w.secret, status: 'ACTIVE' })
        .returning('*')) as WebhookRow[];
      return inserted as WebhookRow;
    },

    /** Newest first. */
    async listForMerchant(merchantId: string): Promise<WebhookRow[]> {
      return (await db('webhooks')
        .where({ merchant_id: merchantId })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])) as WebhookRow[];
    },

    /** The newest `perWebhook` logs of each webhook: one LATERAL read per webhook walks its index. */
    async newestLogs(merchantId: string, webhookIds: string[], perWebhook: number): Promise<LogRow[]> {
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
    },

    /** The updated row, or undefined when the merchant has no such webhook. */
    async update(merchantId: string, id: string, patch: WebhookPatch & { secret?: string }): Promise<WebhookRow | undefined> {
      const [row] = (await db('webhooks')
        .where({ id, merchant_id: merchantId })
        .update({ ...patch, updated_at: db.fn.now() })
        .returning('*')) as WebhookRow[];
      return row;
    },

    /** Deletes the webhook and cancels its pending deliveries (false: no such webhook). */
    async deleteAndCancelPending(merchantId: string, id: string): Promise<boolean> {
      const deleted = await db('webhooks').where({ id, merchant_id: merchantId }).delete();
      if (deleted === 0) return false;
      await db('webhook_deliveries')
        .where({ webhook_id: id, merchant_id: merchantId, status: 'PENDING' })
        .update({ status: 'CANCELED', last_error: 'webhook deleted', completed_at: db.fn.now(), updated_at: db.fn.now() });
      return true;
    },

    /** One page of a webhook's deliveries with their event type, newest first, and the total. */
    async deliveriesPage(merchantId: string, webhookId: string, opts: { limit: number; offset: number }): Promise<{ total: number; rows: DeliveryRow[] }> {
      const base = db('webhook_deliveries as d').where({ 'd.webhook_id': webhookId, 'd.merchant_id': merchantId });
      const [{ total }] = (await base.clone().count({ total: '*' })) as [{ total: string | number }];
      const rows = (await base
        .clone()
        .join('events as e', 'e.id', 'd.event_id')
        .orderBy([
          { column: 'd.created_at', order: 'desc' },
          { column: 'd.id', order: 'desc' },
        ])
        .offset(opts.offset)
        .limit(opts.limit)
        .select(
          'd.id',
          'd.event_id',
          'e.type',
          'd.status',
          'd.attempts',
          'd.last_status_code',
          'd.last_error',
          'd.created_at',
          'd.updated_at',
          'd.completed_at',
        )) as DeliveryRow[];
      return { total: Number(total), rows };
    },

    async lockDelivery(merchantId: string, webhookId: string, deliveryId: string): Promise<{ id: string; status: string; attempts: number } | undefined> {
      return (await db('webhook_deliveries')
        .where({ id: deliveryId, webhook_id: webhookId, merchant_id: merchantId })
        .forUpdate()
        .first('id', 'status', 'attempts')) as { id: string; status: string; attempts: number } | undefined;
    },

    /** A new series of attempts for a finished delivery; wakes the dispatcher (NOTIFY at commit). */
    async restartDelivery(merchantId: string, deliveryId: string, attemptLimit: number): Promise<DeliveryRow> {
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
    },
  };
}
