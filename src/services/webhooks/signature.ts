/**
 * Webhook signing (docs/api.md "Receiving webhooks"). Two signatures travel on every delivery:
 *
 * - `x-webhook-signature` (the API's own, docs/api.md "Receiving webhooks"): the lowercase hex
 *   HMAC-SHA256 of the exact body bytes, keyed with the whole `whsec_…` string of the webhook's
 *   current secret.
 * - `webhook-signature` (Standard Webhooks): `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 *   keyed with the base64-decoded part after `whsec_`; one entry per valid secret, space-separated,
 *   so the official libraries verify it and a replay with a fresh timestamp fails.
 *
 * Secrets are `whsec_` + 32 random bytes in base64 (the Standard Webhooks form); lists show only
 * the first 6 and last 4 characters.
 */
import crypto from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + crypto.randomBytes(32).toString('base64');
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

/**
 * The Standard Webhooks key: the bytes the part after `whsec_` encodes. Node's base64 decoder also
 * reads the base64url secrets issued before the Standard Webhooks form (docs/api.md "Rotating the secret").
 */
export function standardWebhookKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/** The `webhook-signature` header: one `v1,<base64>` per secret (newest first), space-separated. */
export function standardWebhookSignature(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: Buffer,
): string {
  const prefix = Buffer.from(`${id}.${timestamp}.`, 'utf8');
  return secrets
    .map((s) => `v1,${crypto.createHmac('sha256', standardWebhookKey(s)).update(prefix).update(body).digest('base64')}`)
    .join(' ');
}
