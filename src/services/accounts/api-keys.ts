/**
 * API keys (docs/api.md "Authentication").
 *
 * A key's value is `pixflow_` + 40 random base62 characters (~238 bits). Only
 * HMAC-SHA256(value, API_KEY_PEPPER) and the last four characters are stored: a database leak
 * yields neither usable keys nor hashes that can be brute-forced without the pepper. The value is
 * returned once, at creation. Deleting removes the row, so the very next request with it is 401.
 *
 * Authentication reads through a per-process cache of key hash → (key, merchant status), dropped
 * by the `pixflow_cache` notification of any change to keys or merchants (platform/cache-invalidation.ts),
 * so a request with a known key costs no query. Deleting a key returns only after this process's
 * listener has received the deletion's own notification: every other process has been told by
 * then, and this one dropped its entries at commit.
 */
import { bindContext } from '../../lib/bind-context';
import type { z } from 'zod';
import type { apiKeyCreatedView, apiKeyListItem } from '../../contracts/auth';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../../config';
import { invalid, notFound } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { apiKeysStore, type ApiKey } from '../../stores/api-keys';
import { LRUCache } from 'lru-cache';
import { cacheInvalidation, sendMarker, type CacheInvalidation } from '../platform/cache-invalidation';

// Query builders name columns in snake_case (as in the schema); objects passed to insert/patch use
// the models' camelCase properties.
import { assertAccessAllowed, type Principal } from './auth';

export const API_KEY_PREFIX = 'pixflow_';
const RANDOM_LENGTH = 40;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** last_used_at is a hint for humans; writing it on every request would cost a write per call. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Uniform base62 by rejection sampling (bytes ≥ 248 would bias the modulo). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function generateApiKeyValue(): string {
  return API_KEY_PREFIX + randomBase62(RANDOM_LENGTH);
}

export function hashApiKey(value: string, pepper: string): string {
  return crypto.createHmac('sha256', pepper).update(value, 'utf8').digest('hex');
}

/**
 * A presented key's identity in memory: SHA-256 of the value in one call (`crypto.hash`, no Hash
 * or Hmac object), the key of the authentication cache and of the credential rate limit. It never
 * leaves the process; what the database stores and is searched by is `hashApiKey`, with the
 * pepper, which costs an HMAC and is computed only when the cache has no entry.
 */
export function apiKeyFingerprint(value: string): string {
  return crypto.hash('sha256', value, 'base64');
}

/** What lists show instead of the value: prefix, asterisks, last four. */
export function maskApiKey(last4: string): string {
  return `${API_KEY_PREFIX}${'*'.repeat(8)}${last4}`;
}

/** A key as created (full value) or listed (masked value, lastUsedAt): the response contracts' shapes. */
export type ApiKeyView = z.infer<typeof apiKeyCreatedView> &
  Partial<Pick<z.infer<typeof apiKeyListItem>, 'lastUsedAt'>>;

const iso = (d: Date | string | null | undefined): string | null =>
  d === null || d === undefined ? null : new Date(d).toISOString();

export type ApiKeysConfig = Pick<Config, 'API_KEY_PEPPER' | 'MAX_API_KEYS_PER_MERCHANT'>;

/** What authentication needs of a key, as cached (a key that does not exist is never cached). */
interface CachedKey {
  generation: number;
  id: string;
  merchantId: string;
  status: string;
  merchantStatus: string;
  lastUsedAt: number;
}

type ApiKeysDeps = {
  knex: Knex;
  config: ApiKeysConfig;
  now?: () => number;
  invalidation?: CacheInvalidation;
};
/** What every operation reads: the dependencies, the clock and the key cache. */
type ApiKeysCtx = ApiKeysDeps & {
  now: () => number;
  invalidation: CacheInvalidation;
  cache: LRUCache<string, CachedKey>;
};

export function createApiKeysService(deps: ApiKeysDeps) {
  const ctx: ApiKeysCtx = {
    ...deps,
    now: deps.now ?? Date.now,
    invalidation: deps.invalidation ?? cacheInvalidation(deps.knex),
    cache: new LRUCache<string, CachedKey>({ max: 10_000 }),
  };
  return bindContext(ctx, { create, list, remove, authenticate, authenticatePresented });
}

