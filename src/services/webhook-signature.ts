/**
 * Webhook signing (docs/api.md "Receiving webhooks"): `x-webhook-signature` is the lowercase hex
 * HMAC-SHA256 of the exact body bytes, keyed with the webhook's secret. Secrets are `whsec_` +
 * 32 random bytes in base64url; lists show only the first 6 and last 4 characters.
 */
import crypto from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + crypto.randomBytes(32).toString('base64url');
}

export function maskWebhookSecret(secret: string): string {
  return `${secret.slice(0, 6)}****${secret.slice(-4)}`;
}

export function signWebhookBody(secret: string, body: Buffer | string): string {
  return crypto.createHmac('sha256', secret).update(body).digest('hex');
}

/** Constant-time check of a received signature against the body (what a receiver does). */
export function verifyWebhookSignature(secret: string, body: Buffer | string, signature: string): boolean {
  const expected = Buffer.from(signWebhookBody(secret, body), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
