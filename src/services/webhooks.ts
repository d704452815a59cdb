/**
 * Webhook management (README "Webhooks"): register, list (with the 20 newest delivery logs of
 * each), change, delete, and (ext) the delivery history, redelivery and secret rotation. Every
 * query is scoped to the caller's merchant: another merchant's webhook is "not found".
 *
 * The secret is needed in clear to sign deliveries, so it is stored as is; it leaves the service
 * in full only when created or rotated, and masked everywhere else.
 */
import type { WebhookStatus } from '../contracts/statuses';
import type { Knex } from 'knex';
import type { Config } from '../config';
import { conflict, invalid, notFound } from '../lib/errors';
import { newId } from '../lib/ids';
import { DELIVERY_CHANNEL } from './webhook-outbox';
import { generateWebhookSecret, maskWebhookSecret } from './webhook-signature';
import { systemResolver, webhookUrlProblem, type HostResolver, type WebhookUrlPolicy } from './webhook-url';

/** How many delivery logs each webhook carries in the list. */
export const WEBHOOK_LIST_LOGS = 20;

export type { WebhookStatus };

export interface WebhookLogView {
  id: string;
  deliveryId: string;
  event: string;
  url: string;
  payload: string;
  statusCode: number | null;
  response: string | null;
  attempts: number;
  success: boolean;
  /** (ext) why an attempt got no answer, e.g. a timeout. */
  error: string | null;
  createdAt: string;
}

