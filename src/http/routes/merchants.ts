/** (ext) The calling merchant's own profile and balance (docs/api.md "Balance, fee, settlement"). */
import type { MerchantsService } from '../../services/accounts/merchants';
import { merchantIdOf } from '../principal';
import type { RouteModule } from '../types';

export function merchantRoutes(merchants: MerchantsService): RouteModule {
  return (router, guards) => {
    router.get('/v1/merchants/me', ...guards.authenticated, async (ctx) => {
      ctx.body = { merchant: await merchants.getProfile(merchantIdOf(ctx)) };
    });

    router.get('/v1/merchants/me/balance', ...guards.authenticated, async (ctx) => {
      ctx.body = { balance: await merchants.getBalance(merchantIdOf(ctx)) };
    });
  };
}
