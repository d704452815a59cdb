/**
 * BCB API Pix carries money as decimal strings ("12.34", `^\d{1,10}\.\d{2}$`). Our code uses
 * integer cents. The conversion lives here only, done on digits, never through floats.
 */
const WIRE_AMOUNT = /^(\d{1,10})\.(\d{2})$/;

export function centsToWire(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError('amount must be non-negative integer cents');
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** Parses "12.34" into 1234; null when the text is not a BCB amount. */
export function wireToCents(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = WIRE_AMOUNT.exec(text);
  if (!m) return null;
  return Number(m[1]) * 100 + Number(m[2]);
}
