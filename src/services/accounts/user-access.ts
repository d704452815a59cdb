/**
 * The operator's hold on logins (docs/api.md "Auth hardening"): disable or re-enable a user, and revoke
 * every JWT issued so far by bumping a user's (or all of a merchant's users') token version. Each
 * action is audited in the same transaction. Suspending a merchant is `merchants.updateMerchant`;
 * both take effect on the caller's very next request because every authenticated request re-reads
 * the user and merchant state.
 */
import type { z } from 'zod';
import { bindContext } from '../../lib/bind-context';
import type { userAccess } from '../../contracts/admin-access';
import { USER_STATUSES, type UserStatus } from '../../contracts/statuses';
import type { Knex } from 'knex';
import { notFound } from '../../lib/errors';
import { merchantsStore, type User } from '../../stores/merchants';
import { recordAudit, type Actor } from '../platform/audit';

export { USER_STATUSES, type UserStatus };

export type UserAccessView = z.infer<typeof userAccess>;

function view(u: User): UserAccessView {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    merchantId: u.merchantId ?? null,
    status: u.status,
    tokenVersion: u.tokenVersion,
    createdAt: new Date(u.createdAt).toISOString(),
  };
}

type UserAccessCtx = { knex: Knex };

export function createUserAccessService(deps: { knex: Knex }) {
  return bindContext(deps, { listMerchantUsers, revokeUserTokens, revokeMerchantTokens, setUserStatus });
}

async function lockedUser(trx: Knex.Transaction, userId: string): Promise<User> {
  const user = await merchantsStore(trx).lockUser(userId);
  if (!user) throw notFound('User not found');
  return user;
}

/** A merchant's users (to find the id to act on). */
export async function listMerchantUsers(ctx: UserAccessCtx, merchantId: string): Promise<UserAccessView[]> {
  const { knex } = ctx;
  const store = merchantsStore(knex);
  if (!(await store.findById(merchantId))) throw notFound('Merchant not found');
  const users = await store.usersOf(merchantId);
  return users.map(view);
}

/** Every JWT the user holds becomes 401 on its next use. */
export async function revokeUserTokens(ctx: UserAccessCtx, actor: Actor, userId: string): Promise<UserAccessView> {
  const { knex } = ctx;
  return knex.transaction(async (trx) => {
    const user = await lockedUser(trx, userId);
    const after = await merchantsStore(trx).patchUser(user, { tokenVersion: user.tokenVersion + 1 });
    await recordAudit(trx, actor, {
      action: 'user.revoke_tokens',
      targetType: 'user',
      targetId: userId,
      details: { tokenVersion: after.tokenVersion },
    });
    return view(after);
  });
}

/** Every JWT of every user of the merchant becomes 401 on its next use. */
export async function revokeMerchantTokens(
  ctx: UserAccessCtx,
  actor: Actor,
  merchantId: string,
): Promise<{ merchantId: string; users: UserAccessView[] }> {
  const { knex } = ctx;
  return knex.transaction(async (trx) => {
    const store = merchantsStore(trx);
    if (!(await store.findById(merchantId))) throw notFound('Merchant not found');
    await store.bumpTokenVersions(merchantId);
    const users = await store.usersOf(merchantId);
    await recordAudit(trx, actor, {
      action: 'merchant.revoke_tokens',
      targetType: 'merchant',
      targetId: merchantId,
      details: { userIds: users.map((u) => u.id) },
    });
    return { merchantId, users: users.map(view) };
  });
}

/** DISABLED is refused (403) on every authenticated route and at login; disabling also revokes tokens. */
export async function setUserStatus(
  ctx: UserAccessCtx,
  actor: Actor,
  userId: string,
  status: UserStatus,
): Promise<UserAccessView> {
  const { knex } = ctx;
  return knex.transaction(async (trx) => {
    const user = await lockedUser(trx, userId);
    const bump = status === 'DISABLED' && user.status !== 'DISABLED';
    const after = await merchantsStore(trx).patchUser(user, {
      status,
      tokenVersion: user.tokenVersion + (bump ? 1 : 0),
    });
    await recordAudit(trx, actor, {
      action: 'user.update',
      targetType: 'user',
      targetId: userId,
      details: { status },
    });
    return view(after);
  });
}

export type UserAccessService = ReturnType<typeof createUserAccessService>;
