/**
 * Withdrawal contracts (docs/architecture.md "Withdrawals: the saga"): the request body, the list query and the
 * sandbox's transfer outcome body the routes validate with, and the response shapes the routes
 * answer with (the OpenAPI document is generated from both).
 */
import { z } from 'zod';
import { PIX_KEY_TYPES, validatePixKey } from '../pix/pix-key';
import { WITHDRAWAL_STATUSES } from './statuses';
import { paginationQuery, text } from './validation';
import { isoTime } from './common';
import { balance } from './merchants';

/** Smallest withdrawal, in cents (docs/architecture.md "Withdrawals: the saga": at least R$ 1,00, the whole amount available). */
export const MIN_WITHDRAWAL_CENTS = 100;

export const createWithdrawalBody = z
  .object({
    amount: z.int().min(MIN_WITHDRAWAL_CENTS).max(1_000_000_000_00),
    pixKeyType: z.enum(PIX_KEY_TYPES),
    // The longest valid key is an e-mail of 77 characters; the type-specific check follows.
    pixKey: text({ min: 1, max: 77 }),
    description: text({ max: 200 }).optional(),
  })
  .superRefine((body, ctx) => {
    const check = validatePixKey(body.pixKeyType, body.pixKey);
    if (!check.ok) {
      // "PIX key of type CPF must be 11 digits" → "pixKey does not match pixKeyType CPF: must be 11 digits"
      const detail = check.reason.replace(/^PIX key of type \w+ /, '');
      ctx.addIssue({
        code: 'custom',
        path: ['pixKey'],
        message: `does not match pixKeyType ${body.pixKeyType}: ${detail}`,
      });
    }
  });
export type CreateWithdrawalBody = z.infer<typeof createWithdrawalBody>;

export const listWithdrawalsQuery = paginationQuery;
export type ListWithdrawalsQuery = z.infer<typeof listWithdrawalsQuery>;

export const sandboxTransferOutcomeBody = z.object({ reason: text({ min: 1, max: 140 }).optional() }).default({});

export const sandboxTransferResponse = z.object({ message: z.string(), transferId: z.string() });

// ---- responses: what the routes answer (the services' views are typed from these) ------------

export { balance };

export const withdrawal = z.object({
  id: z.string(),
  amount: z.int(),
  description: z.string().nullable(),
  status: z.enum(WITHDRAWAL_STATUSES),
  batchId: z.string().nullable(),
  createdAt: isoTime,
});

export const withdrawalListItem = withdrawal.extend({
  pixKey: z.string().nullable(),
  pixKeyType: z.enum(PIX_KEY_TYPES).nullable(),
});

export const createWithdrawalResponse = z.object({
  message: z.string(),
  withdraw: withdrawal,
  balance,
  idempotent: z.literal(true).optional().describe('Present on a replay of an idempotency key (200)'),
});

export const listWithdrawalsResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  withdrawals: z.array(withdrawalListItem),
});

export const getWithdrawalResponse = z.object({ withdraw: withdrawalListItem });
