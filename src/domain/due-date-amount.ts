/**
 * What a due-date charge (BCB cobv) costs on a payment date, as the payer's bank computes it from
 * the signed payload (docs/api.md "Due-date charges"): the simulator answers payments with it and
 * the charge service checks a payment against it. Pure: integer cents, calendar dates
 * `YYYY-MM-DD` in America/Sao_Paulo, percentages in hundredths of a percent (250 = 2.50 %).
 *
 * Order: the abatement comes off the original first; a discount (of the original) applies on or
 * before its date; after the due date the fine (of the abated amount) and interest per calendar
 * day after the due date (of the abated amount) are added. Each part is rounded half up to a cent.
 */

export type FineRule = { mode: 'FIXED'; amount: number } | { mode: 'PERCENT'; percent: number };
export type InterestRule = { mode: 'AMOUNT_PER_DAY'; amount: number } | { mode: 'PERCENT_PER_MONTH'; percent: number };
export type AbatementRule = { mode: 'FIXED'; amount: number } | { mode: 'PERCENT'; percent: number };
export type DiscountRule =
  | { mode: 'FIXED_UNTIL'; until: Array<{ date: string; amount: number }> }
  | { mode: 'PERCENT_UNTIL'; until: Array<{ date: string; percent: number }> };

export interface DueDateRules {
  dueDate: string;
  /** Calendar days after the due date the charge can still be paid. */
  validityAfterDue: number;
  fine?: FineRule;
  interest?: InterestRule;
  discount?: DiscountRule;
  abatement?: AbatementRule;
}

export interface DueAmount {
  /** What the payer pays that day, in cents. */
  total: number;
  fine: number;
  interest: number;
  discount: number;
  abatement: number;
}

/** Brazil keeps UTC−3 all year (no daylight saving since 2019): São Paulo's calendar day of an instant. */
export const SAO_PAULO_OFFSET_MS = -3 * 3_600_000;

export function saoPauloDate(at: Date): string {
  return new Date(at.getTime() + SAO_PAULO_OFFSET_MS).toISOString().slice(0, 10);
}

/** The instant a São Paulo calendar day begins. */
export function startOfSaoPauloDay(date: string): Date {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) - SAO_PAULO_OFFSET_MS);
}

/** `date` plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** Whole calendar days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** The end of validity: the start of the day after dueDate + validityAfterDue, in São Paulo. */
export function validityEnd(rules: Pick<DueDateRules, 'dueDate' | 'validityAfterDue'>): Date {
  return startOfSaoPauloDay(addDays(rules.dueDate, rules.validityAfterDue + 1));
}

/** Whether a payment on `date` is within the charge's validity. */
export function payableOn(rules: Pick<DueDateRules, 'dueDate' | 'validityAfterDue'>, date: string): boolean {
  return daysBetween(date, addDays(rules.dueDate, rules.validityAfterDue)) >= 0;
}

/** round(value × numerator / denominator), half up, exact in integers. */
function share(value: number, numerator: number, denominator: number): number {
  const n = BigInt(value) * BigInt(numerator);
  const d = BigInt(denominator);
  return Number((2n * n + d) / (2n * d));
}

function discountOn(original: number, rule: DiscountRule | undefined, date: string): number {
  if (!rule) return 0;
  // The first date on or after the payment's: the discount in force that day.
  const dates = [...rule.until].sort((a, b) => a.date.localeCompare(b.date));
  const entry = dates.find((d) => daysBetween(date, d.date) >= 0);
  if (!entry) return 0;
  return 'amount' in entry ? entry.amount : share(original, entry.percent, 10_000);
}

/** The amount due on `date` (YYYY-MM-DD, São Paulo) for a charge of `original` cents. */
export function amountDueOn(original: number, rules: DueDateRules, date: string): DueAmount {
  const r = rules.abatement;
  const abatement = !r ? 0 : r.mode === 'FIXED' ? r.amount : share(original, r.percent, 10_000);
  const base = original - abatement;
  const late = daysBetween(rules.dueDate, date);
  const discount = late <= 0 ? discountOn(original, rules.discount, date) : 0;
  let fine = 0;
  let interest = 0;
  if (late > 0) {
    const f = rules.fine;
    if (f) fine = f.mode === 'FIXED' ? f.amount : share(base, f.percent, 10_000);
    const i = rules.interest;
    if (i) interest = i.mode === 'AMOUNT_PER_DAY' ? i.amount * late : share(base, i.percent * late, 10_000 * 30);
  }
  return { total: base - discount + fine + interest, fine, interest, discount, abatement };
}

/**
 * What the payer paid for a charge: a due-date charge's amount paid once paid, else its amount.
 * Refunds, MED and settlement count from it.
 */
export const paidAmountOf = (charge: { amount: number; amountPaid: number | null }): number =>
  charge.amountPaid ?? charge.amount;
