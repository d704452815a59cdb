/**
 * (ext) Operator control over logins (docs/api.md "Auth hardening"), ADMIN JWT only, audited:
 *
 *   GET   /v1/admin/merchants/:id/users          → 200 {users}
 *   POST  /v1/admin/merchants/:id/revoke-tokens  → 200 {merchantId, users}  every JWT of its users → 401
 *   POST  /v1/admin/users/:id/revoke-tokens      → 200 {user}               every JWT of the user → 401
 *   PATCH /v1/admin/users/:id {status}           → 200 {user}               DISABLED → 403 everywhere
 *
 * Suspending a merchant stays `PATCH /v1/admin/merchants/:id {status: "SUSPENDED"}`.
 */
import { z } from 'zod';
import type { Actor } from '../../services/platform/audit';
import type { UserAccessService } from '../../services/accounts/user-access';
import { updateUserBody } from '../../contracts/admin-access';
import { principalOf } from '../principal';
import type { AppContext, RouteModule } from '../types';
import { idParam } from '../../contracts/validation';
import { parseBody, parseParams } from '../validation';

const idParams = z.object({ id: idParam });

function actorOf(ctx: AppContext): Actor {
  const p = principalOf(ctx);
  return { userId: p.kind === 'jwt' ? p.userId : null, email: '' };
}

export function adminAccessRoutes(access: UserAccessService): RouteModule {
  return (router, guards) => {
    router.get('/v1/admin/merchants/:id/users', ...guards.admin, async (ctx) => {
      const { id } = parseParams(ctx, idParams);
      ctx.body = { users: await access.listMerchantUsers(id) };
    });

    router.post('/v1/admin/merchants/:id/revoke-tokens', ...guards.admin, async (ctx) => {
      const { id } = parseParams(ctx, idParams);
      ctx.body = await access.revokeMerchantTokens(actorOf(ctx), id);
    });

    router.post('/v1/admin/users/:id/revoke-tokens', ...guards.admin, async (ctx) => {
      const { id } = parseParams(ctx, idParams);
      ctx.body = { user: await access.revokeUserTokens(actorOf(ctx), id) };
    });

    router.patch('/v1/admin/users/:id', ...guards.admin, async (ctx) => {
      const { id } = parseParams(ctx, idParams);
      const { status } = parseBody(ctx, updateUserBody);
      ctx.body = { user: await access.setUserStatus(actorOf(ctx), id, status) };
    });
  };
}
