/** Request schemas for the operator API (docs/operations.md "The admin API"). */
import { KYC_STATUSES, MERCHANT_STATUSES, PIX_KEY_STATUSES } from './statuses';
import { z } from 'zod';
import { isValidDocument } from '../pix/document';
import { PIX_KEY_TYPES } from '../pix/pix-key';
import { cents, paginationQuery, text } from './validation';
import { isoTime } from './common';
import { balance } from './merchants';

export { KYC_STATUSES, MERCHANT_STATUSES, PIX_KEY_STATUSES };

export const feeBps = z.int().min(0).max(10_000);
export const feeFixed = z.int().min(0).max(1_000_000_00);
export const settlementDelaySeconds = z
  .int()
  .min(0)
  .max(365 * 86_400);

export const createMerchantBody = z.object({
  name: text({ min: 1, max: 200 }),
  document: text({ max: 14 }).refine(isValidDocument, {
    message: 'must be a valid CPF (11 digits) or CNPJ (14 digits)',
  }),
  email: z.email().max(254),
  password: text({ min: 8, max: 200 }),
  feeBps: feeBps.optional(),
  feeFixed: feeFixed.optional(),
  settlementDelaySeconds: settlementDelaySeconds.optional(),
});
export type CreateMerchantBody = z.infer<typeof createMerchantBody>;

export const updateMerchantBody = z.object({
  kycStatus: z.enum(KYC_STATUSES).optional(),
  status: z.enum(MERCHANT_STATUSES).optional(),
  acquirerAccountId: text({ min: 1, max: 100 }).nullable().optional(),
  feeBps: feeBps.optional(),
  feeFixed: feeFixed.optional(),
  settlementDelaySeconds: settlementDelaySeconds.optional(),
});
export type UpdateMerchantBody = z.infer<typeof updateMerchantBody>;

export const addPixKeyBody = z.object({
  type: z.enum(PIX_KEY_TYPES),
  // Format per type is checked by the service (src/pix/pix-key.ts), which names the rule broken.
  key: text({ min: 1, max: 100 }),
});
export type AddPixKeyBody = z.infer<typeof addPixKeyBody>;

export const updatePixKeyBody = z.object({
  status: z.enum(PIX_KEY_STATUSES),
});

export const adjustmentBody = z.object({
  amount: cents.refine((v) => v !== 0, { message: 'must not be zero' }),
  reason: text({ min: 1, max: 500 }),
});
export type AdjustmentBody = z.infer<typeof adjustmentBody>;

/** Both lists keep the depth rule of docs/api.md "Pagination limits" (`assertPageWithinDepth`). */
export const listMerchantsQuery = paginationQuery;

export const auditLogQuery = paginationQuery.extend({
  /** Defaults to "merchant" when targetId is given. */
  targetType: text({ min: 1, max: 32 }).optional(),
  targetId: text({ min: 1, max: 64 }).optional(),
});

// ---- responses ----------------------------------------------------------------------------

export const auditLogEntry = z.object({
  id: z.string(),
  actorUserId: z.string().nullable(),
  actorEmail: z.string(),
  action: z.string(),
  targetType: z.string(),
  targetId: z.string(),
  details: z.unknown(),
  createdAt: isoTime,
});
export const auditLogResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  entries: z.array(auditLogEntry),
});

export const adjustmentResponse = z.object({
  adjustment: z.object({ id: z.string(), amount: z.int(), reason: z.string() }),
  balance,
  idempotent: z.literal(true).optional().describe('Present on a replay of an idempotency key (200)'),
});
