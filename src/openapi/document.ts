/**
 * The OpenAPI 3.1 document of the API (served at GET /openapi.json, rendered at GET /docs),
 * generated from the zod schemas of src/contracts (`z.toJSONSchema`, JSON Schema 2020-12, which
 * OpenAPI 3.1 uses): the request schemas the routes validate with, the response schemas the
 * services' views are typed from, and the webhook events' payloads (the `webhooks` object).
 * The test suite validates every response and webhook body it receives against this document
 * (test/support/openapi-validator.ts).
 *
 * One table below lists every endpoint; error responses follow from how it is guarded
 * (docs/api.md "Errors"): 400 when it takes input, 401/403/503 when authenticated, 404 when it
 * names a resource or belongs to a merchant, 413/415 when it takes a body, 422 when it takes an
 * idempotency key, 429 everywhere.
 */
import { z } from 'zod';
import * as admin from '../contracts/admin';
import * as auth from '../contracts/auth';
import * as charges from '../contracts/charges';
import * as subscriptions from '../contracts/subscriptions';
import { CALLBACK_SIGNATURE_HEADER } from '../acquirer/callback-signature';
import * as common from '../contracts/common';
import * as merchants from '../contracts/merchants';
import * as statement from '../contracts/statement';
import {
  WEBHOOK_EVENT_CATALOGUE,
  WEBHOOK_EVENT_TYPES,
  webhookEnvelope,
  type WebhookEventType,
} from '../contracts/webhook-events';
import * as withdrawals from '../contracts/withdrawals';
import * as webhooks from '../contracts/webhooks';
import * as infractions from '../contracts/infractions';
import { DEFENSE_MAX_FILES, DEFENSE_TEXT_MAX } from '../contracts/infractions';
import { DEFENSE_FILE_TYPES } from '../contracts/statuses';
import * as access from '../contracts/admin-access';
import { idempotencyKeyHeader } from '../contracts/validation';

type Auth = 'none' | 'any' | 'jwt' | 'admin' | 'acquirer';
type Method = 'get' | 'post' | 'patch' | 'delete';

/**
 * The document's tags, each with the description linters ask for (Redocly's and Spectral's
 * `tag-description`, docs/testing.md "The document passes the linters"); an endpoint's tag must be one of them.
 */
const TAGS = {
  Auth: 'Log in with e-mail and password for a login token (JWT).',
  'API keys': 'Long-lived credentials for server-to-server calls; created and deleted with a login token.',
  Charges: 'PIX charges with their BR Code and QR Code: create, list, cancel and refund.',
  Merchant: 'The caller’s merchant: its profile and its balance.',
  Withdrawals: 'Transfers of the available balance to a PIX key, debited at once and settled by the acquirer.',
  Infractions:
    'MED infractions raised on the merchant’s payments: their deadline and status, and the defense with its files.',
  Webhooks: 'Where the merchant’s events are delivered: registration, delivery logs, redelivery and secret rotation.',
  Operator: 'Administration of merchants, PIX keys, users and the ledger, for operators (an ADMIN login token).',
  Sandbox: 'Drive the embedded acquirer simulator (outside production) to pay, settle and dispute as a bank would.',
  'Acquirer callbacks': 'Signed notifications the acquirer sends pixflow; merchants never call these.',
  Operations: 'Health, readiness, metrics and this document, for load balancers, monitoring and tooling.',
  'Webhook events': 'What pixflow POSTs to a registered webhook: one operation per event, signed with its secret.',
} as const;
type Tag = keyof typeof TAGS;

interface Endpoint {
  method: Method;
  path: string;
  tag: Exclude<Tag, 'Webhook events'>;
  summary: string;
  /** What the summary leaves out: what happens, what follows, which refusal means what. */
  description: string;
  auth: Auth;
  body?: z.ZodType;
  /** A `multipart/form-data` body: its JSON Schema, and how each part is encoded. */
  multipart?: { schema: Record<string, unknown>; encoding?: Record<string, { contentType: string }> };
  query?: z.ZodObject;
  headers?: Array<{ name: string; description: string; schema: z.ZodType; required?: boolean }>;
  responses: Record<number, ResponseSpec>;
}

interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** The body's media type when it is not JSON (`schema` is then of the body as text). */
  mediaType?: string;
  /** Named examples of the body (OpenAPI `examples`). */
  examples?: Record<string, { summary: string; value: unknown }>;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
  /** Non-JSON bodies: each media type answered, as raw bytes. */
  binary?: readonly string[];
}

const idempotencyHeader = {
  name: 'x-idempotency-key',
  description:
    'Replays the original answer for a repeated key (unique per merchant), marked Idempotent-Replayed: true; another body under the key is 422',
  schema: idempotencyKeyHeader,
};
/** On charges a used key replays whatever the body, as the API contract says (docs/api.md "Idempotency"). */
const chargeIdempotencyHeader = {
  ...idempotencyHeader,
  description:
    'Replays the original charge for a key the merchant already used (unique per merchant), whatever the body, marked Idempotent-Replayed: true',
};
const replayedHeader = {
  'Idempotent-Replayed': {
    description: 'Present, `true`, on a replay only',
    schema: { type: 'string', enum: ['true'] },
  },
};
/** A second POST with the key of the first and another body: the first charge, unchanged. */
export const CHARGE_REPLAY_EXAMPLE = {
  summary: 'The key again, with another description: the original charge',
  value: {
    charge: {
      id: 'ch_01JD8Z6Q3V5W7X9Y1Z2A3B4C5D',
      type: 'IMMEDIATE',
      txid: 'pixflow01jd8z6q3v5w7x9y1z2a3b4c',
      qrCode:
        '00020101021226830014br.gov.bcb.pix2561pix.example.com/qr/v2/cobv/9d36b84f5204000053039865802BR5913Loja Exemplo6009SAO PAULO62070503***6304ABCD',
      amount: 2990,
      status: 'PENDING',
      expiresIn: 86400,
      customer: null,
      createdAt: '2026-11-30T12:00:00.000Z',
    },
    idempotent: true,
  },
};
/** Routes that decrypt a webhook's secret (docs/operations.md "Webhook secret encryption"). */
const secretUnavailableResponse: ResponseSpec = {
  description:
    'The database is unreachable (service_unavailable, with Retry-After), or a webhook secret is encrypted under a key this server lacks (webhook_secret_unavailable, naming the key)',
  schema: common.errorBody,
};
/** The same key under the name integrators send elsewhere (docs/api.md "Idempotency"). */
const standardIdempotencyHeader = {
  name: 'Idempotency-Key',
  description: 'Accepted as well as x-idempotency-key (both at once must agree)',
  schema: idempotencyKeyHeader,
};

/**
 * What each sandbox action makes the simulator do (docs/api.md "Sandbox"): it calls pixflow's real
 * signed callback, so the change takes the path a real acquirer's would.
 */
