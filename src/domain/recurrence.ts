/**
 * Cycle dates of a subscription (docs/api.md "Subscriptions"): cycle n falls n − 1 periods after
 * the first date; a monthly cycle keeps the first date's day, or the month's last day when the
 * month is shorter (31 January → 28/29 February → 31 March). Calendar dates, no time zone.
 */
import type { SubscriptionPeriodicity } from '../contracts/statuses';

const MONTHS: Record<Exclude<SubscriptionPeriodicity, 'WEEKLY'>, number> = {
  MONTHLY: 1,
  QUARTERLY: 3,
  SEMIANNUAL: 6,
  YEARLY: 12,
};

export function cycleDate(firstDate: string, periodicity: SubscriptionPeriodicity, cycle: number): string {
  const [y, m, d] = firstDate.split('-').map(Number) as [number, number, number];
  if (periodicity === 'WEEKLY') return new Date(Date.UTC(y, m - 1, d + 7 * (cycle - 1))).toISOString().slice(0, 10);
  const months = m - 1 + MONTHS[periodicity] * (cycle - 1);
  const last = new Date(Date.UTC(y, months + 1, 0)).getUTCDate();
  return new Date(Date.UTC(y, months, Math.min(d, last))).toISOString().slice(0, 10);
}

export const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
