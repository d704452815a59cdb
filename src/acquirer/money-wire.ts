/**
 * BCB API Pix carries money as decimal strings (`valor.original`, `valor`: `\d{1,10}\.\d{2}`); our
 * code uses integer cents. This is the only place the two meet, and it works on digits, never
 * through floats (0.1 + 0.2 style errors would misstate an amount by a cent).
 */
const WIRE_AMOUNT = /^(\d{1,10})\.(\d{2})$/;

/** The largest amount the BCB pattern can carry: 9999999999.99. */
export const MAX_WIRE_CENTS = 999_999_999_999;

export function isWireableCents(cents: unknown): cents is number {
  return typeof cents === 'number' && Number.isSafeInteger(cents) && cents >= 0 && cents <= MAX_WIRE_CENTS;
}

/** 1234 → "12.34"; 5 → "0.05". Throws RangeError for anything but integer cents in range. */
export function centsToWire(cents: number): string {
  if (!isWireableCents(cents)) throw new RangeError(`amount must be integer cents in 0..${MAX_WIRE_CENTS}`);
  const digits = String(cents).padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** "12.34" → 1234; null when the value is not a BCB amount (e.g. "12.3", "1e3", 12.34). */
export function wireToCents(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = WIRE_AMOUNT.exec(text);
  if (!m) return null;
  return Number(m[1]) * 100 + Number(m[2]);
}