const SANDBOX_TRANSFER_OUTCOMES = {
  complete:
    'the transfer completes and the signed transfer callback says so: the withdrawal is COMPLETED (`withdraw.completed`)',
  fail: 'the acquirer rejects the transfer (with `reason` when given) by its signed callback: the withdrawal is FAILED and its amount back in available (`withdraw.failed`)',
  return:
    'the destination bank returns the completed transfer (with `reason` when given), said by the signed callback: the withdrawal is REFUNDED and its amount back in available (`withdraw.refunded`)',
} as const;
const SANDBOX_PIX_KEY_ACTIONS = {
  activate:
    'the acquirer sets the key ATIVA and says so by its signed callback: the key is ACTIVE (`pixkey.updated`). Waits up to 5 s for the key to be registered (then 400: try again); an INACTIVE key is 400, as the acquirer never revives one (an operator can, with PATCH)',
  deactivate:
    'the acquirer sets the key INATIVA and says so by its signed callback: the key is INACTIVE (`pixkey.updated`). Waits up to 5 s for the key to be registered (then 400: try again)',
} as const;
const SANDBOX_INFRACTION_OUTCOMES = {
  accept:
    'the acquirer accepts the infraction and says so by its signed callback (`infraction.updated`); the payment then goes back to the payer and the infraction ends REFUNDED (`infraction.refund_completed`). 400 once it is decided',
  reject:
    'the acquirer rejects the infraction and says so by its signed callback: the blocked amount is back in available (`infraction.updated`). 400 once it is decided',
} as const;
const SANDBOX_SUBSCRIPTION_EFFECTS = {
  approve:
    'the payer approves the recorrência and the acquirer says so by its signed rec callback: the subscription becomes ACTIVE (`subscription.approved`)',
  refuse: 'the payer refuses the recorrência: the subscription ends REFUSED',
  cancel:
    'the payer cancels the recorrência (and its open cobr): the subscription ends CANCELED (`subscription.canceled`)',
  'fail-debits':
    'the payer’s bank refuses the next `times` debits (default 1): each is retried as the retry policy allows, else `subscription.charge.failed`',
} as const;
const sandboxDescription = (effect: string, resource: string): string =>
  `Only while the acquirer is the embedded simulator (the sandbox): ${effect}. Another merchant's ${resource} is 404.`;

