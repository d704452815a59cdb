/** Charges (docs/architecture.md "Charges: how they work"): create, list, and (ext) get, cancel, refund. */
import type { ChargesService } from '../../services/charges/charges';
import { merchantIdOf } from '../principal';
import {
  createChargeBatchBody,
  createChargeBody,
  createDueDateChargeBody,
  listChargesQuery,
  refundChargeBody,
} from '../../contracts/charges';
import type { DueDateCharges } from '../../services/charges/due-date';
import type { ChargeBatches } from '../../services/charges/batches';
import type { RouteModule } from '../types';
import { idParam, validate } from '../../contracts/validation';
import { answerReplay, idempotencyKeyOf, parseBody, parseParams, parseQuery } from '../validation';
import { z } from 'zod';
import { sendJsonOnce } from '../json-once';

const chargeParams = z.object({ id: idParam });

/** With `dueDate`, a body is a due-date charge's (docs/api.md "Due-date charges"). */
const isDueDateBody = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && !Array.isArray(body) && 'dueDate' in body;

export function chargeRoutes(
  charges: ChargesService,
  dueDate?: { charges: DueDateCharges; batches: ChargeBatches },
): RouteModule {
  return (router, guards) => {
    router.post('/v1/charges', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const key = idempotencyKeyOf(ctx);
      const result =
        dueDate && isDueDateBody(ctx.request.body)
          ? await dueDate.charges.create(merchantId, parseBody(ctx, createDueDateChargeBody), key)
          : await charges.create(merchantId, parseBody(ctx, createChargeBody), key);
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

    if (dueDate) {
      // docs/api.md "Charge batches": 201 with every item's outcome (one invalid item refuses
      // itself only), 200 on a replay of its key, 400 only for the envelope.
      router.post('/v1/charges/batch', ...guards.authenticated, async (ctx) => {
        const input = parseBody(ctx, createChargeBatchBody);
        const result = await dueDate.batches.create(merchantIdOf(ctx), input, idempotencyKeyOf(ctx));
        if (result.replay) answerReplay(ctx, { batch: result.batch, idempotent: true });
        else {
          ctx.status = 201;
          ctx.body = { batch: result.batch };
        }
      });
      router.get('/v1/charge-batches/:id', ...guards.authenticated, async (ctx) => {
        const { id } = parseParams(ctx, chargeParams);
        ctx.body = { batch: await dueDate.batches.get(merchantIdOf(ctx), id) };
      });
    }

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
