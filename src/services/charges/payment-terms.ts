/**
 * Whether a payment pays its charge, and what it credits (docs/api.md "Due-date charges"): an
 * immediate charge takes exactly its amount; a due-date charge takes, within its validity, the
 * amount due on the payment's São Paulo date (src/domain/due-date-amount.ts), which is what the
 * payer's bank computed from the cobv, and credits what was paid.
 */
import { amountDueOn, paidAmountOf, payableOn, saoPauloDate, type DueAmount } from '../../domain/due-date-amount';
import type { Charge } from '../../models/charge';
import type { PaymentNotice } from '../../../workflows/charge-types';

export type PaymentBreakdown = Omit<DueAmount, 'total'>;

export interface PaymentTerms {
  payable: boolean;
  /** What the payment credits: the amount paid. */
  paid: number;
  /** A due-date charge's fine, interest, discount and abatement that day; null for the others. */
  breakdown: PaymentBreakdown | null;
}

export function paymentTermsOf(
  charge: Pick<Charge, 'type' | 'amount' | 'dueRules'>,
  notice: Pick<PaymentNotice, 'amount' | 'paidAt'>,
): PaymentTerms {
  const rules = charge.dueRules;
  if (charge.type !== 'DUE_DATE' || !rules)
    return { payable: notice.amount === charge.amount, paid: charge.amount, breakdown: null };
  const day = saoPauloDate(new Date(notice.paidAt));
  const { total, ...breakdown } = amountDueOn(charge.amount, rules, day);
  return { payable: payableOn(rules, day) && notice.amount === total, paid: notice.amount, breakdown };
}

export { paidAmountOf };

/** The columns a due-date payment books beside the nominal amount (none for the others). */
export const paidColumnsOf = (terms: PaymentTerms): Partial<Pick<Charge, 'amountPaid' | 'paymentBreakdown'>> =>
  terms.breakdown ? { amountPaid: terms.paid, paymentBreakdown: terms.breakdown } : {};

/** `charge.paid` data beside `amount` (docs/api.md "Events"): the nominal and paid amounts and the breakdown. */
export const paidEventAmounts = (charge: Pick<Charge, 'amount'>, terms: PaymentTerms) => ({
  amount: charge.amount,
  nominalAmount: charge.amount,
  paidAmount: terms.paid,
  breakdown: terms.breakdown,
});