export const ENDPOINTS: Endpoint[] = [
  {
    method: 'post',
    path: '/v1/auth/login',
    tag: 'Auth',
    summary: 'Log in (JWT)',
    description:
      "Exchanges a user's e-mail and password for a login token (HS256 JWT, valid for JWT_TTL, one hour by default), sent as `Authorization: Bearer <token>`. A wrong password and an unknown e-mail get the same 401. Failed logins are counted per account and per address: past the limit the answer is 429 with Retry-After, even for the right password, until the window ends.",
    auth: 'none',
    body: auth.loginBody,
    responses: {
      200: { description: 'Logged in', schema: auth.loginResponse },
      401: {
        description: 'Invalid e-mail or password (the same answer for an unknown e-mail)',
        schema: common.errorBody,
      },
      403: { description: 'The merchant is suspended or the user disabled', schema: common.errorBody },
    },
  },
  {
    method: 'post',
    path: '/v1/api-keys',
    tag: 'API keys',
    summary: 'Create an API key (value shown once)',
    description:
      'Creates an API key for server-to-server calls. Its value (`pixflow_` and 40 base62 characters) is in this answer only: store it now. Needs a login token (an API key here is 403); at most MAX_API_KEYS_PER_MERCHANT (50) keys per merchant.',
    auth: 'jwt',
    body: auth.createApiKeyBody,
    responses: { 201: { description: 'Created', schema: auth.apiKeyCreatedResponse } },
  },
  {
    method: 'get',
    path: '/v1/api-keys',
    tag: 'API keys',
    summary: 'List API keys (values masked)',
    description:
      "The merchant's API keys, newest first, each value masked (its prefix, asterisks and last four characters), with when it was last used.",
    auth: 'any',
    responses: { 200: { description: 'The keys', schema: auth.apiKeyListResponse } },
  },
  {
    method: 'delete',
    path: '/v1/api-keys/:id',
    tag: 'API keys',
    summary: 'Delete an API key (401 on its next use)',
    description:
      'Deletes an API key: every API process refuses it (401) from the very next request. Needs a login token.',
    auth: 'jwt',
    responses: { 200: { description: 'Deleted', schema: common.messageBody } },
  },

  {
    method: 'post',
    path: '/v1/charges',
    tag: 'Charges',
    summary: 'Create a PIX charge with its QR Code',
    description:
      'Creates a PIX charge at the acquirer and answers with its `txid`, the BR Code (`qrCode`, the copia-e-cola) and the QR image (`imageBase64`). `amount` is integer cents, `expiresIn` seconds (86400 by default). With `dueDate` (and `payer`) it is a DUE_DATE charge, a BCB cobv with optional `fine`, `interest`, `discount`, `abatement` and `validityAfterDue`, payable until the end of validity; `expiresIn` is then refused. Needs approved KYC, an ACTIVE merchant, an acquirer account and an ACTIVE PIX key (403 names each one missing). A key already used replays the original charge (200), whatever the body. When the acquirer fails the charge is kept FAILED and the answer is 502. `charge.paid` follows the payment.',
    auth: 'any',
    body: charges.createAnyChargeBody,
    headers: [chargeIdempotencyHeader, standardIdempotencyHeader],
    responses: {
      201: { description: 'Created', schema: charges.chargeCreatedResponse },
      200: {
        description: 'Replay of the charge created with this idempotency key, whatever the body of this request',
        schema: charges.chargeReplayedResponse,
        examples: { replay: CHARGE_REPLAY_EXAMPLE },
        headers: replayedHeader,
      },
      409: { description: 'The first request with this key is still in flight', schema: common.errorBody },
      422: { description: 'Invalid payer document', schema: common.errorBody },
      502: { description: 'The acquirer failed; the charge is kept FAILED', schema: common.errorBody },
    },
  },
  {
    method: 'post',
    path: '/v1/subscriptions',
    tag: 'Charges',
    summary: 'Create a subscription (Pix Automático) with its authorisation QR',
    description:
      'Creates the recurrence at the acquirer (`locrec`, `rec`) and answers PENDING_APPROVAL with the authorisation BR Code (`qrCode`) and its image. `amount` (fixed) or `maxAmount` (variable), cents; `firstDate` at least 3 days ahead. The payer approves in their bank (`subscription.approved`); each cycle is then a RECURRING charge. A key already used replays the subscription (200).',
    auth: 'any',
    body: subscriptions.createSubscriptionBody,
    headers: [chargeIdempotencyHeader, standardIdempotencyHeader],
    responses: {
      201: { description: 'Created', schema: subscriptions.subscriptionCreatedResponse },
      200: {
        description: 'Replay of the subscription created with this key',
        schema: subscriptions.subscriptionReplayedResponse,
      },
      422: { description: 'Invalid payer document', schema: common.errorBody },
      502: { description: 'The acquirer refused the recurrence', schema: common.errorBody },
    },
  },
  {
    method: 'get',
    path: '/v1/subscriptions',
    tag: 'Charges',
    summary: 'List subscriptions, newest first',
    description: "A page of the merchant's subscriptions, newest first, optionally of one `status`.",
    auth: 'any',
    query: subscriptions.listSubscriptionsQuery,
    responses: { 200: { description: 'A page of subscriptions', schema: subscriptions.subscriptionListResponse } },
  },
  {
    method: 'get',
    path: '/v1/subscriptions/:id',
    tag: 'Charges',
    summary: 'Get a subscription with its cycles',
    description: "One of the caller's subscriptions with every cycle so far; another merchant's id is 404.",
    auth: 'any',
    responses: { 200: { description: 'The subscription', schema: subscriptions.subscriptionDetailResponse } },
  },
  {
    method: 'post',
    path: '/v1/subscriptions/:id/cancel',
    tag: 'Charges',
    summary: 'Cancel a subscription',
    description:
      'PENDING_APPROVAL or ACTIVE becomes CANCELED at once (`subscription.canceled`); the recurrence and any open cycle are cancelled at the acquirer. Other states are 400.',
    auth: 'any',
    responses: { 200: { description: 'Canceled', schema: subscriptions.subscriptionDetailResponse } },
  },
  {
    method: 'post',
    path: '/v1/subscriptions/:id/cycles/:number/amount',
    tag: 'Charges',
    summary: 'Set the amount of a variable subscription’s cycle',
    description:
      'For a variable subscription (`maxAmount`): what cycle `number` charges, in cents, at most `maxAmount`. Set it, or change it, until the cycle’s cobr is created 3 days before its date; the cycle shows SCHEDULED meanwhile. A variable cycle with no amount set by then is SKIPPED: nothing is charged. A fixed subscription, an ended one, an amount over `maxAmount` or a cycle after `endDate` is 400; a cycle whose cobr exists (or that was skipped) is 409.',
    auth: 'any',
    body: subscriptions.setCycleAmountBody,
    responses: {
      200: { description: 'The subscription with its cycles', schema: subscriptions.subscriptionDetailResponse },
      409: { description: 'The cycle’s cobr exists or the cycle was skipped', schema: common.errorBody },
    },
  },
  {
    method: 'get',
    path: '/v1/charges',
    tag: 'Charges',
    summary: 'List charges, newest first',
    description:
      "A page of the merchant's charges, newest first, optionally of one `status` and one `type`. An answer may be up to 3 seconds old; the merchant's own writes refresh it.",
    auth: 'any',
    query: charges.listChargesQuery,
    responses: { 200: { description: 'A page of charges', schema: charges.chargeListResponse } },
  },
  {
    method: 'post',
    path: '/v1/charges/batch',
    tag: 'Charges',
    summary: 'Create up to 1,000 due-date charges at once',
    description:
      'Each item is a due-date charge body (as `POST /v1/charges` with `dueDate`), sent to the acquirer as one lotecobv. Every item is accepted or refused on its own with its `index` and `{message, code}`: an invalid item never refuses the others, so the answer is 201 whenever the batch was recorded. 400 only for the envelope (no `items`, more than 1,000). One idempotency key covers the batch: used again it replays the batch (200).',
    auth: 'any',
    body: charges.createChargeBatchBody,
    headers: [chargeIdempotencyHeader, standardIdempotencyHeader],
    responses: {
      201: { description: 'The batch, with each item accepted or refused', schema: charges.chargeBatchResponse },
      200: {
        description: 'Replay of the batch created with this idempotency key',
        schema: charges.chargeBatchReplayedResponse,
        headers: replayedHeader,
      },
      409: { description: 'The first request with this key is still in flight', schema: common.errorBody },
    },
  },
  {
    method: 'get',
    path: '/v1/charge-batches/:id',
    tag: 'Charges',
    summary: 'Get a charge batch and its items',
    description: "One of the caller's batches with each item's outcome; another merchant's id is 404.",
    auth: 'any',
    responses: { 200: { description: 'The batch', schema: charges.chargeBatchResponse } },
  },
  {
    method: 'get',
    path: '/v1/charges/:id',
    tag: 'Charges',
    summary: 'Get a charge',
    description: "One of the caller's charges; another merchant's id is 404, as an unknown one.",
    auth: 'any',
    responses: { 200: { description: 'The charge', schema: charges.chargeResponse } },
  },
  {
    method: 'post',
    path: '/v1/charges/:id/cancel',
    tag: 'Charges',
    summary: 'Cancel a PENDING charge',
    description:
      'Cancels a PENDING charge at once; a charge in any other status is 400. A PENDING charge also becomes CANCELED on its own once `expiresIn` passes unpaid.',
    auth: 'any',
    responses: { 200: { description: 'Canceled', schema: charges.chargeResponse } },
  },
  {
    method: 'post',
    path: '/v1/charges/:id/refund',
    tag: 'Charges',
    summary: 'Refund a PAID charge (full by default)',
    description:
      "Asks the acquirer to return a PAID charge's payment to the payer: what is left of it by default, or `amount` cents. The money is taken from available first, then pending (400 when they do not cover it). `charge.refunded` follows on the acquirer's confirmation, and the charge is REFUNDED once fully refunded. The same idempotency key with another body is 422.",
    auth: 'any',
    body: charges.refundChargeBody,
    headers: [idempotencyHeader, standardIdempotencyHeader],
    responses: {
      202: { description: 'Refund requested', schema: charges.refundRequestedResponse },
      200: {
        description: 'Replay of the refund requested with this idempotency key',
        schema: charges.refundReplayedResponse,
      },
      409: { description: 'The first request with this key is still in flight', schema: common.errorBody },
    },
  },

  {
    method: 'get',
    path: '/v1/merchants/me',
    tag: 'Merchant',
    summary: 'The caller’s merchant profile',
    description: 'The merchant the credential belongs to: its status, KYC status, fees and settlement delay.',
    auth: 'any',
    responses: { 200: { description: 'Profile', schema: merchants.merchantMeResponse } },
  },
  {
    method: 'get',
    path: '/v1/merchants/me/balance',
    tag: 'Merchant',
    summary: 'Balance (cents)',
    description:
      "The merchant's balance in cents, read from the ledger on every request: `available` (can be withdrawn), `pending` (paid, until the settlement delay passes), `blocked` (held under MED infractions) and their `total`.",
    auth: 'any',
    responses: { 200: { description: 'Balance', schema: merchants.balanceResponse } },
  },
  {
    method: 'get',
    path: '/v1/merchants/me/statement',
    tag: 'Merchant',
    summary: 'Statement: ledger movements with running balances',
    description:
      'The merchant’s movements of a range of days (America/Sao_Paulo; `to` inclusive; at most 366 days; default the last 30), oldest first, each with the balances after it, read from the ledger: for each balance `opening` + Σ `amount`s of the lines that move it = `closing`, and with `to` today `closing` is the balance of GET /v1/merchants/me/balance. Paged as the other lists (docs/api.md "Pagination limits"); the whole range at once is GET /v1/merchants/me/statement.csv.',
    auth: 'any',
    query: statement.statementQuery,
    responses: {
      200: { description: 'One page of the range, with its opening and closing', schema: statement.statementResponse },
      400: {
        description:
          'A date that is not YYYY-MM-DD or does not exist, `from` after `to`, a range over 366 days, or a page too deep',
        schema: common.errorBody,
      },
    },
  },
  {
    method: 'get',
    path: '/v1/merchants/me/statement.csv',
    tag: 'Merchant',
    summary: 'Statement of a whole range as CSV',
    description:
      'The lines of GET /v1/merchants/me/statement for the whole range, as RFC 4180 CSV with a header row (CRLF line ends; amounts both in reais with two decimals and in cents), streamed as the database reads them, with `Content-Disposition: attachment`. Columns: ' +
      statement.STATEMENT_CSV_COLUMNS.join(', ') +
      '.',
    auth: 'any',
    query: statement.statementCsvQuery,
    responses: {
      200: {
        description: 'The CSV',
        mediaType: 'text/csv',
        schema: z.string(),
        headers: {
          'Content-Disposition': {
            description: 'attachment; filename="statement-<from>-<to>.csv"',
            schema: { type: 'string' },
          },
        },
      },
      400: {
        description: 'A date that is not YYYY-MM-DD or does not exist, `from` after `to`, or a range over 366 days',
        schema: common.errorBody,
      },
    },
  },
  {
    method: 'post',
    path: '/v1/merchants/me/withdrawals',
    tag: 'Withdrawals',
    summary: 'Withdraw available balance to a PIX key',
    description:
      'Transfers available balance (at least 100 cents) to a PIX key: the amount is debited at once and the answer is PROCESSING with the balance after the debit. The outcome arrives as `withdraw.completed`, or `withdraw.failed` with the balance restored; a completed transfer the destination bank returns becomes `withdraw.refunded`, balance restored. An unmet prerequisite, too little balance or a key that does not match its type is 400; the same idempotency key with another body is 422.',
    auth: 'any',
    body: withdrawals.createWithdrawalBody,
    headers: [idempotencyHeader, standardIdempotencyHeader],
    responses: {
      201: {
        description: 'Requested: debited at once, status PROCESSING',
        schema: withdrawals.createWithdrawalResponse,
      },
      200: {
        description: 'Replay of the withdrawal requested with this idempotency key',
        schema: withdrawals.createWithdrawalResponse,
      },
      409: { description: 'The first request with this key is still in flight', schema: common.errorBody },
    },
  },
  {
    method: 'get',
    path: '/v1/merchants/me/withdrawals',
    tag: 'Withdrawals',
    summary: 'List withdrawals, newest first',
    description: "A page of the merchant's withdrawals, newest first, each with its status and destination PIX key.",
    auth: 'any',
    query: withdrawals.listWithdrawalsQuery,
    responses: { 200: { description: 'A page of withdrawals', schema: withdrawals.listWithdrawalsResponse } },
  },
  {
    method: 'get',
    path: '/v1/merchants/me/withdrawals/:id',
    tag: 'Withdrawals',
    summary: 'Get a withdrawal',
    description: "One of the caller's withdrawals; another merchant's id is 404, as an unknown one.",
    auth: 'any',
    responses: { 200: { description: 'The withdrawal', schema: withdrawals.getWithdrawalResponse } },
  },

  {
    method: 'post',
    path: '/v1/webhooks/merchant',
    tag: 'Webhooks',
    summary: 'Register a webhook (secret shown once)',
    description:
      'Registers a URL to receive the events in `events` (empty or left out: every event), each POSTed signed with the secret in this answer (`whsec_…`, shown only here and on rotation). In production the URL must be https and resolve only to public addresses. At most MAX_WEBHOOKS_PER_MERCHANT (20) per merchant.',
    auth: 'any',
    body: webhooks.createWebhookBody,
    responses: { 201: { description: 'Registered', schema: webhooks.createWebhookResponse } },
  },
  {
    method: 'get',
    path: '/v1/webhooks/merchant',
    tag: 'Webhooks',
    summary: 'List webhooks with their last 20 delivery logs',
    description:
      "The merchant's webhooks, newest first, secrets masked, each with the logs of its 20 newest delivery attempts (status code, answer, error).",
    auth: 'any',
    responses: {
      200: { description: 'The webhooks', schema: webhooks.listWebhooksResponse },
      503: secretUnavailableResponse,
    },
  },
  {
    method: 'get',
    path: '/v1/webhooks/merchant/events',
    tag: 'Webhooks',
    summary: 'The event catalogue',
    description:
      'The events a webhook can subscribe to, each with its category and description (in Portuguese). What each one delivers is under `webhooks` in this document.',
    auth: 'any',
    responses: { 200: { description: 'Events', schema: webhooks.webhookEventsResponse } },
  },
  {
    method: 'patch',
    path: '/v1/webhooks/merchant/:id',
    tag: 'Webhooks',
    summary: 'Change a webhook (only the fields sent)',
    description:
      'Changes only the fields sent: `name: null` removes the name, `events: []` subscribes to every event, `status: INACTIVE` pauses deliveries (those pending are canceled at their next attempt). The answer carries no secret.',
    auth: 'any',
    body: webhooks.updateWebhookBody,
    responses: { 200: { description: 'Changed', schema: webhooks.updateWebhookResponse } },
  },
  {
    method: 'delete',
    path: '/v1/webhooks/merchant/:id',
    tag: 'Webhooks',
    summary: 'Delete a webhook (deliveries stop at once)',
    description: 'Deletes a webhook and cancels its pending deliveries at once.',
    auth: 'any',
    responses: { 200: { description: 'Deleted', schema: common.messageBody } },
  },
  {
    method: 'get',
    path: '/v1/webhooks/merchant/:id/deliveries',
    tag: 'Webhooks',
    summary: 'A webhook’s deliveries, newest first',
    description:
      "A page of one webhook's deliveries, newest first: one per event, with its status (PENDING, SUCCEEDED, FAILED or CANCELED), attempts and last answer or error.",
    auth: 'any',
    query: webhooks.deliveriesQuery,
    responses: { 200: { description: 'A page of deliveries', schema: webhooks.listDeliveriesResponse } },
  },
  {
    method: 'post',
    path: '/v1/webhooks/merchant/:id/deliveries/:deliveryId/redeliver',
    tag: 'Webhooks',
    summary: 'Send a finished delivery again (a new series of attempts)',
    description:
      'Sends a SUCCEEDED, FAILED or CANCELED delivery again as a new series of attempts with the same delivery id, so receivers can drop it as a repeat. 409 while it is still being delivered; 400 when the webhook is INACTIVE.',
    auth: 'any',
    responses: {
      202: { description: 'Redelivering', schema: webhooks.redeliverResponse },
      409: { description: 'The delivery is still in progress', schema: common.errorBody },
    },
  },
  {
    method: 'post',
    path: '/v1/webhooks/merchant/:id/rotate-secret',
    tag: 'Webhooks',
    summary: 'A new secret, from the next attempt (shown once); the old one signs too during the overlap',
    description:
      'Issues a new signing secret, shown in this answer only and used from the next attempt on. Until `previousSecretExpiresAt` (WEBHOOK_SECRET_OVERLAP_SECONDS, 24 hours by default) `webhook-signature` carries a signature by each secret, so the new one can be deployed at any time in the overlap; `x-webhook-signature` uses the new secret only.',
    auth: 'any',
    responses: {
      200: { description: 'Rotated', schema: webhooks.rotateSecretResponse },
      503: secretUnavailableResponse,
    },
  },

  {
    method: 'post',
    path: '/v1/admin/merchants',
    tag: 'Operator',
    summary: 'Create a merchant and its user',
    description:
      'Creates a merchant and its first user, who logs in with the e-mail and password given. Operators only; written to the audit log.',
    auth: 'admin',
    body: admin.createMerchantBody,
    responses: {
      201: { description: 'Created', schema: merchants.merchantCreatedResponse },
      409: { description: 'E-mail or document taken', schema: common.errorBody },
    },
  },
  {
    method: 'get',
    path: '/v1/admin/merchants',
    tag: 'Operator',
    summary: 'List merchants',
    description: 'A page of every merchant, newest first. Operators only.',
    auth: 'admin',
    query: admin.listMerchantsQuery,
    responses: { 200: { description: 'A page of merchants', schema: merchants.merchantListResponse } },
  },
  {
    method: 'get',
    path: '/v1/admin/merchants/:id',
    tag: 'Operator',
    summary: 'Get a merchant',
    description: 'Any merchant by id, with its KYC status, acquirer account and fees. Operators only.',
    auth: 'admin',
    responses: { 200: { description: 'The merchant', schema: merchants.merchantResponse } },
  },
  {
    method: 'patch',
    path: '/v1/admin/merchants/:id',
    tag: 'Operator',
    summary: 'KYC, status, acquirer account, fees',
    description:
      "Changes the fields sent: KYC status, status (SUSPENDED refuses the merchant's keys and users with 403 from the next request), acquirer account, fees and settlement delay. Operators only; written to the audit log.",
    auth: 'admin',
    body: admin.updateMerchantBody,
    responses: { 200: { description: 'Changed', schema: merchants.merchantResponse } },
  },
  {
    method: 'post',
    path: '/v1/admin/merchants/:id/pix-keys',
    tag: 'Operator',
    summary: 'Register a PIX key',
    description:
      'Registers a PIX key of the merchant at the acquirer; it stays PENDING until the acquirer activates it (`pixkey.updated`). A key already registered is 409. Operators only.',
    auth: 'admin',
    body: admin.addPixKeyBody,
    responses: {
      201: { description: 'Registered (PENDING)', schema: merchants.pixKeyResponse },
      409: { description: 'The PIX key is already registered', schema: common.errorBody },
    },
  },
  {
    method: 'patch',
    path: '/v1/admin/merchants/:id/pix-keys/:keyId',
    tag: 'Operator',
    summary: 'Set a PIX key’s status',
    description:
      "Sets a PIX key's status by hand (PENDING, ACTIVE or INACTIVE); a merchant creates charges only while it has an ACTIVE key. Operators only; written to the audit log.",
    auth: 'admin',
    body: admin.updatePixKeyBody,
    responses: { 200: { description: 'Changed', schema: merchants.pixKeyResponse } },
  },
  {
    method: 'post',
    path: '/v1/admin/merchants/:id/adjustments',
    tag: 'Operator',
    summary: 'Signed ledger adjustment of available',
    description:
      "Posts a signed amount of cents to the merchant's available balance as a ledger adjustment with its reason; one that would take available below zero is 400. The same idempotency key replays the first answer (200); with another body it is 422. Operators only; written to the audit log.",
    auth: 'admin',
    body: admin.adjustmentBody,
    headers: [idempotencyHeader, standardIdempotencyHeader],
    responses: {
      201: { description: 'Posted', schema: admin.adjustmentResponse },
      200: {
        description: 'Replay of the adjustment posted with this idempotency key',
        schema: admin.adjustmentResponse,
      },
    },
  },
  {
    method: 'get',
    path: '/v1/admin/merchants/:id/users',
    tag: 'Operator',
    summary: 'A merchant’s users',
    description:
      "The merchant's users with their role, status and token version: where to find the id of a user to disable or whose tokens to revoke. Operators only.",
    auth: 'admin',
    responses: { 200: { description: 'The users', schema: access.merchantUsersResponse } },
  },
  {
    method: 'post',
    path: '/v1/admin/merchants/:id/revoke-tokens',
    tag: 'Operator',
    summary: 'Revoke every login token of a merchant’s users',
    description:
      "Bumps the token version of each of the merchant's users: every login token issued to them so far is 401 from the next request. API keys keep working. Operators only; written to the audit log.",
    auth: 'admin',
    responses: { 200: { description: 'Revoked', schema: access.merchantTokensRevokedResponse } },
  },
  {
    method: 'post',
    path: '/v1/admin/users/:id/revoke-tokens',
    tag: 'Operator',
    summary: 'Revoke a user’s login tokens',
    description:
      "Bumps the user's token version: every login token issued so far is 401 from the next request. Operators only; written to the audit log.",
    auth: 'admin',
    responses: { 200: { description: 'Revoked', schema: access.userAccessResponse } },
  },
  {
    method: 'patch',
    path: '/v1/admin/users/:id',
    tag: 'Operator',
    summary: 'Enable or disable a user',
    description:
      'DISABLED refuses the user with 403 on every route and revokes its login tokens; ACTIVE restores access. Operators only; written to the audit log.',
    auth: 'admin',
    body: access.updateUserBody,
    responses: { 200: { description: 'Changed', schema: access.userAccessResponse } },
  },
  {
    method: 'get',
    path: '/v1/admin/audit-log',
    tag: 'Operator',
    summary: 'The audit log',
    description:
      'A page of the audit log, newest first: every operator action, from this API and from the ops CLI, optionally for one target (`targetType`, `targetId`). Operators only.',
    auth: 'admin',
    query: admin.auditLogQuery,
    responses: { 200: { description: 'A page of entries', schema: admin.auditLogResponse } },
  },

  {
    method: 'get',
    path: '/v1/infractions',
    tag: 'Infractions',
    summary: 'List the merchant’s MED infractions, newest first',
    description:
      'The MED infractions on the caller’s payments, each with its defense deadline, the amount blocked and refunded, the acquirer’s analysis (`analysisResult`: AGREED or DISAGREED once decided) and its defense. `status` filters by one infraction status.',
    auth: 'any',
    query: infractions.listInfractionsQuery,
    responses: { 200: { description: 'A page of infractions', schema: infractions.listInfractionsResponse } },
  },
  {
    method: 'get',
    path: '/v1/infractions/:id',
    tag: 'Infractions',
    summary: 'One MED infraction with its defense',
    description: 'Another merchant’s infraction is 404, as an unknown id.',
    auth: 'any',
    responses: { 200: { description: 'The infraction', schema: infractions.getInfractionResponse } },
  },
  {
    method: 'post',
    path: '/v1/infractions/:id/defenses',
    tag: 'Infractions',
    summary: 'Defend the payment: text and up to 5 files (multipart/form-data)',
    description:
      'One defense per infraction, before its `defenseDeadline` and while the acquirer has not decided. `defense` is 1–1,000 characters; `files` (repeat the part, at most 5) are PDF, PNG or JPEG — recognised by their content, not their name — 10 MB in all. The defense starts PENDING and becomes DEFENDED once the acquirer has it (REFUSED if it would not take it); the acquirer’s analysis arrives as the `infraction.updated` webhook: AGREED → the payment is returned to the payer (the MED refund), DISAGREED → the blocked amount is released.',
    auth: 'any',
    multipart: {
      schema: {
        type: 'object',
        required: ['defense'],
        properties: {
          defense: { type: 'string', minLength: 1, maxLength: DEFENSE_TEXT_MAX },
          files: {
            type: 'array',
            maxItems: DEFENSE_MAX_FILES,
            items: { type: 'string', format: 'binary' },
            description: 'PDF, PNG or JPEG; 10 MB for all files together',
          },
        },
      },
      encoding: { files: { contentType: DEFENSE_FILE_TYPES.join(', ') } },
    },
    responses: {
      201: { description: 'Stored; on its way to the acquirer', schema: infractions.createDefenseResponse },
      400: {
        description:
          'The text is missing, blank or over 1,000 characters, more than 5 files, an empty file, or not multipart/form-data',
        schema: common.errorBody,
      },
      413: { description: 'The files are over 10 MB in all', schema: common.errorBody },
      415: {
        description: 'A file is not a PDF, PNG or JPEG (unsupported_file_type), or the body has a Content-Encoding',
        schema: common.errorBody,
      },
      422: {
        description:
          'The infraction takes no defense: already analysed (infraction_closed), past its deadline (defense_deadline_passed) or already defended (defense_already_submitted)',
        schema: common.errorBody,
      },
    },
  },
  {
    method: 'get',
    path: '/v1/infractions/:id/defenses/:defenseId/files/:fileId',
    tag: 'Infractions',
    summary: 'Download a file of the merchant’s defense',
    description:
      'The bytes as they were sent, with their type and `Content-Disposition: attachment`. Another merchant’s file is 404.',
    auth: 'any',
    responses: { 200: { description: 'The file', binary: DEFENSE_FILE_TYPES } },
  },

  {
    method: 'post',
    path: '/v1/sandbox/charges/:id/pay',
    tag: 'Sandbox',
    summary: 'Pay a charge through the simulator (sandbox only)',
    description: sandboxDescription(
      'the simulator pays the charge (as `payer` when given) and calls the signed payment callback; the payment takes the real path to the ledger and `charge.paid`',
      'charge',
    ),
    auth: 'any',
    body: charges.sandboxPayBody,
    responses: { 202: { description: 'Payment sent', schema: charges.sandboxPaidResponse } },
  },
  ...(['complete', 'fail', 'return'] as const).map((action): Endpoint => ({
    method: 'post',
    path: `/v1/sandbox/withdrawals/:id/${action}`,
    tag: 'Sandbox',
    summary: `The simulator’s transfer outcome: ${action} (sandbox only)`,
    description: sandboxDescription(SANDBOX_TRANSFER_OUTCOMES[action], 'withdrawal'),
    auth: 'any',
    body: withdrawals.sandboxTransferOutcomeBody,
    responses: { 202: { description: 'Outcome sent', schema: withdrawals.sandboxTransferResponse } },
  })),
  ...(['activate', 'deactivate'] as const).map((action): Endpoint => ({
    method: 'post',
    path: `/v1/sandbox/pix-keys/:id/${action}`,
    tag: 'Sandbox',
    summary: `The simulator announces the merchant’s PIX key ${action === 'activate' ? 'ATIVA' : 'INATIVA'} by its callback (sandbox only)`,
    description: sandboxDescription(SANDBOX_PIX_KEY_ACTIONS[action], 'PIX key'),
    auth: 'any',
    responses: {
      202: { description: 'Sent; the status follows by callback', schema: merchants.sandboxPixKeyResponse },
    },
  })),
  {
    method: 'post',
    path: '/v1/sandbox/infractions',
    tag: 'Sandbox',
    summary: 'The simulator raises a MED infraction on a paid charge (sandbox only)',
    description: sandboxDescription(
      'the acquirer raises a MED infraction on a paid charge and says so by its signed callback, which blocks the amount and sends `infraction.received`; a charge without a payment is 400. `analysisResult` scripts the acquirer’s answer to the merchant’s defense: once the defense reaches it, it decides AGREED (accepted: the MED refund follows) or DISAGREED (rejected: the block is released); without it, the acquirer waits for /accept or /reject',
      'charge',
    ),
    auth: 'any',
    body: infractions.sandboxRaiseInfractionBody,
    responses: {
      202: { description: 'Raised', schema: infractions.sandboxInfractionResponse },
      404: { description: 'No such charge of the caller', schema: common.errorBody },
    },
  },
  ...(['accept', 'reject'] as const).map((decision): Endpoint => ({
    method: 'post',
    path: `/v1/sandbox/infractions/:id/${decision}`,
    tag: 'Sandbox',
    summary: `The simulator decides the infraction: ${decision} (sandbox only)`,
    description: sandboxDescription(SANDBOX_INFRACTION_OUTCOMES[decision], 'infraction'),
    auth: 'any',
    responses: { 202: { description: 'Decided', schema: infractions.sandboxInfractionResponse } },
  })),
  ...subscriptions.SANDBOX_SUBSCRIPTION_ACTIONS.map((action): Endpoint => ({
    method: 'post',
    path: `/v1/sandbox/subscriptions/:id/${action}`,
    tag: 'Sandbox',
    summary: `The simulated payer acts on the subscription: ${action} (sandbox only)`,
    description: sandboxDescription(
      `${SANDBOX_SUBSCRIPTION_EFFECTS[action]}. 400 when the recorrência cannot take it (already decided or ended)`,
      'subscription',
    ),
    auth: 'any',
    body: subscriptions.sandboxSubscriptionBody,
    responses: { 202: { description: 'Done', schema: subscriptions.sandboxSubscriptionResponse } },
  })),

  {
    method: 'post',
    path: '/v1/acquirer/pix',
    tag: 'Acquirer callbacks',
    summary: 'Payment notification from the acquirer (signed)',
    description:
      'Called by the acquirer, not by merchants: payments received for charges, and how their refunds (devoluções) went. The body is checked against the signature before it is parsed, kept in the callback inbox and applied once, however often it is sent; a payment for a charge no longer PENDING, or of another amount, is returned to the payer.',
    auth: 'acquirer',
    responses: { 200: { description: 'Stored', schema: common.messageBody } },
  },
  {
    method: 'post',
    path: '/v1/acquirer/transfers',
    tag: 'Acquirer callbacks',
    summary: 'Transfer result from the acquirer (signed)',
    description:
      "Called by the acquirer, not by merchants: a withdrawal's transfer completed, failed or was returned by the destination bank. Checked against the signature before it is parsed, kept in the callback inbox and applied once, however often it is sent.",
    auth: 'acquirer',
    responses: { 202: { description: 'Accepted', schema: common.messageBody } },
  },
  {
    method: 'post',
    path: '/v1/acquirer/infractions',
    tag: 'Acquirer callbacks',
    summary: 'MED infraction from the acquirer (signed)',
    description:
      'Called by the acquirer, not by merchants: a MED infraction raised or decided on a payment. Checked against the signature before it is parsed, kept in the callback inbox and applied once, however often it is sent.',
    auth: 'acquirer',
    responses: { 202: { description: 'Accepted', schema: common.messageBody } },
  },
  {
    method: 'post',
    path: '/v1/acquirer/pix-keys',
    tag: 'Acquirer callbacks',
    summary: 'PIX key status from the acquirer (signed)',
    description:
      "Called by the acquirer, not by merchants: a merchant's PIX key is now PENDENTE, ATIVA or INATIVA there. Checked against the signature before it is parsed, kept in the callback inbox and applied once, however often it is sent.",
    auth: 'acquirer',
    responses: { 202: { description: 'Accepted', schema: common.messageBody } },
  },

  {
    method: 'get',
    path: '/healthz',
    tag: 'Operations',
    summary: 'Liveness',
    description:
      '200 while the process serves HTTP; it checks no dependency, so a load balancer does not restart the process for a database outage.',
    auth: 'none',
    responses: { 200: { description: 'Up', schema: common.health } },
  },
  {
    method: 'get',
    path: '/readyz',
    tag: 'Operations',
    summary: 'Readiness (database, Temporal)',
    description:
      '200 when the database and Temporal answer, 503 naming what does not: take the process out of the load balancer until it is ready.',
    auth: 'none',
    responses: {
      200: { description: 'Ready', schema: common.readiness },
      503: { description: 'Not ready', schema: common.errorBody },
    },
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics (bearer METRICS_TOKEN when configured)',
    description:
      "The process's metrics in the Prometheus text format: HTTP requests, acquirer calls, webhook deliveries, the callback inbox, refunds. When METRICS_TOKEN is set it must be sent as a bearer token.",
    auth: 'none',
    responses: {
      200: { description: 'Prometheus text exposition' },
      401: { description: 'METRICS_TOKEN is set and was not sent', schema: common.errorBody },
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'Operations',
    summary: 'This document',
    description:
      'This OpenAPI 3.1 document, generated from the schemas the routes validate with; `GET /docs` renders it.',
    auth: 'none',
    responses: { 200: { description: 'OpenAPI 3.1' } },
  },
];

const SECURITY: Record<Auth, Array<Record<string, string[]>>> = {
  none: [],
  any: [{ bearerJwt: [] }, { apiKey: [] }],
  jwt: [{ bearerJwt: [] }],
  admin: [{ bearerJwt: [] }],
  acquirer: [{ acquirerSignature: [] }],
};

/**
 * Requests are described as the routes accept them (`input`: defaults optional, unknown fields let
 * through); responses as the API writes them (`output`: every field it always sends is required, and
 * no field beyond the schema's, so an undocumented field is a drift the test suite catches).
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

const errorRef = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function operation(e: Endpoint): Record<string, unknown> {
  const pathParams = [...e.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1] as string);
  const parameters = parametersOf(e, pathParams);
  const responses = responsesOf(e);
  addStandardErrors(e, responses, pathParams);
  const op: Record<string, unknown> = {
    operationId: `${e.method}${e.path.replace(/[/:{}-]+(\w)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    tags: [e.tag],
    summary: e.summary,
    description: e.description,
    security: SECURITY[e.auth],
    responses,
  };
  if (parameters.length > 0) op.parameters = parameters;
  const requestBody = requestBodyOf(e);
  if (requestBody) op.requestBody = requestBody;
  return op;
}

/** Path parameters, the query's fields, the declared headers and the acquirer's signature header. */
function parametersOf(e: Endpoint, pathParams: string[]): unknown[] {
  const parameters: unknown[] = pathParams.map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: 64 },
  }));
  if (e.query) {
    const shape = jsonSchema(e.query) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, schema] of Object.entries(shape.properties ?? {})) {
      parameters.push({ name, in: 'query', required: shape.required?.includes(name) ?? false, schema });
    }
  }
  for (const h of e.headers ?? [])
    parameters.push({
      name: h.name,
      in: 'header',
      required: h.required ?? false,
      description: h.description,
      schema: jsonSchema(h.schema),
    });
  if (e.auth === 'acquirer')
    parameters.push({
      name: CALLBACK_SIGNATURE_HEADER,
      in: 'header',
      required: true,
      description: 'HMAC-SHA256 of the raw body, keyed with ACQUIRER_CALLBACK_SECRET',
      schema: { type: 'string' },
    });
  return parameters;
}

