/** Charges (docs/architecture.md "Charges: how they work"): create, list, and (ext) get, cancel, refund. */
import type { ChargesService } from '../../services/charges/charges';
import { merchantIdOf } from '../principal';
import { createChargeBody, listChargesQuery, refundChargeBody } from '../../contracts/charges';
import type { RouteModule } from '../types';
import { idParam, validate } from '../../contracts/validation';
import { answerReplay, idempotencyKeyOf, parseBody, parseParams, parseQuery } from '../validation';
import { z } from 'zod';
import { sendJsonOnce } from '../json-once';

const chargeParams = z.object({ id: idParam });

export function chargeRoutes(charges: ChargesService): RouteModule {
  return (router, guards) => {
    router.post('/v1/charges', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const key = idempotencyKeyOf(ctx);
      const input = parseBody(ctx, createChargeBody);
      const result = await charges.create(merchantId, input, key);
      if (result.replay) {
        answerReplay(ctx, { charge: result.charge, idempotent: true });
      } else {
        ctx.status = 201;
        ctx.body = { charge: result.charge };
      }
    });

    router.get('/v1/charges', ...guards.authenticated, async (ctx) => {
      // A cached page is the same object on every hit: serialized once (src/http/json-once.ts).
      sendJsonOnce(ctx, await charges.list(merchantIdOf(ctx), parseQuery(ctx, listChargesQuery)));
    });

    router.get('/v1/charges/:id', ...guards.authenticated, async (ctx) => {
      const { id } = parseParams(ctx, chargeParams);
      ctx.body = { charge: await charges.get(merchantIdOf(ctx), id) };
    });

    router.post('/v1/charges/:id/cancel', ...guards.authenticated, async (ctx) => {
      const { id } = parseParams(ctx, chargeParams);
      ctx.body = { charge: await charges.cancel(merchantIdOf(ctx), id) };
    });

    router.post('/v1/charges/:id/refund', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id } = parseParams(ctx, chargeParams);
      const key = idempotencyKeyOf(ctx);
      const input = validate(refundChargeBody, ctx.request.body ?? {}, 'Request body');
      const outcome = await charges.refund(merchantId, id, input, key);
      // As on charges: the first answer is 202, a replay of its key 200 with `idempotent: true`.
      if (outcome.replay) answerReplay(ctx, { refund: outcome.result, idempotent: true });
      else {
        ctx.status = 202;
        ctx.body = { refund: outcome.result };
      }
    });
  };
}
