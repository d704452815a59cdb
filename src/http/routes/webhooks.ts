/**
 * Webhook management (docs/api.md "Webhooks"): JWT or API key, every query scoped to the caller's
 * merchant. (ext) delivery history, redelivery and secret rotation under the same prefix.
 */
import type { WebhooksService } from '../../services/webhooks/webhooks';
import { WEBHOOK_EVENT_CATALOGUE } from '../../contracts/webhook-events';
import { merchantIdOf } from '../principal';
import {
  createWebhookBody,
  deliveriesQuery,
  deliveryIdParams,
  updateWebhookBody,
  webhookIdParams,
} from '../../contracts/webhooks';
import type { RouteModule } from '../types';
import { parseBody, parseParams, parseQuery } from '../validation';

export function webhookRoutes(webhooks: WebhooksService): RouteModule {
  return (router, guards) => {
    router.get('/v1/webhooks/merchant/events', ...guards.authenticated, (ctx) => {
      ctx.body = { events: WEBHOOK_EVENT_CATALOGUE };
    });

    router.post('/v1/webhooks/merchant', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const w = await webhooks.create(merchantId, parseBody(ctx, createWebhookBody));
      ctx.status = 201;
      ctx.body = {
        webhook: {
          id: w.id,
          name: w.name,
          url: w.url,
          events: w.events,
          secret: w.secret,
          status: w.status,
          createdAt: w.createdAt,
        },
      };
    });

    router.get('/v1/webhooks/merchant', ...guards.authenticated, async (ctx) => {
      ctx.body = { webhooks: await webhooks.list(merchantIdOf(ctx)) };
    });

    router.patch('/v1/webhooks/merchant/:id', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id } = parseParams(ctx, webhookIdParams);
      ctx.body = { webhook: await webhooks.update(merchantId, id, parseBody(ctx, updateWebhookBody)) };
    });

    router.delete('/v1/webhooks/merchant/:id', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id } = parseParams(ctx, webhookIdParams);
      await webhooks.remove(merchantId, id);
      ctx.body = { message: 'Webhook deleted' };
    });

    router.get('/v1/webhooks/merchant/:id/deliveries', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id } = parseParams(ctx, webhookIdParams);
      ctx.body = await webhooks.listDeliveries(merchantId, id, parseQuery(ctx, deliveriesQuery));
    });

    router.post('/v1/webhooks/merchant/:id/deliveries/:deliveryId/redeliver', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id, deliveryId } = parseParams(ctx, deliveryIdParams);
      ctx.status = 202;
      ctx.body = { delivery: await webhooks.redeliver(merchantId, id, deliveryId) };
    });

    router.post('/v1/webhooks/merchant/:id/rotate-secret', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id } = parseParams(ctx, webhookIdParams);
      ctx.body = { webhook: await webhooks.rotateSecret(merchantId, id) };
    });
  };
}
