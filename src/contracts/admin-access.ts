/** Request schemas for the operator's control over logins (README "Auth hardening"). */
import { z } from 'zod';
import { USER_STATUSES } from './statuses';

export const updateUserBody = z.object({ status: z.enum(USER_STATUSES) });
