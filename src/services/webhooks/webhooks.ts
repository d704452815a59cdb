/**
 * Webhook management (docs/api.md "Webhooks"): register, list (with the 20 newest delivery logs of
 * each), change, delete, and (ext) the delivery history, redelivery and secret rotation. Every
 * query is scoped to the caller's merchant: another merchant's webhook is "not found".
 *
 * The secret is needed in clear to sign deliveries, so it is stored encrypted (src/lib/secret-box.ts)
 * rather than hashed; it leaves the service in full only when created or rotated, masked elsewhere.
 */
import type { z } from 'zod';
import { bindContext } from '../../lib/bind-context';
import type * as contract from '../../contracts/webhooks';
import type { WebhookStatus } from '../../contracts/statuses';
import { assertPageWithinDepth } from '../../contracts/validation';
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import type { Config } from '../../config';
import { conflict, invalid, notFound, validationError } from '../../lib/errors';
import {
  webhooksStore,
  type DeliveryRow,
  type LogRow,
  type WebhookPatch,
  type WebhookRow,
} from '../../stores/webhooks';
import { generateWebhookSecret, maskWebhookSecret } from './signature';
import { newId } from '../../lib/ids';
import { webhookSecretBox } from '../../lib/secret-box';
import { readingSecretOf } from './secrets';
import { systemResolver, webhookUrlProblem, type HostResolver, type WebhookUrlPolicy } from './url';

/** How many delivery logs each webhook carries in the list. */
export const WEBHOOK_LIST_LOGS = 20;

export type { WebhookStatus };

export type WebhookLogView = z.infer<typeof contract.deliveryLog>;

export interface WebhookView {
  id: string;
  name: string | null;
  url: string;
  events: string[];
  status: WebhookStatus;
  createdAt: string;
  updatedAt: string;
}

export type DeliveryView = z.infer<typeof contract.delivery>;

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

export type WebhooksConfig = Pick<
  Config,
  'MAX_WEBHOOKS_PER_MERCHANT' | 'WEBHOOK_RETRY_DELAYS_SECONDS' | 'WEBHOOK_REQUIRE_PUBLIC_HTTPS'
> &
  Partial<Pick<Config, 'WEBHOOK_SECRET_KEYS' | 'WEBHOOK_SECRET_OVERLAP_SECONDS'>> & {
    isProduction: boolean;
  };

/** docs/api.md "Rotating the secret": how long a replaced secret keeps signing, unless configured. */
export const DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS = 86400;

const iso = (d: Date | string): string => new Date(d).toISOString();

