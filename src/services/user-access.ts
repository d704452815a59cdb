/**
 * The operator's hold on logins (README "Auth hardening"): disable or re-enable a user, and revoke
 * every JWT issued so far by bumping a user's (or all of a merchant's users') token version. Each
 * action is audited in the same transaction. Suspending a merchant is `merchants.updateMerchant`;
 * both take effect on the caller's very next request because every authenticated request re-reads
 * the user and merchant state.
 */
import { USER_STATUSES, type UserStatus } from '../contracts/statuses';
import type { Knex } from 'knex';
import { notFound } from '../lib/errors';
import { Merchant } from '../models/merchant';
import { User } from '../models/user';
import { recordAudit, type Actor } from './audit';

export { USER_STATUSES, type UserStatus };

export interface UserAccessView {
  id: string;
  email: string;
  role: string;
  merchantId: string | null;
  status: UserStatus;
  tokenVersion: number;
  createdAt: string;
}

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

export function createUserAccessService(deps: { knex: Knex }) {
  const { knex } = deps;

  async function lockedUser(trx: Knex.Transaction, userId: string): Promise<User> {
    const user = await User.query(trx).findById(userId).forUpdate();
    if (!user) throw notFound('User not found');
    return user;
  }

  /** A merchant's users (to find the id to act on). */
  async function listMerchantUsers(merchantId: string): Promise<UserAccessView[]> {
    if (!(await Merchant.query(knex).findById(merchantId))) throw notFound('Merchant not found');
    const users = await User.query(knex).where({ merchant_id: merchantId }).orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ]);
    return users.map(view);
  }

  /** Every JWT the user holds becomes 401 on its next use. */
  async function revokeUserTokens(actor: Actor, userId: string): Promise<UserAccessView> {
    return knex.transaction(async (trx) => {
      const user = await lockedUser(trx, userId);
      const after = await user.$query(trx).patchAndFetch({ tokenVersion: user.tokenVersion + 1, updatedAt: new Date() });
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
  async function revokeMerchantTokens(actor: Actor, merchantId: string): Promise<{ merchantId: string; users: UserAccessView[] }> {
    return knex.transaction(async (trx) => {
      if (!(await Merchant.query(trx).findById(merchantId))) throw notFound('Merchant not found');
      await trx('users')
        .where({ merchant_id: merchantId })
        .update({ token_version: trx.raw('token_version + 1'), updated_at: trx.fn.now() });
      const users = await User.query(trx).where({ merchant_id: merchantId }).orderBy('created_at');
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
  async function setUserStatus(actor: Actor, userId: string, status: UserStatus): Promise<UserAccessView> {
    return knex.transaction(async (trx) => {
      const user = await lockedUser(trx, userId);
      const bump = status === 'DISABLED' && user.status !== 'DISABLED';
      const after = await user
        .$query(trx)
        .patchAndFetch({ status, tokenVersion: user.tokenVersion + (bump ? 1 : 0), updatedAt: new Date() });
      await recordAudit(trx, actor, { action: 'user.update', targetType: 'user', targetId: userId, details: { status } });
      return view(after);
    });
  }

  return { listMerchantUsers, revokeUserTokens, revokeMerchantTokens, setUserStatus };
}

export type UserAccessService = ReturnType<typeof createUserAccessService>;
