/** Withdrawals: request, list and (ext) get (docs/architecture.md "Withdrawals: the saga"). */
import { z } from 'zod';
import type { WithdrawalsService } from '../../services/withdrawals';
import { merchantIdOf } from '../principal';
import { createWithdrawalBody, listWithdrawalsQuery } from '../../contracts/withdrawals';
import type { RouteModule } from '../types';
import { idempotencyKeyHeader, idParam, validate } from '../../contracts/validation';
import { parseBody, parseParams, parseQuery } from '../validation';

const withdrawalParams = z.object({ id: idParam });

export function withdrawalRoutes(withdrawals: WithdrawalsService): RouteModule {
  return (router, guards) => {
    router.post('/v1/merchants/me/withdrawals', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const key = validate(idempotencyKeyHeader, ctx.get('x-idempotency-key') || undefined, 'Header x-idempotency-key');
      const input = parseBody(ctx, createWithdrawalBody);
      const { replay, message, withdraw, balance } = await withdrawals.create(merchantId, input, key);
      ctx.status = replay ? 200 : 201;
      ctx.body = replay ? { message, withdraw, balance, idempotent: true } : { message, withdraw, balance };
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
