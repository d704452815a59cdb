/**
 * Acquirer callbacks are authenticated by HMAC-SHA256 of the raw body with the shared
 * ACQUIRER_CALLBACK_SECRET, lowercase hex in `x-acquirer-signature`. The simulator signs with this
 * module and the service's callback routes verify with it.
 */
import crypto from 'node:crypto';

export const CALLBACK_SIGNATURE_HEADER = 'x-acquirer-signature';

export function signCallback(secret: string, rawBody: string | Buffer): string {
  return crypto.createHmac('sha256', secret).update(rawBody).digest('hex');
}

export function verifyCallback(secret: string, rawBody: string | Buffer, signature: unknown): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = Buffer.from(signCallback(secret, rawBody), 'hex');
  return crypto.timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}
