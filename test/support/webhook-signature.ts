/**
 * An independent receiver-side check of `x-webhook-signature`, written from the documented scheme
 * (docs/api.md "Receiving webhooks": lowercase hex HMAC-SHA256 of the raw body bytes, keyed with the
 * webhook's secret, the whole `whsec_…` string) with node:crypto only. The test receivers use this
 * rather than the app's own verifier so that a wrong key derivation or encoding in the app makes
 * the webhook tests fail instead of agreeing with itself.
 */
import crypto from 'node:crypto';

export function receiverVerifiesSignature(secret: string, raw: Buffer, signature: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(raw).digest();
  return crypto.timingSafeEqual(Buffer.from(signature, 'hex'), expected);
}
