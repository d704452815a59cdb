/**
 * Sandbox Pix Automático endpoints (docs/api.md "Sandbox"; only mounted while the acquirer is the
 * simulator), with the merchant's own credentials and scoped to its own subscriptions.
 */
import { z } from 'zod';
import type { SubscriptionSandbox } from '../../../services/subscriptions/sandbox';
import { merchantIdOf } from '../../principal';
import type { RouteModule } from '../../types';
import { idParam, validate } from '../../../contracts/validation';
import { SANDBOX_SUBSCRIPTION_ACTIONS, sandboxSubscriptionBody } from '../../../contracts/subscriptions';
import { parseParams } from '../../validation';

const subscriptionParams = z.object({ id: idParam });

export function subscriptionSandboxRoutes(sandbox: SubscriptionSandbox): RouteModule {
  return (router, guards) => {
    for (const action of SANDBOX_SUBSCRIPTION_ACTIONS) {
      router.post(`/v1/sandbox/subscriptions/:id/${action}`, ...guards.authenticated, async (ctx) => {
        const merchantId = merchantIdOf(ctx);
        const { id } = parseParams(ctx, subscriptionParams);
        const body = validate(sandboxSubscriptionBody, ctx.request.body ?? {}, 'Request body');
        ctx.status = 202;
        ctx.body = {
          message: `The sandbox payer did: ${action}`,
          subscription: await sandbox.act(merchantId, id, action, body),
        };
      });
    }
  };
}
