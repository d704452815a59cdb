/** Request schemas of the webhook endpoints (README "Webhooks"). */
import { WEBHOOK_STATUSES } from './statuses';
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from './webhook-events';
import { urlSyntaxProblem } from '../services/webhook-url';
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
