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
import { CALLBACK_SIGNATURE_HEADER } from '../acquirer/callback-signature';
import * as common from '../contracts/common';
import * as merchants from '../contracts/merchants';
import { WEBHOOK_EVENT_CATALOGUE, WEBHOOK_EVENT_TYPES, webhookEnvelope } from '../contracts/webhook-events';
import * as withdrawals from '../contracts/withdrawals';
import * as webhooks from '../contracts/webhooks';
import * as infractions from '../contracts/infractions';
import * as access from '../contracts/admin-access';
import { idempotencyKeyHeader } from '../contracts/validation';

type Auth = 'none' | 'any' | 'jwt' | 'admin' | 'acquirer';
type Method = 'get' | 'post' | 'patch' | 'delete';

interface Endpoint {
  method: Method;
  path: string;
  tag: string;
  summary: string;
  auth: Auth;
  body?: z.ZodType;
  query?: z.ZodObject;
  headers?: Array<{ name: string; description: string; schema: z.ZodType; required?: boolean }>;
  responses: Record<number, ResponseSpec>;
}

interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Named examples of the body (OpenAPI `examples`). */
  examples?: Record<string, { summary: string; value: unknown }>;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
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

export const ENDPOINTS: Endpoint[] = [
  {
    method: 'post',
    path: '/v1/auth/login',
    tag: 'Auth',
    summary: 'Log in (JWT)',
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
    auth: 'jwt',
    body: auth.createApiKeyBody,
    responses: { 201: { description: 'Created', schema: auth.apiKeyCreatedResponse } },
  },
  {
    method: 'get',
    path: '/v1/api-keys',
    tag: 'API keys',
    summary: 'List API keys (values masked)',
    auth: 'any',
    responses: { 200: { description: 'The keys', schema: auth.apiKeyListResponse } },
  },
  {
    method: 'delete',
    path: '/v1/api-keys/:id',
    tag: 'API keys',
    summary: 'Delete an API key (401 on its next use)',
    auth: 'jwt',
    responses: { 200: { description: 'Deleted', schema: common.messageBody } },
  },

  {
    method: 'post',
    path: '/v1/charges',
    tag: 'Charges',
    summary: 'Create a PIX charge with its QR Code',
    auth: 'any',
    body: charges.createChargeBody,
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
    method: 'get',
    path: '/v1/charges',
    tag: 'Charges',
    summary: 'List charges, newest first',
    auth: 'any',
    query: charges.listChargesQuery,
    responses: { 200: { description: 'A page of charges', schema: charges.chargeListResponse } },
  },
  {
    method: 'get',
    path: '/v1/charges/:id',
    tag: 'Charges',
    summary: 'Get a charge',
    auth: 'any',
    responses: { 200: { description: 'The charge', schema: charges.chargeResponse } },
  },
  {
    method: 'post',
    path: '/v1/charges/:id/cancel',
    tag: 'Charges',
    summary: 'Cancel a PENDING charge',
    auth: 'any',
    responses: { 200: { description: 'Canceled', schema: charges.chargeResponse } },
  },
  {
    method: 'post',
    path: '/v1/charges/:id/refund',
    tag: 'Charges',
    summary: 'Refund a PAID charge (full by default)',
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
    auth: 'any',
    responses: { 200: { description: 'Profile', schema: merchants.merchantMeResponse } },
  },
  {
    method: 'get',
    path: '/v1/merchants/me/balance',
    tag: 'Merchant',
    summary: 'Balance (cents)',
    auth: 'any',
    responses: { 200: { description: 'Balance', schema: merchants.balanceResponse } },
  },
  {
    method: 'post',
    path: '/v1/merchants/me/withdrawals',
    tag: 'Withdrawals',
    summary: 'Withdraw available balance to a PIX key',
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
    auth: 'any',
    query: withdrawals.listWithdrawalsQuery,
    responses: { 200: { description: 'A page of withdrawals', schema: withdrawals.listWithdrawalsResponse } },
  },
  {
    method: 'get',
    path: '/v1/merchants/me/withdrawals/:id',
    tag: 'Withdrawals',
    summary: 'Get a withdrawal',
    auth: 'any',
    responses: { 200: { description: 'The withdrawal', schema: withdrawals.getWithdrawalResponse } },
  },

  {
    method: 'post',
    path: '/v1/webhooks/merchant',
    tag: 'Webhooks',
    summary: 'Register a webhook (secret shown once)',
    auth: 'any',
    body: webhooks.createWebhookBody,
    responses: { 201: { description: 'Registered', schema: webhooks.createWebhookResponse } },
  },
  {
    method: 'get',
    path: '/v1/webhooks/merchant',
    tag: 'Webhooks',
    summary: 'List webhooks with their last 20 delivery logs',
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
    auth: 'any',
    responses: { 200: { description: 'Events', schema: webhooks.webhookEventsResponse } },
  },
  {
    method: 'patch',
    path: '/v1/webhooks/merchant/:id',
    tag: 'Webhooks',
    summary: 'Change a webhook (only the fields sent)',
    auth: 'any',
    body: webhooks.updateWebhookBody,
    responses: { 200: { description: 'Changed', schema: webhooks.updateWebhookResponse } },
  },
  {
    method: 'delete',
    path: '/v1/webhooks/merchant/:id',
    tag: 'Webhooks',
    summary: 'Delete a webhook (deliveries stop at once)',
    auth: 'any',
    responses: { 200: { description: 'Deleted', schema: common.messageBody } },
  },
  {
    method: 'get',
    path: '/v1/webhooks/merchant/:id/deliveries',
    tag: 'Webhooks',
    summary: 'A webhook’s deliveries, newest first',
    auth: 'any',
    query: webhooks.deliveriesQuery,
    responses: { 200: { description: 'A page of deliveries', schema: webhooks.listDeliveriesResponse } },
  },
  {
    method: 'post',
    path: '/v1/webhooks/merchant/:id/deliveries/:deliveryId/redeliver',
    tag: 'Webhooks',
    summary: 'Send a finished delivery again (a new series of attempts)',
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
    auth: 'admin',
    query: admin.listMerchantsQuery,
    responses: { 200: { description: 'A page of merchants', schema: merchants.merchantListResponse } },
  },
  {
    method: 'get',
    path: '/v1/admin/merchants/:id',
    tag: 'Operator',
    summary: 'Get a merchant',
    auth: 'admin',
    responses: { 200: { description: 'The merchant', schema: merchants.merchantResponse } },
  },
  {
    method: 'patch',
    path: '/v1/admin/merchants/:id',
    tag: 'Operator',
    summary: 'KYC, status, acquirer account, fees',
    auth: 'admin',
    body: admin.updateMerchantBody,
    responses: { 200: { description: 'Changed', schema: merchants.merchantResponse } },
  },
  {
    method: 'post',
    path: '/v1/admin/merchants/:id/pix-keys',
    tag: 'Operator',
    summary: 'Register a PIX key',
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
    auth: 'admin',
    body: admin.updatePixKeyBody,
    responses: { 200: { description: 'Changed', schema: merchants.pixKeyResponse } },
  },
  {
    method: 'post',
    path: '/v1/admin/merchants/:id/adjustments',
    tag: 'Operator',
    summary: 'Signed ledger adjustment of available',
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
    auth: 'admin',
    responses: { 200: { description: 'The users', schema: access.merchantUsersResponse } },
  },
  {
    method: 'post',
    path: '/v1/admin/merchants/:id/revoke-tokens',
    tag: 'Operator',
    summary: 'Revoke every login token of a merchant’s users',
    auth: 'admin',
    responses: { 200: { description: 'Revoked', schema: access.merchantTokensRevokedResponse } },
  },
  {
    method: 'post',
    path: '/v1/admin/users/:id/revoke-tokens',
    tag: 'Operator',
    summary: 'Revoke a user’s login tokens',
    auth: 'admin',
    responses: { 200: { description: 'Revoked', schema: access.userAccessResponse } },
  },
  {
    method: 'patch',
    path: '/v1/admin/users/:id',
    tag: 'Operator',
    summary: 'Enable or disable a user',
    auth: 'admin',
    body: access.updateUserBody,
    responses: { 200: { description: 'Changed', schema: access.userAccessResponse } },
  },
  {
    method: 'get',
    path: '/v1/admin/audit-log',
    tag: 'Operator',
    summary: 'The audit log',
    auth: 'admin',
    query: admin.auditLogQuery,
    responses: { 200: { description: 'A page of entries', schema: admin.auditLogResponse } },
  },

  {
    method: 'post',
    path: '/v1/sandbox/charges/:id/pay',
    tag: 'Sandbox',
    summary: 'Pay a charge through the simulator (sandbox only)',
    auth: 'any',
    body: charges.sandboxPayBody,
    responses: { 202: { description: 'Payment sent', schema: charges.sandboxPaidResponse } },
  },
  ...(['complete', 'fail', 'return'] as const).map((action): Endpoint => ({
    method: 'post',
    path: `/v1/sandbox/withdrawals/:id/${action}`,
    tag: 'Sandbox',
    summary: `The simulator’s transfer outcome: ${action} (sandbox only)`,
    auth: 'any',
    body: withdrawals.sandboxTransferOutcomeBody,
    responses: { 202: { description: 'Outcome sent', schema: withdrawals.sandboxTransferResponse } },
  })),
  ...(['activate', 'deactivate'] as const).map((action): Endpoint => ({
    method: 'post',
    path: `/v1/sandbox/pix-keys/:id/${action}`,
    tag: 'Sandbox',
    summary: `The simulator announces the merchant’s PIX key ${action === 'activate' ? 'ATIVA' : 'INATIVA'} by its callback (sandbox only)`,
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
    auth: 'any',
    responses: { 202: { description: 'Decided', schema: infractions.sandboxInfractionResponse } },
  })),

  {
    method: 'post',
    path: '/v1/acquirer/pix',
    tag: 'Acquirer callbacks',
    summary: 'Payment notification from the acquirer (signed)',
    auth: 'acquirer',
    responses: { 200: { description: 'Stored', schema: common.messageBody } },
  },
  {
    method: 'post',
    path: '/v1/acquirer/transfers',
    tag: 'Acquirer callbacks',
    summary: 'Transfer result from the acquirer (signed)',
    auth: 'acquirer',
    responses: { 202: { description: 'Accepted', schema: common.messageBody } },
  },
  {
    method: 'post',
    path: '/v1/acquirer/infractions',
    tag: 'Acquirer callbacks',
    summary: 'MED infraction from the acquirer (signed)',
    auth: 'acquirer',
    responses: { 202: { description: 'Accepted', schema: common.messageBody } },
  },
  {
    method: 'post',
    path: '/v1/acquirer/pix-keys',
    tag: 'Acquirer callbacks',
    summary: 'PIX key status from the acquirer (signed)',
    auth: 'acquirer',
    responses: { 202: { description: 'Accepted', schema: common.messageBody } },
  },

  {
    method: 'get',
    path: '/healthz',
    tag: 'Operations',
    summary: 'Liveness',
    auth: 'none',
    responses: { 200: { description: 'Up', schema: common.health } },
  },
  {
    method: 'get',
    path: '/readyz',
    tag: 'Operations',
    summary: 'Readiness (database, Temporal)',
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

  const responses: Record<string, unknown> = {};
  for (const [status, res] of Object.entries(e.responses)) {
    const media = res.schema
      ? { schema: jsonSchema(res.schema, 'output'), ...(res.examples ? { examples: res.examples } : {}) }
      : undefined;
    responses[status] = {
      description: res.description,
      ...(res.headers ? { headers: res.headers } : {}),
      ...(media ? { content: { 'application/json': media } } : {}),
    };
  }
  const takesInput =
    e.body !== undefined ||
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
  // Merchant routes are 404 for a caller without a merchant (SPEC "Errors": merchant not found).
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

  const op: Record<string, unknown> = {
    operationId: `${e.method}${e.path.replace(/[/:{}-]+(\w)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    tags: [e.tag],
    summary: e.summary,
    security: SECURITY[e.auth],
    responses,
  };
  if (parameters.length > 0) op.parameters = parameters;
  if (e.body) op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(e.body) } } };
  return op;
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

/**
 * The nine events a registered webhook receives (OpenAPI 3.1 `webhooks`): each a POST of the
 * envelope around the event's data, from the event contracts (docs/api.md "Receiving webhooks").
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
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    tags: [...[...new Set(ENDPOINTS.map((e) => e.tag))].map((name) => ({ name })), { name: 'Webhook events' }],
    paths,
    webhooks: webhookOperations(),
    components: {
      schemas: { Error: jsonSchema(common.errorBody, 'output') },
      securitySchemes: {
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
        acquirerSignature: {
          type: 'apiKey',
          in: 'header',
          name: CALLBACK_SIGNATURE_HEADER,
          description: 'Lowercase hex HMAC-SHA256 of the raw body (acquirer callbacks only)',
        },
      },
    },
  };
}
