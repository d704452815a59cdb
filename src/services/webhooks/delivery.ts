/**
 * One delivery attempt (docs/api.md "Webhooks"): the activity behind the `webhook-delivery-<id>`
 * workflow. Before each attempt the delivery and its webhook are read again: a delivery no longer
 * PENDING, or a webhook deleted or made INACTIVE, gets no further attempt (the delivery becomes
 * CANCELED). Then the stored envelope bytes are POSTed with the current URL and secrets (the
 * previous one too during a rotation's overlap), the attempt is logged, and the outcome says
 * whether and when to try again.
 *
 * Attempts are numbered per delivery; one log row per number makes a retried activity (after a
 * crash between POST and commit) log the attempt once. A series has 1 + retry delays attempts;
 * `attempt_limit` is the last number of the current series (a redelivery opens a new one).
 */
import {
  recordWebhookAttempt,
  recordWebhookDeliveryFailed,
  recordWebhookDelivered,
  type WebhookAttemptOutcome as AttemptMetric,
} from '../../observability/metrics';
import type { WebhookDeliveryStatus } from '../../contracts/statuses';
import { bindContext } from '../../lib/bind-context';
import type { Knex } from 'knex';
import type { Config } from '../../config';
import { webhooksStore, type AttemptContext, type DeliveryForAttempt } from '../../stores/webhooks';
import type { Logger } from '../../lib/logger';
import packageJson from '../../../package.json';
import type { WebhookAttemptOutcome } from '../../../workflows/webhook-delivery-types';
import { postWebhook, type WebhookPostResult } from './http';
import { serialiseEnvelope } from '../platform/events';
import { signWebhookBody, standardWebhookSignature } from './signature';
import { SecretUnavailableError, webhookSecretBox } from '../../lib/secret-box';
import { openOperatorCase } from '../platform/operator-cases';
import { openWebhookSecrets } from './secrets';
import { guardedLookup, systemResolver, type HostResolver } from './url';

export const WEBHOOK_USER_AGENT = `pixflow-webhooks/${packageJson.version}`;
/** How much of a receiver's answer is read and kept in the log. */
export const WEBHOOK_RESPONSE_LIMIT_BYTES = 1024;

export interface WebhookDeliverySettings {
  timeoutMs: number;
  /** Seconds before attempts 2, 3, … of a series. */
  retryDelaysSeconds: number[];
  sendSecretHeader: boolean;
  /** https only, public addresses only, checked on the address connected to. */
  requirePublicHttps: boolean;
  /** DNS for deliveries (tests inject one); the system resolver by default. */
  resolve?: HostResolver;
  /** WEBHOOK_SECRET_KEYS, which decrypt the stored secrets; unset: the embedded dev ring. */
  secretKeys?: string;
}

export const DEFAULT_WEBHOOK_DELIVERY_SETTINGS: WebhookDeliverySettings = {
  timeoutMs: 5000,
  retryDelaysSeconds: [60, 600],
  sendSecretHeader: false,
  requirePublicHttps: false,
};

/** Production always enforces the public-address rule, whatever the flag says. */
export function webhookDeliverySettings(
  config: Pick<
    Config,
    | 'WEBHOOK_TIMEOUT_MS'
    | 'WEBHOOK_RETRY_DELAYS_SECONDS'
    | 'WEBHOOK_SEND_SECRET_HEADER'
    | 'WEBHOOK_REQUIRE_PUBLIC_HTTPS'
    | 'WEBHOOK_SECRET_KEYS'
    | 'isProduction'
  >,
): WebhookDeliverySettings {
  return {
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retryDelaysSeconds: config.WEBHOOK_RETRY_DELAYS_SECONDS,
    sendSecretHeader: config.WEBHOOK_SEND_SECRET_HEADER,
    requirePublicHttps: config.isProduction || config.WEBHOOK_REQUIRE_PUBLIC_HTTPS,
    secretKeys: config.WEBHOOK_SECRET_KEYS,
  };
}

export type DeliveryStatus = WebhookDeliveryStatus;

/** What the workflow does next: stop with a final status, or wait and try the next attempt. */
export type AttemptOutcome = WebhookAttemptOutcome;

export class DeliveryNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

type DeliveryRow = DeliveryForAttempt;

type DeliveryDeps = { knex: Knex; logger: Logger; settings?: WebhookDeliverySettings };
/** What an attempt reads: the dependencies and what is derived once from the settings. */
type DeliveryCtx = DeliveryDeps & {
  settings: WebhookDeliverySettings;
  seriesLength: number;
  lookup: ReturnType<typeof guardedLookup>;
  box: ReturnType<typeof webhookSecretBox>;
};