function toView(r: WebhookRow): WebhookView {
  return {
    id: r.id,
    name: r.name,
    url: r.url,
    events: r.events,
    status: r.status,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
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
const normaliseName = (name: string | null | undefined): string | null =>
  name === undefined || name === null || name.trim() === '' ? null : name;

type WebhooksDeps = { knex: Knex; config: WebhooksConfig; resolve?: HostResolver };
/** What every operation reads: the dependencies and what is derived once from the config. */
type WebhooksCtx = WebhooksDeps & {
  policy: WebhookUrlPolicy;
  seriesLength: number;
  box: ReturnType<typeof webhookSecretBox>;
  overlapSeconds: number;
};

export function createWebhooksService(deps: WebhooksDeps) {
  const { config } = deps;
  const ctx: WebhooksCtx = {
    ...deps,
    policy: {
      requirePublicHttps: config.isProduction || config.WEBHOOK_REQUIRE_PUBLIC_HTTPS,
      resolve: deps.resolve ?? systemResolver,
    },
    seriesLength: 1 + config.WEBHOOK_RETRY_DELAYS_SECONDS.length,
    box: webhookSecretBox(config.WEBHOOK_SECRET_KEYS),
    overlapSeconds: config.WEBHOOK_SECRET_OVERLAP_SECONDS ?? DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS,
  };
  return bindContext(ctx, { create, list, update, remove, listDeliveries, redeliver, rotateSecret });
}

async function checkUrl(ctx: WebhooksCtx, url: string): Promise<void> {
  const { policy } = ctx;
  const problem = await webhookUrlProblem(url, policy);
  if (problem) throw validationError(`url ${problem}`, 'url');
}

async function own(ctx: WebhooksCtx, merchantId: string, id: string, q: Db = ctx.knex): Promise<WebhookRow> {
  const row = await webhooksStore(q).findForMerchant(merchantId, id);
  if (!row) throw notFound('Webhook not found');
  return row;
}

export async function create(
  ctx: WebhooksCtx,
  merchantId: string,
  input: CreateWebhookInput,
): Promise<WebhookView & { secret: string }> {
  const { knex, config, box } = ctx;
  await checkUrl(ctx, input.url);
  const secret = generateWebhookSecret();
  const id = newId('wh');
  const row = await knex.transaction(async (trx) => {
    // Serialise creations per merchant so two concurrent requests cannot both pass the limit.
    const store = webhooksStore(trx);
    await store.lockMerchantCreations(merchantId);
    if ((await store.countForMerchant(merchantId)) >= config.MAX_WEBHOOKS_PER_MERCHANT) {
      throw invalid(
        `Webhook limit reached (${config.MAX_WEBHOOKS_PER_MERCHANT} per merchant); delete an unused webhook first`,
      );
    }
    return store.insert({
      id,
      merchantId,
      name: normaliseName(input.name),
      url: input.url,
      events: JSON.stringify(normaliseEvents(input.events)),
      secretCiphertext: box.encrypt(secret, 'webhook-current', id),
    });
  });
  return { ...toView(row), secret };
}

/** Newest first; each with its secret masked and its 20 newest delivery logs. */
export async function list(
  ctx: WebhooksCtx,
  merchantId: string,
): Promise<Array<WebhookView & { secret: string; logs: WebhookLogView[] }>> {
  const { knex, box } = ctx;
  const store = webhooksStore(knex);
  const rows = await store.listForMerchant(merchantId);
  if (rows.length === 0) return [];
  const logs = await store.newestLogs(
    merchantId,
    rows.map((r) => r.id),
    WEBHOOK_LIST_LOGS,
  );
  const byWebhook = new Map<string, WebhookLogView[]>();
  for (const l of logs) {
    const list = byWebhook.get(l.webhook_id) ?? [];
    list.push(toLogView(l));
    byWebhook.set(l.webhook_id, list);
  }
  return rows.map((r) => ({
    ...toView(r),
    secret: maskWebhookSecret(readingSecretOf(r.id, () => box.decrypt(r.secret_ciphertext, 'webhook-current', r.id))),
    logs: byWebhook.get(r.id) ?? [],
  }));
}

export async function update(
  ctx: WebhooksCtx,
  merchantId: string,
  id: string,
  input: UpdateWebhookInput,
): Promise<WebhookView> {
  const { knex } = ctx;
  await own(ctx, merchantId, id);
  if (input.url !== undefined) await checkUrl(ctx, input.url);
  const patch: WebhookPatch = {};
  if (input.url !== undefined) patch.url = input.url;
  if (input.name !== undefined) patch.name = normaliseName(input.name);
  if (input.events !== undefined) patch.events = JSON.stringify(normaliseEvents(input.events));
  if (input.status !== undefined) patch.status = input.status;
  const row = await webhooksStore(knex).update(merchantId, id, patch);
  if (!row) throw notFound('Webhook not found');
  return toView(row);
}

/** Deletes the webhook and cancels its pending deliveries; their history stays. */
export async function remove(ctx: WebhooksCtx, merchantId: string, id: string): Promise<void> {
  const { knex } = ctx;
  await knex.transaction(async (trx) => {
    if (!(await webhooksStore(trx).deleteAndCancelPending(merchantId, id))) throw notFound('Webhook not found');
  });
}

/** (ext) The webhook's deliveries, newest first. */
export async function listDeliveries(
  ctx: WebhooksCtx,
  merchantId: string,
  id: string,
  page: { page: number; limit: number },
): Promise<{ page: number; limit: number; total: number; deliveries: DeliveryView[] }> {
  const { knex } = ctx;
  await own(ctx, merchantId, id);
  const { total, rows } = await webhooksStore(knex).deliveriesPage(merchantId, id, {
    limit: page.limit,
    offset: (page.page - 1) * page.limit,
  });
  assertPageWithinDepth(page.page, page.limit, total);
  return { page: page.page, limit: page.limit, total, deliveries: rows.map(toDeliveryView) };
}

/**
 * (ext) Sends a finished delivery again: a new series of attempts (same delivery id, so receivers
 * that deduplicate on x-webhook-id see it as the same message), with the current URL and secret.
 */
export async function redeliver(
  ctx: WebhooksCtx,
  merchantId: string,
  id: string,
  deliveryId: string,
): Promise<DeliveryView> {
  const { knex, seriesLength } = ctx;
  return knex.transaction(async (trx) => {
    const webhook = await own(ctx, merchantId, id, trx);
    const store = webhooksStore(trx);
    const d = await store.lockDelivery(merchantId, id, deliveryId);
    if (!d) throw notFound('Delivery not found');
    if (webhook.status !== 'ACTIVE') throw invalid('Webhook is INACTIVE; activate it before redelivering');
    if (d.status === 'PENDING') throw conflict('Delivery is still in progress');
    const row = await store.restartDelivery(merchantId, deliveryId, d.attempts + seriesLength);
    return toDeliveryView(row);
  });
}

/**
 * (ext) A new secret, returned in full this once and signing from the next attempt; the replaced
 * one signs too until the overlap ends (docs/api.md "Rotating the secret").
 */
export async function rotateSecret(
  ctx: WebhooksCtx,
  merchantId: string,
  id: string,
): Promise<WebhookView & { secret: string; previousSecretExpiresAt: string | null }> {
  const { knex, overlapSeconds, box } = ctx;
  const secret = generateWebhookSecret();
  const row = await knex.transaction(async (trx) => {
    const store = webhooksStore(trx);
    const old = await store.lockForMerchant(merchantId, id);
    if (!old) throw notFound('Webhook not found');
    // The replaced secret changes slot, and the slot is bound into its ciphertext: re-encrypt it.
    const previous =
      overlapSeconds > 0
        ? box.encrypt(
            readingSecretOf(id, () => box.decrypt(old.secret_ciphertext, 'webhook-current', id)),
            'webhook-previous',
            id,
          )
        : null;
    return store.rotateSecret(
      merchantId,
      id,
      { current: box.encrypt(secret, 'webhook-current', id), previous },
      overlapSeconds,
    );
  });
  if (!row) throw notFound('Webhook not found');
  const expires = row.previous_secret_expires_at;
  return { ...toView(row), secret, previousSecretExpiresAt: expires === null ? null : iso(expires) };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