function responsesOf(e: Endpoint): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, res] of Object.entries(e.responses)) {
    const media = res.schema
      ? { schema: jsonSchema(res.schema, 'output'), ...(res.examples ? { examples: res.examples } : {}) }
      : undefined;
    const binary = res.binary?.map((t) => [t, { schema: { type: 'string', format: 'binary' } }] as const);
    responses[status] = {
      description: res.description,
      ...(res.headers ? { headers: res.headers } : {}),
      ...(media ? { content: { [res.mediaType ?? 'application/json']: media } } : {}),
      ...(binary ? { content: Object.fromEntries(binary) } : {}),
    };
  }
  return responses;
}

/** The errors every endpoint of its kind can answer, unless it declares its own. */
function addStandardErrors(e: Endpoint, responses: Record<string, unknown>, pathParams: string[]): void {
  const takesInput =
    e.body !== undefined ||
    e.multipart !== undefined ||
    e.query !== undefined ||
    pathParams.length > 0 ||
    (e.headers?.length ?? 0) > 0 ||
    e.auth === 'acquirer';
  if (takesInput) responses['400'] ??= errorRef('Invalid input; the message names the field');
  if (e.auth !== 'none')
    responses['401'] ??= errorRef(
      e.auth === 'acquirer' ? 'Missing or wrong signature' : 'Missing, invalid, expired or deleted credential',
    );
  if (e.auth === 'any' || e.auth === 'jwt' || e.auth === 'admin') {
    const why =
      e.auth === 'admin'
        ? 'Not an ADMIN'
        : e.auth === 'jwt'
          ? 'An API key cannot do this; log in'
          : e.path === '/v1/charges' && e.method === 'post'
            ? 'A charge prerequisite is unmet (named in the message)'
            : undefined;
    responses['403'] ??= errorRef([why, 'the merchant is suspended or the user disabled'].filter(Boolean).join('; '));
  }
  // Merchant routes are 404 for a caller without a merchant (docs/api.md "Errors": merchant not found).
  if (pathParams.length > 0 || e.auth === 'any')
    responses['404'] ??= errorRef('Not found (or another merchant’s, or the caller has no merchant)');
  if (e.body !== undefined || e.auth === 'acquirer') {
    responses['413'] ??= errorRef('Body too large (counted after decompression)');
    responses['415'] ??= errorRef('Unsupported Content-Encoding');
  }
  if (e.headers?.some((h) => h === idempotencyHeader))
    responses['422'] ??= errorRef('Another body under this idempotency key');
  // Every request is limited per address before routing (docs/api.md "Rate limits"), probes and callbacks too.
  responses['429'] ??= errorRef('Rate limited; see Retry-After');
  if (e.auth !== 'none' || e.path === '/v1/auth/login')
    responses['503'] ??= errorRef('The database is unreachable; see Retry-After');
}

