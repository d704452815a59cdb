/**
 * Webhook contracts (docs/api.md "Webhooks"): the request schemas the routes validate with and the
 * response shapes they answer with (the OpenAPI document is generated from both).
 */
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_STATUSES } from './statuses';
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from './webhook-events';
import { urlSyntaxProblem } from './webhook-url';
import { idParam, paginationQuery, text } from './validation';

const webhookUrl = text({ min: 1, max: 2048 }).superRefine((v, ctx) => {
  const problem = urlSyntaxProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const webhookName = text({ max: 100 }).nullable();
/** `[]` means every event; each entry must be in the catalogue. */
const webhookEvents = z.array(z.enum(WEBHOOK_EVENT_TYPES)).max(WEBHOOK_EVENT_TYPES.length * 4);

export const createWebhookBody = z.object({
  url: webhookUrl,
  name: webhookName.optional(),
  events: webhookEvents.optional(),
});

export const updateWebhookBody = z.object({
  url: webhookUrl.optional(),
  name: webhookName.optional(),
  events: webhookEvents.optional(),
  status: z.enum(WEBHOOK_STATUSES).optional(),
});

export const webhookIdParams = z.object({ id: idParam });
export const deliveryIdParams = z.object({ id: idParam, deliveryId: idParam });
export const deliveriesQuery = paginationQuery;

// ---- responses: what the routes answer (the services' views are typed from these) ------------

const webhookBase = {
  id: z.string(),
  name: z.string().nullable(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).describe('Empty: every event'),
  status: z.enum(WEBHOOK_STATUSES),
  createdAt: z.iso.datetime(),
};

export const deliveryLog = z.object({
  id: z.string(),
  deliveryId: z.string(),
  event: z.enum(WEBHOOK_EVENT_TYPES),
  url: z.string(),
  payload: z.string().describe('The JSON sent'),
  statusCode: z.int().nullable(),
  response: z.string().nullable(),
  attempts: z.int(),
  success: z.boolean(),
  error: z.string().nullable().describe('Why an attempt got no answer, e.g. a timeout'),
  createdAt: z.iso.datetime(),
});

export const createWebhookResponse = z.object({
  webhook: z.object({ ...webhookBase, secret: z.string().describe('Full secret, shown only here') }),
});
export const listWebhooksResponse = z.object({
  webhooks: z.array(
    z.object({
      ...webhookBase,
      secret: z.string().describe('Masked: first 6 characters, ****, last 4'),
      updatedAt: z.iso.datetime(),
      logs: z.array(deliveryLog).describe('The 20 newest delivery logs'),
    }),
  ),
});
export const updateWebhookResponse = z.object({ webhook: z.object({ ...webhookBase, updatedAt: z.iso.datetime() }) });
export const rotateSecretResponse = z.object({
  webhook: z.object({
    ...webhookBase,
    updatedAt: z.iso.datetime(),
    secret: z.string().describe('The new secret, shown only here'),
    previousSecretExpiresAt: z.iso
      .datetime()
      .nullable()
      .describe('Until then the replaced secret signs too (a second v1 entry in webhook-signature)'),
  }),
});
export const webhookEventsResponse = z.object({
  events: z.array(z.object({ event: z.enum(WEBHOOK_EVENT_TYPES), description: z.string(), category: z.string() })),
});

export const delivery = z.object({
  id: z.string(),
  eventId: z.string(),
  event: z.string(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attempts: z.int(),
  lastStatusCode: z.int().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
});
export const listDeliveriesResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  deliveries: z.array(delivery),
});
export const redeliverResponse = z.object({ delivery });
