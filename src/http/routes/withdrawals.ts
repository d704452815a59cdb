/** Withdrawals: request, list and (ext) get (docs/architecture.md "Withdrawals: the saga"). */
import { z } from 'zod';
import type { WithdrawalsService } from '../../services/withdrawals/withdrawals';
import { merchantIdOf } from '../principal';
import { createWithdrawalBody, listWithdrawalsQuery } from '../../contracts/withdrawals';
import type { RouteModule } from '../types';
import { idParam } from '../../contracts/validation';
import { answerReplay, idempotencyKeyOf, parseBody, parseParams, parseQuery } from '../validation';

const withdrawalParams = z.object({ id: idParam });

export function withdrawalRoutes(withdrawals: WithdrawalsService): RouteModule {
  return (router, guards) => {
    router.post('/v1/merchants/me/withdrawals', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const key = idempotencyKeyOf(ctx);
      const input = parseBody(ctx, createWithdrawalBody);
      const { replay, message, withdraw, balance } = await withdrawals.create(merchantId, input, key);
      if (replay) answerReplay(ctx, { message, withdraw, balance, idempotent: true });
      else {
        ctx.status = 201;
        ctx.body = { message, withdraw, balance };
      }
    });

    router.get('/v1/merchants/me/withdrawals', ...guards.authenticated, async (ctx) => {
      ctx.body = await withdrawals.list(merchantIdOf(ctx), parseQuery(ctx, listWithdrawalsQuery));
    });

    router.get('/v1/merchants/me/withdrawals/:id', ...guards.authenticated, async (ctx) => {
      const { id } = parseParams(ctx, withdrawalParams);
      ctx.body = { withdraw: await withdrawals.get(merchantIdOf(ctx), id) };
    });
  };
}
