/**
 * (ext) The calling merchant's own profile, balance and statement (docs/api.md "Balance, fee,
 * settlement", "Statement").
 */
import type { MerchantsService } from '../../services/accounts/merchants';
import type { StatementService } from '../../services/ledger/statement';
import { statementCsvQuery, statementQuery } from '../../contracts/statement';
import { merchantIdOf } from '../principal';
import { parseQuery } from '../validation';
import type { RouteModule } from '../types';

export function merchantRoutes(merchants: MerchantsService, statement: StatementService): RouteModule {
  return (router, guards) => {
    router.get('/v1/merchants/me', ...guards.authenticated, async (ctx) => {
      ctx.body = { merchant: await merchants.getProfile(merchantIdOf(ctx)) };
    });

    router.get('/v1/merchants/me/balance', ...guards.authenticated, async (ctx) => {
      ctx.body = { balance: await merchants.getBalance(merchantIdOf(ctx)) };
    });

    router.get('/v1/merchants/me/statement', ...guards.authenticated, async (ctx) => {
      ctx.body = await statement.page(merchantIdOf(ctx), parseQuery(ctx, statementQuery));
    });

    // Streamed from a database cursor (src/services/ledger/statement.ts `csv`): the whole range,
    // however long, in constant memory.
    router.get('/v1/merchants/me/statement.csv', ...guards.authenticated, async (ctx) => {
      const { filename, body } = statement.csv(merchantIdOf(ctx), parseQuery(ctx, statementCsvQuery));
      ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
      ctx.type = 'text/csv; charset=utf-8';
      ctx.body = body;
    });
  };
}
