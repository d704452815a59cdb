/**
 * Encryption at rest of secrets the service must read back in clear (webhook signing secrets):
 * AES-256-GCM under a key ring from configuration (docs/operations.md "Webhook secret encryption").
 *
 * The ring is `WEBHOOK_SECRET_KEYS="<id>:<base64 of 32 bytes>,<id>:<…>"`: the FIRST key encrypts,
 * every listed key decrypts, so a new key is put first, `npm run ops -- webhooks
 * rotate-encryption-key` re-encrypts every stored secret under it, and the old one can then go.
 * A stored value is `aesgcm2:<key id>:<iv>:<ciphertext>:<tag>` (base64url parts, a 16-byte tag);
 * the associated data binds the slot (current or previous secret), the key id and the owner (the
 * webhook id), so a ciphertext copied onto another row or into the other slot fails.
 */
import crypto from 'node:crypto';

export interface SecretKey {
  id: string;
  key: Buffer;
}

/** Which of its owner's secrets a value holds: part of the associated data, so the two cannot swap. */
export type SecretSlot = 'webhook-current' | 'webhook-previous';

/** Why a stored secret cannot be read; `keyId` names the key it needs (null when unreadable as a value). */
export class SecretUnavailableError extends Error {
  constructor(
    readonly keyId: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'SecretUnavailableError';
  }
}

const FORMAT = 'aesgcm2';
/** The format before slots were bound (migration 20261201150000_webhook_secret_slots re-encrypts it). */
const LEGACY_FORMAT = 'aesgcm1';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const IV_BYTES = 12;
/** GCM allows shorter tags; a short one is a forgery made cheaper, so only the full 16 bytes pass. */
const TAG_BYTES = 16;

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
  encrypt(plain: string, slot: SecretSlot, ownerId: string): string;
  /** The secret in clear; throws SecretUnavailableError naming the key when it cannot. */
  decrypt(stored: string, slot: SecretSlot, ownerId: string): string;
  /** The id of the key a stored value was encrypted with (null when it is no encrypted value). */
  keyIdOf(stored: string): string | null;
}

interface Parts {
  keyId: string;
  iv: Buffer;
  data: Buffer;
  tag: Buffer;
}

function parts(stored: string): Parts {
  const [format, keyId, iv, data, tag, ...rest] = stored.split(':');
  if (format === LEGACY_FORMAT && keyId !== undefined)
    throw new SecretUnavailableError(keyId, `secret stored as ${LEGACY_FORMAT} under key "${keyId}", unmigrated`);
  if (format !== FORMAT || keyId === undefined || iv === undefined || data === undefined || tag === undefined) {
    throw new SecretUnavailableError(null, 'not an encrypted secret');
  }
  if (rest.length > 0) throw new SecretUnavailableError(null, 'not an encrypted secret');
  return {
    keyId,
    iv: Buffer.from(iv, 'base64url'),
    data: Buffer.from(data, 'base64url'),
    tag: Buffer.from(tag, 'base64url'),
  };
}

/** NUL-separated: no key id, slot or generated id contains one, so no two contexts share bytes. */
const associatedData = (slot: SecretSlot, keyId: string, ownerId: string): Buffer =>
  Buffer.from([FORMAT, slot, keyId, ownerId].join('\u0000'), 'utf8');

export function createSecretBox(keys: SecretKey[]): SecretBox {
  const current = keys[0];
  if (!current) throw new Error('a secret box needs at least one key');
  const byId = new Map(keys.map((k) => [k.id, k.key]));

  function open(p: Parts, key: Buffer, aad: Buffer): string {
    if (p.tag.length !== TAG_BYTES || p.iv.length !== IV_BYTES)
      throw new SecretUnavailableError(p.keyId, `secret under key "${p.keyId}" has a malformed IV or tag`);
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, p.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(p.tag);
    try {
      return Buffer.concat([decipher.update(p.data), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnavailableError(
        p.keyId,
        `secret does not authenticate under key "${p.keyId}" (another key under that id, or a value moved)`,
      );
    }
  }

  return {
    currentKeyId: current.id,
    encrypt(plain, slot, ownerId) {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', current.key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(associatedData(slot, current.id, ownerId));
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [FORMAT, current.id, iv.toString('base64url'), data.toString('base64url'), tag.toString('base64url')].join(
        ':',
      );
    },
    decrypt(stored, slot, ownerId) {
      const p = parts(stored);
      const key = byId.get(p.keyId);
      if (!key)
        throw new SecretUnavailableError(
          p.keyId,
          `secret encrypted under key "${p.keyId}", which WEBHOOK_SECRET_KEYS does not list`,
        );
      return open(p, key, associatedData(slot, p.keyId, ownerId));
    },
    keyIdOf(stored) {
      try {
        return parts(stored).keyId;
      } catch (err) {
        if (err instanceof SecretUnavailableError) return err.keyId;
        throw err;
      }
    },
  };
}

/** The ring a configuration names: the embedded development ring when unset (refused in production by config). */
export function webhookSecretBox(keys: string | undefined): SecretBox {
  return createSecretBox(parseSecretKeys(keys ?? DEV_WEBHOOK_SECRET_KEYS));
}
