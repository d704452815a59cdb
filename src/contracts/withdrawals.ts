/**
 * Request schemas for withdrawals (README "Withdrawals: the saga"): the body of a withdrawal
 * request, the list query and the sandbox's transfer outcome body.
 */
import { z } from 'zod';
import { PIX_KEY_TYPES, validatePixKey } from '../pix/pix-key';
import { paginationQuery, text } from './validation';

/** Smallest withdrawal, in cents (README "Withdrawals: the saga": at least R$ 1,00, the whole amount available). */
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
      ctx.addIssue({ code: 'custom', path: ['pixKey'], message: `does not match pixKeyType ${body.pixKeyType}: ${detail}` });
    }
  });
export type CreateWithdrawalBody = z.infer<typeof createWithdrawalBody>;

export const listWithdrawalsQuery = paginationQuery;
export type ListWithdrawalsQuery = z.infer<typeof listWithdrawalsQuery>;

export const sandboxTransferOutcomeBody = z
  .object({ reason: text({ min: 1, max: 140 }).optional() })
  .default({});