function requestBodyOf(e: Endpoint): Record<string, unknown> | undefined {
  if (e.body) return { required: true, content: { 'application/json': { schema: jsonSchema(e.body) } } };
  if (!e.multipart) return undefined;
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: e.multipart.schema,
        ...(e.multipart.encoding ? { encoding: e.multipart.encoding } : {}),
      },
    },
  };
}

/** The Standard Webhooks headers every delivery also carries (docs/api.md "Webhooks"). */
const STANDARD_WEBHOOK_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The delivery id, the same on every attempt (Standard Webhooks)',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds when this attempt was signed (Standard Webhooks)',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the base64-decoded part ' +
      'of the whsec_ secret; two entries while a rotated secret overlaps (Standard Webhooks)',
    schema: { type: 'string' },
  },
] as const;

/** When each event is sent (docs/api.md "Events"); the catalogue's own descriptions are in Portuguese. */
const WEBHOOK_EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'charge.paid': 'A payment for a charge was credited: the charge is PAID and amount − fee is pending in the balance.',
  'charge.refunded':
    'The acquirer confirmed a refund of a charge (`amount` as a decimal string in reais, not cents); the charge is REFUNDED once fully refunded.',
  'withdraw.completed': 'A withdrawal’s transfer reached the destination: the withdrawal is COMPLETED.',
  'withdraw.failed':
    'The acquirer rejected a withdrawal’s transfer: the withdrawal is FAILED and its amount is back in available.',
  'withdraw.refunded':
    'The destination bank returned a completed withdrawal’s transfer: the withdrawal is REFUNDED and its amount is back in available.',
  'pixkey.updated': 'One of the merchant’s PIX keys changed status at the acquirer (`status` in the acquirer’s words).',
  'infraction.received':
    'A MED infraction was raised on one of the merchant’s payments: the amount is blocked in the balance.',
  'infraction.updated':
    'The acquirer decided a MED infraction: ACCEPTED (the payment is to go back to the payer) or REJECTED (the block is released).',
  'infraction.refund_completed':
    'The payment under an accepted MED infraction is back with the payer: the infraction is REFUNDED.',
  'subscription.approved':
    'The payer authorised a subscription (Pix Automático): it is ACTIVE and its cycles are charged.',
  'subscription.canceled': 'A subscription was canceled by the merchant or by the payer: no further cycle is charged.',
  'subscription.charge.paid':
    'A subscription cycle was debited: its RECURRING charge is PAID, booked as any payment (amount − fee pending).',
  'subscription.charge.failed':
    'A subscription cycle’s debit did not go through; `retryDate` says when it is tried again, null when the cycle failed.',
};

