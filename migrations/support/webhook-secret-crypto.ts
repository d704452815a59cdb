/**
 * The webhook secret encryption the migrations apply, carried here rather than imported from src/:
 * a migration must keep doing what it did when it was written, whatever src/lib/secret-box.ts
 * becomes. Frozen: change a format only by adding one (docs/operations.md "Webhook secret encryption").
 *
 * - `aesgcm1:<key id>:<iv>:<ciphertext>:<tag>`, associated data the webhook id (both slots);
 * - `aesgcm2:…` the same parts, associated data `aesgcm2 NUL slot NUL key id NUL webhook id`.
 */
import crypto from 'node:crypto';

export type Slot = 'webhook-current' | 'webhook-previous';
export type Ring = Map<string, Buffer>;

const DEV_RING = 'dev:cGl4Zmxvdy1kZXYtb25seS13ZWJob29rLWtleSEhIUE=';

/** WEBHOOK_SECRET_KEYS as the service reads it; the first key is listed first. Production needs it set. */
export function ringFromEnv(env: NodeJS.ProcessEnv = process.env): { ring: Ring; firstId: string } {
  const text = env.WEBHOOK_SECRET_KEYS?.trim() || undefined;
  if (text === undefined && env.NODE_ENV === 'production')
    throw new Error('WEBHOOK_SECRET_KEYS: required when NODE_ENV=production');
  const ring: Ring = new Map();
  for (const entry of (text ?? DEV_RING).split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    const colon = entry.indexOf(':');
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (colon < 1 || key.length !== 32)
      throw new Error('WEBHOOK_SECRET_KEYS: each entry must be <id>:<base64 32 bytes>');
    ring.set(entry.slice(0, colon), key);
  }
  const firstId = [...ring.keys()][0];
  if (firstId === undefined) throw new Error('WEBHOOK_SECRET_KEYS: must list at least one key');
  return { ring, firstId };
}

const aadOf = (format: 'aesgcm1' | 'aesgcm2', slot: Slot, keyId: string, webhookId: string): Buffer =>
  Buffer.from(format === 'aesgcm1' ? webhookId : [format, slot, keyId, webhookId].join('\u0000'), 'utf8');

export function encryptAs(
  format: 'aesgcm1' | 'aesgcm2',
  ring: Ring,
  keyId: string,
  plain: string,
  slot: Slot,
  webhookId: string,
): string {
  const key = ring.get(keyId);
  if (!key) throw new Error(`key "${keyId}" is not in WEBHOOK_SECRET_KEYS`);
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(aadOf(format, slot, keyId, webhookId));
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [format, keyId, iv, data, cipher.getAuthTag()]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join(':');
}

/** The secret in clear and the key it was under, or null when this ring cannot read the value. */
export function decryptAny(
  ring: Ring,
  stored: string,
  slot: Slot,
  webhookId: string,
): { plain: string; keyId: string; format: string } | null {
  const [format, keyId, iv, data, tag, ...rest] = stored.split(':');
  if ((format !== 'aesgcm1' && format !== 'aesgcm2') || keyId === undefined || rest.length > 0) return null;
  const key = ring.get(keyId);
  const tagBytes = Buffer.from(tag ?? '', 'base64url');
  if (!key || iv === undefined || data === undefined || tagBytes.length !== 16) return null;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
    decipher.setAAD(aadOf(format, slot, keyId, webhookId));
    decipher.setAuthTag(tagBytes);
    const plain = Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    return { plain, keyId, format };
  } catch {
    return null;
  }
}
