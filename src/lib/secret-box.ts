/**
 * Encryption at rest of secrets the service must read back in clear (webhook signing secrets):
 * AES-256-GCM under a key ring from configuration (docs/operations.md "Webhook secret encryption").
 *
 * The ring is `WEBHOOK_SECRET_KEYS="<id>:<base64 of 32 bytes>,<id>:<…>"`: the FIRST key encrypts,
 * every listed key decrypts, so a new key is put first, `npm run ops -- webhooks
 * rotate-encryption-key` re-encrypts every stored secret under it, and the old one can then go.
 * A stored value is `aesgcm1:<key id>:<iv>:<ciphertext>:<tag>` (base64url parts); the caller's
 * `aad` (the webhook id) is authenticated with it, so a ciphertext copied onto another row fails.
 */
import crypto from 'node:crypto';

export interface SecretKey {
  id: string;
  key: Buffer;
}

const FORMAT = 'aesgcm1';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * The embedded development and test key ring: published in the repository, so it protects nothing.
 * Production refuses to start with it or without WEBHOOK_SECRET_KEYS (docs/production.md "Configuration").
 */
export const DEV_WEBHOOK_SECRET_KEYS = 'dev:cGl4Zmxvdy1kZXYtb25seS13ZWJob29rLWtleSEhIUE=';
export const DEV_WEBHOOK_SECRET_KEY_ID = 'dev';

/** Parses a key ring; throws an Error whose message says what is wrong (never echoing a key). */
export function parseSecretKeys(text: string): SecretKey[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new Error('must list at least one <id>:<base64 key>');
  const keys: SecretKey[] = [];
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon);
    const encoded = colon < 0 ? '' : entry.slice(colon + 1);
    if (!KEY_ID.test(id)) throw new Error('each entry must be <id>:<base64 key>, id of letters, digits, - or _');
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) throw new Error(`key ${id}: not base64`);
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32) throw new Error(`key ${id}: must be 32 bytes (base64 of 32 random bytes)`);
    if (keys.some((k) => k.id === id)) throw new Error(`key id ${id} is listed twice`);
    keys.push({ id, key });
  }
  return keys;
}

export interface SecretBox {
  /** The id of the key new ciphertexts use. */
  currentKeyId: string;
  encrypt(plain: string, aad: string): string;
  decrypt(stored: string, aad: string): string;
  /** The id of the key a stored value was encrypted with. */
  keyIdOf(stored: string): string;
}

export function createSecretBox(keys: SecretKey[]): SecretBox {
  const current = keys[0];
  if (!current) throw new Error('a secret box needs at least one key');
  const byId = new Map(keys.map((k) => [k.id, k.key]));

  function parts(stored: string): { keyId: string; iv: Buffer; data: Buffer; tag: Buffer } {
    const [format, keyId, iv, data, tag, ...rest] = stored.split(':');
    if (format !== FORMAT || keyId === undefined || iv === undefined || data === undefined || tag === undefined) {
      throw new Error('not an encrypted secret');
    }
    if (rest.length > 0) throw new Error('not an encrypted secret');
    return {
      keyId,
      iv: Buffer.from(iv, 'base64url'),
      data: Buffer.from(data, 'base64url'),
      tag: Buffer.from(tag, 'base64url'),
    };
  }

  return {
    currentKeyId: current.id,
    encrypt(plain, aad) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [FORMAT, current.id, iv.toString('base64url'), data.toString('base64url'), tag.toString('base64url')].join(
        ':',
      );
    },
    decrypt(stored, aad) {
      const p = parts(stored);
      const key = byId.get(p.keyId);
      if (!key) throw new Error(`secret encrypted under key "${p.keyId}", which WEBHOOK_SECRET_KEYS does not list`);
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, p.iv);
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(p.tag);
      return Buffer.concat([decipher.update(p.data), decipher.final()]).toString('utf8');
    },
    keyIdOf: (stored) => parts(stored).keyId,
  };
}

/** The ring a configuration names: the embedded development ring when unset (refused in production by config). */
export function webhookSecretBox(keys: string | undefined): SecretBox {
  return createSecretBox(parseSecretKeys(keys ?? DEV_WEBHOOK_SECRET_KEYS));
}

/**
 * The ring for code that runs without a loaded Config (the migration that encrypts existing
 * secrets): the same rules as config.ts, production included.
 */
export function webhookSecretBoxFromEnv(env: NodeJS.ProcessEnv = process.env): SecretBox {
  const keys = env.WEBHOOK_SECRET_KEYS?.trim() || undefined;
  if (keys === undefined && env.NODE_ENV === 'production') {
    throw new Error('WEBHOOK_SECRET_KEYS: required when NODE_ENV=production');
  }
  return webhookSecretBox(keys);
}