/** How every delivery is retried and deduplicated (docs/api.md "Receiving webhooks"). */
const DELIVERY_RULES =
  'Verify `webhook-signature` (Standard Webhooks) or `x-webhook-signature` on the raw body before parsing it. ' +
  'Anything but a 2xx within 5 s is retried after 1 and after 10 minutes; delivery is at least once, so drop repeats by `webhook-id`.';

/**
 * The nine events a registered webhook receives (OpenAPI 3.1 `webhooks`): each a POST of the
 * envelope around the event's data, from the event contracts (docs/api.md "Receiving webhooks").
 * Each declares the signatures a receiver checks as its security, as the acquirer callbacks do.
 */
function webhookOperations(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const event of WEBHOOK_EVENT_TYPES) {
    const entry = WEBHOOK_EVENT_CATALOGUE.find((c) => c.event === event);
    out[event] = {
      post: {
        operationId: `webhook${event.replace(/(^|[._])(\w)/g, (_m, _s: string, c: string) => c.toUpperCase())}`,
        tags: ['Webhook events'],
        summary: entry?.description ?? event,
        description: `${WEBHOOK_EVENT_DESCRIPTIONS[event]} ${DELIVERY_RULES}`,
        security: [{ standardWebhookSignature: [] }, { webhookSignature: [] }],
        parameters: [
          {
            name: 'x-webhook-signature',
            in: 'header',
            required: true,
            description: 'Lowercase hex HMAC-SHA256 of the raw body, keyed with the webhook secret',
            schema: { type: 'string' },
          },
          ...STANDARD_WEBHOOK_HEADERS,
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: jsonSchema(webhookEnvelope(event), 'output') } },
        },
        responses: {
          '200': { description: 'Any 2xx within the timeout acknowledges the delivery' },
          '401': { description: 'The receiver rejects the signature (the delivery is retried)' },
        },
      },
    };
  }
  return out;
}

