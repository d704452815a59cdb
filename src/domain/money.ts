/**
 * Money rules as pure integer arithmetic on cents. No floats anywhere money is computed.
 */

/** round-half-up(amount × bps / 10000) + fixed, never above the amount (docs/architecture.md "Money and the ledger"). */
export function computeFee(amountCents: number, feeBps: number, feeFixedCents: number): number {
  assertCents(amountCents, 'amount');
  assertCents(feeFixedCents, 'fixed fee');
  if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps > 10_000) throw new RangeError('fee bps must be 0..10000');
  // Integer half-up: floor((a·b + 5000) / 10000), in BigInt so the product stays exact for any
  // safe amount (a·b can pass 2^53 long before a does).
  const percentPart = Number((BigInt(amountCents) * BigInt(feeBps) + 5_000n) / 10_000n);
  return Math.min(amountCents, percentPart + feeFixedCents);
}

/** Splits a debit between available and pending, available first (refunds; docs/api.md "Charges"). */
export function splitAvailableFirst(
  amount: number,
  available: number,
  pending: number,
): { fromAvailable: number; fromPending: number } | null {
  if (amount > available + pending) return null;
  const fromAvailable = Math.min(amount, available);
  return { fromAvailable, fromPending: amount - fromAvailable };
}

/** Cents → "12.34" (the one decimal form the API uses: charge.refunded's amount, docs/api.md "Webhooks"). */
export function centsToDecimalString(cents: number): string {
  assertCents(cents, 'amount');
  const whole = Math.floor(cents / 100);
  const frac = cents % 100;
  return `${whole}.${frac.toString().padStart(2, '0')}`;
}

export function assertCents(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${what} must be a non-negative integer of cents`);
}