function toView(row: ApiKey, value: string): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    description: row.description ?? '',
    value,
    status: row.status,
    createdAt: iso(row.createdAt) as string,
  };
}

export async function create(
  ctx: ApiKeysCtx,
  merchantId: string,
  createdByUserId: string | null,
  input: { name: string; description?: string },
): Promise<ApiKeyView> {
  const { knex, config } = ctx;
  const value = generateApiKeyValue();
  const row = await knex.transaction(async (trx) => {
    // Serialise creations per merchant so two concurrent requests cannot both pass the limit.
    const keys = apiKeysStore(trx);
    await keys.lockMerchantCreations(merchantId);
    const count = await keys.countOf(merchantId);
    if (count >= config.MAX_API_KEYS_PER_MERCHANT) {
      throw invalid(
        `API key limit reached (${config.MAX_API_KEYS_PER_MERCHANT} per merchant); delete an unused key first`,
      );
    }
    return keys.insert({
      id: newId('ak'),
      merchantId,
      createdByUserId,
      name: input.name,
      description: input.description ?? '',
      keyHash: hashApiKey(value, config.API_KEY_PEPPER),
      keyLast4: value.slice(-4),
      status: 'ACTIVE',
    });
  });
  return toView(row, value);
}

/** Newest first, values masked. */
export async function list(ctx: ApiKeysCtx, merchantId: string): Promise<ApiKeyView[]> {
  const { knex } = ctx;
  const rows = await apiKeysStore(knex).listOf(merchantId);
  return rows.map((r) => ({ ...toView(r, maskApiKey(r.keyLast4)), lastUsedAt: iso(r.lastUsedAt) }));
}

/** Deletes the merchant's key; another merchant's id is indistinguishable from an unknown one. */
export async function remove(ctx: ApiKeysCtx, merchantId: string, id: string): Promise<void> {
  const { invalidation, knex } = ctx;
  const marker = invalidation.newMarker();
  const seen = invalidation.waitForMarker(marker);
  const deleted = await knex.transaction(async (trx) => {
    const n = await apiKeysStore(trx).deleteOf(merchantId, id);
    if (n > 0) await sendMarker(trx, marker);
    return n;
  });
  invalidation.bump();
  if (deleted === 0) throw notFound('API key not found');
  await seen;
}

/**
 * The caller behind an API key value, or null (→ 401); 403 for a suspended merchant (docs/api.md
 * "Auth hardening"). Cached until a key or merchant changes, so a suspension holds from the next request.
 */
export function authenticate(ctx: ApiKeysCtx, value: string): Promise<Principal | null> {
  return authenticatePresented(ctx, value, apiKeyFingerprint(value));
}

/**
 * `authenticate` with the value's fingerprint already taken (the middleware takes it once per
 * request for the rate limit too): the cache is keyed by it, and the stored form, the HMAC with
 * the pepper, is computed only when the cache has no entry.
 */
export async function authenticatePresented(
  ctx: ApiKeysCtx,
  value: string,
  fingerprint: string,
): Promise<Principal | null> {
  const { invalidation, cache, knex, config, now } = ctx;
  const generation = invalidation.generation();
  let key = invalidation.live() ? cache.get(fingerprint) : undefined;
  if (key && key.generation !== generation) key = undefined;
  if (!key) {
    const row = await apiKeysStore(knex).findForAuth(hashApiKey(value, config.API_KEY_PEPPER));
    if (!row) {
      cache.delete(fingerprint);
      return null;
    }
    key = {
      // The generation read before the query: a change that committed meanwhile makes this entry stale at once.
      generation,
      id: row.id,
      merchantId: row.merchant_id,
      status: row.status,
      merchantStatus: row.merchant_status,
      lastUsedAt: row.last_used_at ? new Date(row.last_used_at).getTime() : 0,
    };
    cache.set(fingerprint, key);
  }
  if (key.status !== 'ACTIVE') return null;
  assertAccessAllowed({ merchantStatus: key.merchantStatus });
  if (now() - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    // At most one write per key per minute per process; a racing process writes the same value.
    key.lastUsedAt = now();
    await apiKeysStore(knex).touchLastUsed(key.id, new Date(key.lastUsedAt));
  }
  return { kind: 'apiKey', apiKeyId: key.id, merchantId: key.merchantId, role: 'USER' };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
