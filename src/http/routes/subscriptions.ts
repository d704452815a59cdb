/** Subscriptions, Pix Automático (docs/api.md "Subscriptions"): create, list, get with cycles, cancel, cycle amounts. */
import { z } from 'zod';
import type { SubscriptionsService } from '../../services/subscriptions/subscriptions';
import {
  createSubscriptionBody,
  cycleAmountParams,
  listSubscriptionsQuery,
  setCycleAmountBody,
} from '../../contracts/subscriptions';
import { idParam } from '../../contracts/validation';
import { merchantIdOf } from '../principal';
import type { RouteModule } from '../types';
import { answerReplay, idempotencyKeyOf, parseBody, parseParams, parseQuery } from '../validation';

const params = z.object({ id: idParam });

export function subscriptionRoutes(subscriptions: SubscriptionsService): RouteModule {
  return (router, guards) => {
    router.post('/v1/subscriptions', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const key = idempotencyKeyOf(ctx);
      const result = await subscriptions.create(merchantId, parseBody(ctx, createSubscriptionBody), key);
      if (result.replay) answerReplay(ctx, { subscription: result.subscription, idempotent: true });
      else {
        ctx.status = 201;
        ctx.body = { subscription: result.subscription };
      }
    });

    router.get('/v1/subscriptions', ...guards.authenticated, async (ctx) => {
      ctx.body = await subscriptions.list(merchantIdOf(ctx), parseQuery(ctx, listSubscriptionsQuery));
    });

    router.get('/v1/subscriptions/:id', ...guards.authenticated, async (ctx) => {
      const { id } = parseParams(ctx, params);
      ctx.body = { subscription: await subscriptions.get(merchantIdOf(ctx), id) };
    });

    router.post('/v1/subscriptions/:id/cancel', ...guards.authenticated, async (ctx) => {
      const { id } = parseParams(ctx, params);
      ctx.body = { subscription: await subscriptions.cancel(merchantIdOf(ctx), id) };
    });

    router.post('/v1/subscriptions/:id/cycles/:number/amount', ...guards.authenticated, async (ctx) => {
      const { id, number } = parseParams(ctx, cycleAmountParams);
      const { amount } = parseBody(ctx, setCycleAmountBody);
      ctx.body = { subscription: await subscriptions.setCycleAmount(merchantIdOf(ctx), id, number, amount) };
    });
  };
}