export function createWebhookDelivery(deps: DeliveryDeps) {
  const settings = deps.settings ?? DEFAULT_WEBHOOK_DELIVERY_SETTINGS;
  const ctx: DeliveryCtx = {
    ...deps,
    settings,
    seriesLength: 1 + settings.retryDelaysSeconds.length,
    lookup: guardedLookup(settings.resolve ?? systemResolver, settings.requirePublicHttps),
    box: webhookSecretBox(settings.secretKeys),
  };
  return bindContext(ctx, { attempt });
}

const lastOfSeries = (ctx: DeliveryCtx, d: DeliveryRow): number => d.attempt_limit ?? ctx.seriesLength;

/** After a failed `attempt`: the wait before the next one, or null when the series is over. */
function retryDelay(ctx: DeliveryCtx, d: DeliveryRow, attempt: number): number | null {
  const { seriesLength, settings } = ctx;
  const last = lastOfSeries(ctx, d);
  if (attempt >= last) return null;
  const indexInSeries = attempt - (last - seriesLength); // 1-based
  const delays = settings.retryDelaysSeconds;
  return delays[Math.max(0, indexInSeries - 1)] ?? delays[delays.length - 1] ?? 60;
}

async function cancel(ctx: DeliveryCtx, deliveryId: string, reason: string): Promise<AttemptOutcome> {
  const { knex } = ctx;
  await webhooksStore(knex).finishDelivery(deliveryId, 'CANCELED', reason);
  return { status: 'CANCELED' };
}

/** The envelope bytes, serialised once: rows written before they carried them get them now. */
async function payloadOf(ctx: DeliveryCtx, d: DeliveryForAttempt, event: AttemptContext['event']): Promise<string> {
  const { knex } = ctx;
  if (d.payload !== null) return d.payload;
  const payload = serialiseEnvelope({
    type: event.type,
    data: event.data ?? {},
    timestamp: new Date(event.created_at).toISOString(),
  });
  return webhooksStore(knex).setPayloadOnce(d.id, payload);
}

export async function attempt(ctx: DeliveryCtx, deliveryId: string, attemptNumber: number): Promise<AttemptOutcome> {
  const store = webhooksStore(ctx.knex);
  // One statement reads the delivery, this attempt's log, the webhook and the event
  // (docs/performance.md "Payment to webhook: the timeline").
  const context = await store.attemptContext(deliveryId, attemptNumber);
  if (!context) throw new DeliveryNotFoundError(`webhook delivery ${deliveryId} not found`);
  const { delivery: d, logged, target: webhook, event } = context;
  if (d.status !== 'PENDING') return { status: d.status };

  if (logged) {
    // This attempt ran already (the activity is being retried): do not POST twice.
    if (logged.success) return { status: 'SUCCEEDED' };
    const wait = retryDelay(ctx, d, attemptNumber);
    return wait === null ? { status: 'FAILED' } : { status: 'RETRY', retryInSeconds: wait };
  }
  if (attemptNumber > lastOfSeries(ctx, d)) {
    await store.finishDelivery(deliveryId, 'FAILED');
    return { status: 'FAILED' };
  }

  if (!webhook) return cancel(ctx, deliveryId, 'webhook deleted');
  if (webhook.status !== 'ACTIVE') return cancel(ctx, deliveryId, 'webhook inactive');

  const payload = await payloadOf(ctx, d, event);
  const body = Buffer.from(payload, 'utf8');
  let secrets: ReturnType<typeof openWebhookSecrets>;
  try {
    secrets = openWebhookSecrets(ctx.box, webhook);
  } catch (err) {
    if (err instanceof SecretUnavailableError)
      return park(ctx, { d, url: webhook.url, event, payload, attemptNumber, err });
    throw err;
  }
  const headers = signedHeaders(ctx, deliveryId, secrets, body);

  const result: WebhookPostResult = await postWebhook({
    url: webhook.url,
    body,
    headers,
    timeoutMs: ctx.settings.timeoutMs,
    maxResponseBytes: WEBHOOK_RESPONSE_LIMIT_BYTES,
    lookup: ctx.lookup,
    requirePublicHttps: ctx.settings.requirePublicHttps,
  });
  return recordResult(ctx, { d, webhookUrl: webhook.url, event, payload, attemptNumber, result });
}

/**
 * A secret this worker cannot decrypt: no retry can cure it, so the attempt is logged, the delivery
 * stops FAILED (the reconciler restarts only PENDING ones) and an operator case says which key to
 * restore before redelivering (docs/operations.md "Webhook secret encryption").
 */