export interface WebhookView {
  id: string;
  name: string | null;
  url: string;
  events: string[];
  status: WebhookStatus;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryView {
  id: string;
  eventId: string;
  event: string;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'CANCELED';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

interface WebhookRow {
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

interface LogRow {
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

interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  status: DeliveryView['status'];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface CreateWebhookInput {
  url: string;
  name?: string | null;
  events?: string[];
}

export interface UpdateWebhookInput {
  url?: string;
  name?: string | null;
  events?: string[];
  status?: WebhookStatus;
}

export type WebhooksConfig = Pick<Config, 'MAX_WEBHOOKS_PER_MERCHANT' | 'WEBHOOK_RETRY_DELAYS_SECONDS' | 'WEBHOOK_REQUIRE_PUBLIC_HTTPS'> & {
  isProduction: boolean;
};

const iso = (d: Date | string): string => new Date(d).toISOString();

function toView(r: WebhookRow): WebhookView {
  return { id: r.id, name: r.name, url: r.url, events: r.events, status: r.status, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) };
}

function toLogView(r: LogRow): WebhookLogView {
  return {
    id: r.id,
    deliveryId: r.delivery_id,
    event: r.event,
    url: r.url,
    payload: r.payload,
    statusCode: r.status_code,
    response: r.response,
    attempts: r.attempt,
    success: r.success,
    error: r.error,
    createdAt: iso(r.created_at),
  };
}

function toDeliveryView(r: DeliveryRow): DeliveryView {
  return {
    id: r.id,
    eventId: r.event_id,
    event: r.type,
    status: r.status,
    attempts: r.attempts,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    completedAt: r.completed_at === null ? null : iso(r.completed_at),
  };
}

/** Deduplicated, in catalogue order as given; `[]` means every event. */
const normaliseEvents = (events: string[] | undefined): string[] => [...new Set(events ?? [])];
/** An empty name is no name. */
const normaliseName = (name: string | null | undefined): string | null => (name === undefined || name === null || name.trim() === '' ? null : name);

export function createWebhooksService(deps: { knex: Knex; config: WebhooksConfig; resolve?: HostResolver }) {
  const { knex, config } = deps;
  const policy: WebhookUrlPolicy = {
    requirePublicHttps: config.isProduction || config.WEBHOOK_REQUIRE_PUBLIC_HTTPS,
    resolve: deps.resolve ?? systemResolver,
  };
  const seriesLength = 1 + config.WEBHOOK_RETRY_DELAYS_SECONDS.length;

  async function checkUrl(url: string): Promise<void> {
    const problem = await webhookUrlProblem(url, policy);
    if (problem) throw invalid(`url ${problem}`);
  }

  async function own(merchantId: string, id: string, q: Knex | Knex.Transaction = knex): Promise<WebhookRow> {
    const row = (await q('webhooks').where({ id, merchant_id: merchantId }).first()) as WebhookRow | undefined;
    if (!row) throw notFound('Webhook not found');
    return row;
  }

  async function create(merchantId: string, input: CreateWebhookInput): Promise<WebhookView & { secret: string }> {
    await checkUrl(input.url);
    const secret = generateWebhookSecret();
    const row = await knex.transaction(async (trx) => {
      // Serialise creations per merchant so two concurrent requests cannot both pass the limit.
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`webhooks:${merchantId}`]);
      const [{ count }] = (await trx('webhooks').where({ merchant_id: merchantId }).count({ count: '*' })) as [{ count: string | number }];
      if (Number(count) >= config.MAX_WEBHOOKS_PER_MERCHANT) {
        throw invalid(`Webhook limit reached (${config.MAX_WEBHOOKS_PER_MERCHANT} per merchant); delete an unused webhook first`);
      }
      const [inserted] = (await trx('webhooks')
        .insert({
          id: newId('wh'),
          merchant_id: merchantId,
          name: normaliseName(input.name),
          url: input.url,
          events: JSON.stringify(normaliseEvents(input.events)),
          secret,
          status: 'ACTIVE',
        })
        .returning('*')) as WebhookRow[];
      return inserted as WebhookRow;
    });
    return { ...toView(row), secret };
  }

  /** Newest first; each with its secret masked and its 20 newest delivery logs. */
  async function list(merchantId: string): Promise<Array<WebhookView & { secret: string; logs: WebhookLogView[] }>> {
    const rows = (await knex('webhooks')
      .where({ merchant_id: merchantId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])) as WebhookRow[];
    if (rows.length === 0) return [];
    // One LATERAL read per webhook walks its (webhook_id, created_at desc, id desc) index for 20 rows.
    const { rows: logs } = (await knex.raw(
      `select l.* from unnest(?::text[]) as w(id)
       cross join lateral (
         select * from webhook_delivery_logs
         where webhook_id = w.id and merchant_id = ?
         order by created_at desc, id desc
         limit ${WEBHOOK_LIST_LOGS}
       ) l`,
      [rows.map((r) => r.id), merchantId],
    )) as { rows: LogRow[] };
    const byWebhook = new Map<string, WebhookLogView[]>();
    for (const l of logs) {
      const list = byWebhook.get(l.webhook_id) ?? [];
      list.push(toLogView(l));
      byWebhook.set(l.webhook_id, list);
    }
    return rows.map((r) => ({ ...toView(r), secret: maskWebhookSecret(r.secret), logs: byWebhook.get(r.id) ?? [] }));
  }

  async function update(merchantId: string, id: string, input: UpdateWebhookInput): Promise<WebhookView> {
    await own(merchantId, id);
    if (input.url !== undefined) await checkUrl(input.url);
    const patch: Record<string, unknown> = { updated_at: knex.fn.now() };
    if (input.url !== undefined) patch.url = input.url;
    if (input.name !== undefined) patch.name = normaliseName(input.name);
    if (input.events !== undefined) patch.events = JSON.stringify(normaliseEvents(input.events));
    if (input.status !== undefined) patch.status = input.status;
    const [row] = (await knex('webhooks').where({ id, merchant_id: merchantId }).update(patch).returning('*')) as WebhookRow[];
    if (!row) throw notFound('Webhook not found');
    return toView(row);
  }

  /** Deletes the webhook and cancels its pending deliveries; their history stays. */
  async function remove(merchantId: string, id: string): Promise<void> {
    await knex.transaction(async (trx) => {
      const deleted = await trx('webhooks').where({ id, merchant_id: merchantId }).delete();
      if (deleted === 0) throw notFound('Webhook not found');
      await trx('webhook_deliveries')
        .where({ webhook_id: id, merchant_id: merchantId, status: 'PENDING' })
        .update({ status: 'CANCELED', last_error: 'webhook deleted', completed_at: trx.fn.now(), updated_at: trx.fn.now() });
    });
  }

  /** (ext) The webhook's deliveries, newest first. */
  async function listDeliveries(
    merchantId: string,
    id: string,
    page: { page: number; limit: number },
  ): Promise<{ page: number; limit: number; total: number; deliveries: DeliveryView[] }> {
    await own(merchantId, id);
    const base = knex('webhook_deliveries as d').where({ 'd.webhook_id': id, 'd.merchant_id': merchantId });
    const [{ total }] = (await base.clone().count({ total: '*' })) as [{ total: string | number }];
    const rows = (await base
      .clone()
      .join('events as e', 'e.id', 'd.event_id')
      .orderBy([
        { column: 'd.created_at', order: 'desc' },
        { column: 'd.id', order: 'desc' },
      ])
      .offset((page.page - 1) * page.limit)
      .limit(page.limit)
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
    return { page: page.page, limit: page.limit, total: Number(total), deliveries: rows.map(toDeliveryView) };
  }

  /**
   * (ext) Sends a finished delivery again: a new series of attempts (same delivery id, so receivers
   * that deduplicate on x-webhook-id see it as the same message), with the current URL and secret.
   */
  async function redeliver(merchantId: string, id: string, deliveryId: string): Promise<DeliveryView> {
    return knex.transaction(async (trx) => {
      const webhook = await own(merchantId, id, trx);
      const d = (await trx('webhook_deliveries')
        .where({ id: deliveryId, webhook_id: id, merchant_id: merchantId })
        .forUpdate()
        .first('id', 'status', 'attempts')) as { id: string; status: string; attempts: number } | undefined;
      if (!d) throw notFound('Delivery not found');
      if (webhook.status !== 'ACTIVE') throw invalid('Webhook is INACTIVE; activate it before redelivering');
      if (d.status === 'PENDING') throw conflict('Delivery is still in progress');
      await trx('webhook_deliveries')
        .where({ id: deliveryId })
        .update({
          status: 'PENDING',
          attempt_limit: d.attempts + seriesLength,
          workflow_started_at: null,
          completed_at: null,
          last_error: null,
          updated_at: trx.fn.now(),
        });
      await trx.raw('select pg_notify(?, ?)', [DELIVERY_CHANNEL, merchantId]);
      const [row] = (await trx('webhook_deliveries as d')
        .join('events as e', 'e.id', 'd.event_id')
        .where('d.id', deliveryId)
        .select('d.*', 'e.type')) as DeliveryRow[];
      return toDeliveryView(row as DeliveryRow);
    });
  }

  /** (ext) A new secret, effective from the next attempt; returned in full this once. */
  async function rotateSecret(merchantId: string, id: string): Promise<WebhookView & { secret: string }> {
    const secret = generateWebhookSecret();
    const [row] = (await knex('webhooks')
      .where({ id, merchant_id: merchantId })
      .update({ secret, updated_at: knex.fn.now() })
      .returning('*')) as WebhookRow[];
    if (!row) throw notFound('Webhook not found');
    return { ...toView(row), secret };
  }

  return { create, list, update, remove, listDeliveries, redeliver, rotateSecret };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
