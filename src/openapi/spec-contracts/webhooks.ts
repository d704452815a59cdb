/**
 * Webhook management shapes as the API contract states them (README "Behaviour the spec leaves
 * open", Webhooks), for the OpenAPI document. The webhook routes validate with their own schemas;
 * when those exist, export them from here instead so the document is generated from exactly what
 * the routes validate.
 */
import { WEBHOOK_STATUSES } from '../../contracts/statuses';
import { z } from 'zod';
import { text } from '../../contracts/validation';

export const WEBHOOK_EVENTS = [
  'charge.paid',
  'charge.refunded',
  'withdraw.completed',
  'withdraw.failed',
  'withdraw.refunded',
  'pixkey.updated',
  'infraction.received',
  'infraction.updated',
  'infraction.refund_completed',
] as const;
export { WEBHOOK_STATUSES };

const events = z.array(z.enum(WEBHOOK_EVENTS)).describe('Empty or omitted: every event');

export const createWebhookBody = z.object({
  url: z.url().max(2048).describe('HTTPS and public in production'),
  name: text({ max: 100 }).optional(),
  events: events.optional(),
});

export const updateWebhookBody = z.object({
  url: z.url().max(2048).optional(),
  name: text({ max: 100 }).nullable().optional().describe('null removes the name'),
  events: events.optional(),
  status: z.enum(WEBHOOK_STATUSES).optional(),
});

const base = {
  id: z.string(),
  name: z.string().nullable(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  status: z.enum(WEBHOOK_STATUSES),
  createdAt: z.iso.datetime(),
};

export const deliveryLog = z.object({
  id: z.string(),
  deliveryId: z.string(),
  event: z.enum(WEBHOOK_EVENTS),
  url: z.string(),
  payload: z.string().describe('The JSON sent'),
  statusCode: z.int().nullable(),
  response: z.string().nullable(),
  attempts: z.int(),
  success: z.boolean(),
  createdAt: z.iso.datetime(),
});

export const createWebhookResponse = z.object({ webhook: z.object({ ...base, secret: z.string().describe('Full secret, shown only here') }) });
export const listWebhooksResponse = z.object({
  webhooks: z.array(
    z.object({
      ...base,
      secret: z.string().describe('Masked: first 6 characters, ****, last 4'),
      updatedAt: z.iso.datetime(),
      logs: z.array(deliveryLog).describe('The 20 newest delivery logs'),
    }),
  ),
});
export const updateWebhookResponse = z.object({ webhook: z.object({ ...base, updatedAt: z.iso.datetime() }) });
export const webhookEventsResponse = z.object({
  events: z.array(z.object({ event: z.enum(WEBHOOK_EVENTS), description: z.string(), category: z.string() })),
});
