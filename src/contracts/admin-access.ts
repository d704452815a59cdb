/** The operator's control over logins (docs/api.md "Auth hardening"): request body and response shapes. */
import { z } from 'zod';
import { USER_STATUSES } from './statuses';

export const updateUserBody = z.object({ status: z.enum(USER_STATUSES) });

export const userAccess = z.object({
  id: z.string(),
  email: z.string(),
  role: z.string(),
  merchantId: z.string().nullable(),
  status: z.enum(USER_STATUSES),
  tokenVersion: z.int(),
  createdAt: z.iso.datetime(),
});

export const userAccessResponse = z.object({ user: userAccess });
export const merchantUsersResponse = z.object({ users: z.array(userAccess) });
export const merchantTokensRevokedResponse = z.object({ merchantId: z.string(), users: z.array(userAccess) });
