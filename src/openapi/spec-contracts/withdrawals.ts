/**
 * Withdrawal request and response shapes as the API contract states them (README "Behaviour the
 * spec leaves open", Withdrawals), for the OpenAPI document. The withdrawal routes validate with
 * their own schemas; when those exist, export them from here instead so the document is
 * generated from exactly what the routes validate.
 */
import { WITHDRAWAL_STATUSES } from '../../contracts/statuses';
import { z } from 'zod';
import { PIX_KEY_TYPES } from '../../pix/pix-key';
import { paginationQuery, text } from '../../contracts/validation';

export { WITHDRAWAL_STATUSES };

export const createWithdrawalBody = z.object({
  amount: z.int().min(100).max(1_000_000_000_00).describe('Cents; the whole amount must be available'),
  pixKeyType: z.enum(PIX_KEY_TYPES),
  pixKey: text({ min: 1, max: 77 }).describe('Destination key; its format must match pixKeyType'),
  description: text({ max: 200 }).optional(),
});

export const listWithdrawalsQuery = paginationQuery;

export const balance = z.object({
  available: z.int(),
  pending: z.int(),
  blocked: z.int(),
  total: z.int().describe('available + pending + blocked'),
});

export const withdrawal = z.object({
  id: z.string(),
  amount: z.int(),
  description: z.string().nullable(),
  status: z.enum(WITHDRAWAL_STATUSES),
  batchId: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

export const withdrawalListItem = withdrawal.extend({
  pixKey: z.string().nullable(),
  pixKeyType: z.enum(PIX_KEY_TYPES).nullable(),
});

export const createWithdrawalResponse = z.object({ message: z.string(), withdraw: withdrawal, balance });

export const listWithdrawalsResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  withdrawals: z.array(withdrawalListItem),
});
