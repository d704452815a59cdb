/**
 * What a merchant and an operator see of merchants (docs/api.md "Balance, fee, settlement"): the
 * response shapes of /v1/merchants/me, its balance, and the operator's merchant views.
 */
import { z } from 'zod';
import { PIX_KEY_TYPES } from '../pix/pix-key';
import { isoTime } from './common';
import { KYC_STATUSES, MERCHANT_STATUSES, PIX_KEY_STATUSES } from './statuses';

export const pixKeyView = z.object({
  id: z.string(),
  type: z.enum(PIX_KEY_TYPES),
  key: z.string(),
  status: z.enum(PIX_KEY_STATUSES),
});

export const merchantProfile = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(MERCHANT_STATUSES),
  kycStatus: z.enum(KYC_STATUSES),
  acquirerConfigured: z.boolean(),
  pixKey: pixKeyView.nullable(),
  feeBps: z.int(),
  feeFixed: z.int(),
  settlementDelaySeconds: z.int(),
  createdAt: isoTime,
});

/** The operator's view: the profile plus identity, acquirer account and every PIX key. */
export const merchantAdminView = merchantProfile.extend({
  document: z.string(),
  email: z.string(),
  acquirerAccountId: z.string().nullable(),
  pixKeys: z.array(pixKeyView),
  updatedAt: isoTime,
});

export const balance = z.object({
  available: z.int(),
  pending: z.int(),
  blocked: z.int(),
  total: z.int().describe('available + pending + blocked'),
});

export const merchantMeResponse = z.object({ merchant: merchantProfile });
export const balanceResponse = z.object({ balance });
export const merchantResponse = z.object({ merchant: merchantAdminView });
export const merchantCreatedResponse = z.object({
  merchant: merchantAdminView,
  user: z.object({ id: z.string(), email: z.string(), role: z.literal('USER') }),
});
export const merchantListResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  merchants: z.array(merchantAdminView),
});
export const pixKeyResponse = z.object({ pixKey: pixKeyView });

/** A sandbox key action: the key as it is now; its new status follows by the acquirer's callback. */
export const sandboxPixKeyResponse = z.object({ message: z.string(), pixKey: pixKeyView });