async function park(
  ctx: DeliveryCtx,
  p: {
    d: DeliveryRow;
    url: string;
    event: AttemptContext['event'];
    payload: string;
    attemptNumber: number;
    err: SecretUnavailableError;
  },
): Promise<AttemptOutcome> {
  const { knex, logger } = ctx;
  const { d, attemptNumber, err } = p;
  const error = `webhook secret unavailable: ${err.message}`;
  const newlyLogged = await knex.transaction(async (trx) => {
    const logged = await webhooksStore(trx).logAndRecordAttempt({
      deliveryId: d.id,
      webhookId: d.webhook_id,
      merchantId: d.merchant_id,
      event: p.event.type,
      url: p.url,
      payload: p.payload,
      statusCode: null,
      response: null,
      attempt: attemptNumber,
      success: false,
      error,
      durationMs: 0,
      status: 'FAILED',
    });
    if (logged)
      await openOperatorCase(trx, logger, {
        reference: `webhook-secret-unavailable:${d.id}:${attemptNumber}`,
        kind: 'WEBHOOK_SECRET_UNAVAILABLE',
        merchantId: d.merchant_id,
        subjectType: 'webhook_delivery',
        subjectId: d.id,
        reason: `${error}; restore the key to WEBHOOK_SECRET_KEYS, then redeliver`,
        details: { webhookId: d.webhook_id, keyId: err.keyId, attempt: attemptNumber },
      });
    return logged;
  });
  if (newlyLogged) {
    recordWebhookAttempt('secret_unavailable');
    recordWebhookDeliveryFailed();
  }
  return { status: 'FAILED' };
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;

/** The /metrics label of one attempt's outcome. */
function attemptOutcome(success: boolean, result: { statusCode: number | null; error?: string | null }): AttemptMetric {
  if (success) return 'success';
  if (result.statusCode !== null) return 'http_error';
  return /time(d)? ?out/i.test(result.error ?? '') ? 'timeout' : 'network_error';
}

/** The Standard Webhooks headers and the seed's own (docs/api.md "Rotating the secret"). */
function signedHeaders(
  ctx: DeliveryCtx,
  deliveryId: string,
  secrets: ReturnType<typeof openWebhookSecrets>,
  body: Buffer,
): Record<string, string> {
  const { current: secret, previous } = secrets;
  const timestamp = Math.floor(Date.now() / 1000);
  // The seed's header keeps one signature, by the current secret (docs/api.md "Rotating the secret").
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'x-webhook-id': deliveryId,
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': signWebhookBody(secret, body),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardWebhookSignature([secret, ...previous], deliveryId, timestamp, body),
  };
  if (ctx.settings.sendSecretHeader) headers['x-webhook-secret'] = secret;

  return headers;
}

/** Logs the attempt once and tells the workflow what follows: done, failed, or retry after a delay. */
async function recordResult(
  ctx: DeliveryCtx,
  r: {
    d: DeliveryForAttempt;
    webhookUrl: string;
    event: AttemptContext['event'];
    payload: string;
    attemptNumber: number;
    result: WebhookPostResult;
  },
): Promise<AttemptOutcome> {
  const { d, event, payload, attemptNumber, result } = r;
  const deliveryId = d.id;
  const success = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const wait = success ? null : retryDelay(ctx, d, attemptNumber);
  const status: DeliveryStatus = success ? 'SUCCEEDED' : wait === null ? 'FAILED' : 'PENDING';
  const error = success ? null : (result.error ?? `receiver answered ${result.statusCode ?? 'nothing'}`);

  const newlyLogged = await webhooksStore(ctx.knex).logAndRecordAttempt({
    deliveryId,
    webhookId: d.webhook_id,
    merchantId: d.merchant_id,
    event: event.type,
    url: r.webhookUrl,
    payload,
    statusCode: result.statusCode,
    response: result.response,
    attempt: attemptNumber,
    success,
    error,
    durationMs: result.durationMs,
    status,
  });
  // Counted once per attempt: a retried activity finds its attempt logged and counts nothing.
  if (newlyLogged) {
    recordWebhookAttempt(attemptOutcome(success, result));
    if (status === 'FAILED') recordWebhookDeliveryFailed();
    if (success) recordWebhookDelivered((Date.now() - new Date(event.created_at).getTime()) / 1000);
  }
  ctx.logger.info(
    {
      deliveryId,
      webhookId: d.webhook_id,
      attempt: attemptNumber,
      statusCode: result.statusCode,
      success,
      durationMs: result.durationMs,
    },
    'webhook delivery attempt',
  );
  if (status === 'PENDING') return { status: 'RETRY', retryInSeconds: wait as number };
  return { status };
}
