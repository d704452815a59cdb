/**
 * (ext) The operator API (docs/operations.md "The admin API"): ADMIN JWT only, every action audited by the
 * services it calls. The ops CLI (src/cli/ops.ts) exposes the same services.
 */
import { z } from 'zod';
import type { Actor, AuditLogService } from '../../services/platform/audit';
import type { MerchantsService } from '../../services/accounts/merchants';
import { principalOf } from '../principal';
import {
  addPixKeyBody,
  adjustmentBody,
  auditLogQuery,
  createMerchantBody,
  listMerchantsQuery,
  updateMerchantBody,
  updatePixKeyBody,
} from '../../contracts/admin';
import type { AppContext, RouteModule } from '../types';
import { idParam } from '../../contracts/validation';
import { answerReplay, idempotencyKeyOf, parseBody, parseParams, parseQuery } from '../validation';

export const merchantIdParams = z.object({ id: idParam });
export const pixKeyParams = z.object({ id: idParam, keyId: idParam });

function actorOf(ctx: AppContext): Actor {
  const p = principalOf(ctx);
  // requireAdmin guarantees a JWT; the audit service resolves the e-mail from the user id.
  return { userId: p.kind === 'jwt' ? p.userId : null, email: '' };
}

export interface AdminRouteDeps {
  auditLog: AuditLogService;
  merchants: MerchantsService;
}

export function adminRoutes(deps: AdminRouteDeps): RouteModule {
  const { merchants } = deps;
  return (router, guards) => {
    router.post('/v1/admin/merchants', ...guards.admin, async (ctx) => {
      const input = parseBody(ctx, createMerchantBody);
      ctx.status = 201;
      ctx.body = await merchants.createMerchant(actorOf(ctx), input);
    });

    router.get('/v1/admin/merchants', ...guards.admin, async (ctx) => {
      const { page, limit } = parseQuery(ctx, listMerchantsQuery);
      const { total, merchants: list } = await merchants.listMerchants({ page, limit });
      ctx.body = { page, limit, total, merchants: list };
    });

    router.get('/v1/admin/merchants/:id', ...guards.admin, async (ctx) => {
      const { id } = parseParams(ctx, merchantIdParams);
      ctx.body = { merchant: await merchants.getMerchant(id) };
    });

    router.patch('/v1/admin/merchants/:id', ...guards.admin, async (ctx) => {
      const { id } = parseParams(ctx, merchantIdParams);
      const input = parseBody(ctx, updateMerchantBody);
      ctx.body = { merchant: await merchants.updateMerchant(actorOf(ctx), id, input) };
    });

    router.post('/v1/admin/merchants/:id/pix-keys', ...guards.admin, async (ctx) => {
      const { id } = parseParams(ctx, merchantIdParams);
      const input = parseBody(ctx, addPixKeyBody);
      ctx.status = 201;
      ctx.body = { pixKey: await merchants.addPixKey(actorOf(ctx), id, input) };
    });

    router.patch('/v1/admin/merchants/:id/pix-keys/:keyId', ...guards.admin, async (ctx) => {
      const { id, keyId } = parseParams(ctx, pixKeyParams);
      const { status } = parseBody(ctx, updatePixKeyBody);
      ctx.body = { pixKey: await merchants.setPixKeyStatus(actorOf(ctx), id, keyId, status) };
    });

    router.post('/v1/admin/merchants/:id/adjustments', ...guards.admin, async (ctx) => {
      const { id } = parseParams(ctx, merchantIdParams);
      const key = idempotencyKeyOf(ctx);
      const input = parseBody(ctx, adjustmentBody);
      const result = await merchants.adjustBalance(actorOf(ctx), id, input, key);
      // A replay of the key answers 200 with `idempotent: true`, as charges do.
      if (result.idempotent) answerReplay(ctx, result);
      else {
        ctx.status = 201;
        ctx.body = result;
      }
    });

    router.get('/v1/admin/audit-log', ...guards.admin, async (ctx) => {
      const { page, limit, targetType, targetId } = parseQuery(ctx, auditLogQuery);
      const { total, entries } = await deps.auditLog.list({ page, limit, targetType, targetId });
      ctx.body = { page, limit, total, entries };
    });
  };
}