/** How callers prove who they are: the dashboard's JWT, an API key, and the signatures of webhooks and callbacks. */
const SECURITY_SCHEMES = {
  bearerJwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A token from POST /v1/auth/login',
  },
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'pixflow_ API key',
    description: 'An API key value, sent as `Authorization: Bearer pixflow_…`',
  },
  standardWebhookSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'webhook-signature',
    description:
      'On webhook deliveries (`webhooks`): `v1,<base64 HMAC-SHA256 of "webhook-id.webhook-timestamp.body">` (Standard Webhooks)',
  },
  webhookSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'x-webhook-signature',
    description: 'On webhook deliveries (`webhooks`): lowercase hex HMAC-SHA256 of the raw body, keyed with the secret',
  },
  acquirerSignature: {
    type: 'apiKey',
    in: 'header',
    name: CALLBACK_SIGNATURE_HEADER,
    description: 'Lowercase hex HMAC-SHA256 of the raw body (acquirer callbacks only)',
  },
};

/** The whole document; `serverUrl` is where clients reach the API. */
export function buildOpenApiDocument(opts: { serverUrl?: string; version?: string } = {}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of ENDPOINTS) {
    const p = e.path.replace(/:([A-Za-z]+)/g, '{$1}');
    paths[p] ??= {};
    (paths[p] as Record<string, unknown>)[e.method] = operation(e);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'pixflow API',
      version: opts.version ?? '0.1.0',
      description:
        'PIX charges with QR Codes, balances with fee split, withdrawals, API keys and signed webhooks. Amounts are integer cents; timestamps ISO 8601; every error is `{"message", "code", "requestId"}` (plus `param` when one field is at fault) and every answer carries `x-request-id`.',
      // The service is not open source (package.json "license": "UNLICENSED"); an SPDX LicenseRef says so.
      license: { name: 'Proprietary', identifier: 'LicenseRef-pixflow-proprietary' },
      contact: { name: 'The operator of this pixflow deployment' },
    },
    // By default relative: the API is where the document is served from, whatever host or proxy that is.
    servers: [
      opts.serverUrl ? { url: opts.serverUrl } : { url: '/', description: 'The server this document is served from' },
    ],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    webhooks: webhookOperations(),
    components: {
      schemas: { Error: jsonSchema(common.errorBody, 'output') },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
