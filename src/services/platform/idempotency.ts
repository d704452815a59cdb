/**
 * `x-idempotency-key` for operations that move money without creating a keyed row of their own
 * (refunds, operator adjustments; docs/api.md "Idempotency").
 *
 * The key row is inserted first, inside the operation's own transaction. PostgreSQL makes a second
 * insert of the same key wait until the first transaction ends: if it committed, the second finds
 * the key and replays the stored result; if it rolled back (the operation was refused), the second
 * goes ahead as if it were first. So twenty concurrent requests with one key move money once and
 * all get the same answer, and a refused request never poisons its key.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { conflict, unprocessable } from '../../lib/errors';
import { idempotencyKeysStore } from '../../stores/idempotency-keys';

/** JSON with object keys sorted at every level and `undefined` members left out. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * What makes two requests under one idempotency key "the same"
 * (docs/api.md "Idempotency"): the SHA-256 of the canonical JSON of the validated input — after defaults, with
 * unknown fields already dropped — so key order, whitespace and ignored fields do not count.
 */
export function requestFingerprint(input: unknown): Buffer {
  return createHash('sha256').update(canonicalJson(input)).digest();
}

/**
 * The rule for the endpoints where money leaves (withdrawals, refunds, adjustments): a key first
 * used with another body is a 422, since a mismatch can hide a money error. Charges replay any body
 * (docs/api.md "Idempotency"). A key stored before fingerprints existed (null) matches any body.
 */
export function assertSameRequest(key: string, stored: Buffer | null | undefined, fingerprint: Buffer): void {
  if (stored && !stored.equals(fingerprint)) {
    throw unprocessable(
      `Idempotency key "${key}" was already used with a different request body`,
      'idempotency_key_reused',
    );
  }
}

export interface IdempotencyScope {
  /** What the key protects, e.g. `charge_refund`, `adjustment`. */
  scope: string;
  /** Whose key space: the merchant. */
  ownerId: string;
  key: string;
  /** The resource acted on; the same key on another resource is a 409. */
  targetId: string;
  /** `requestFingerprint` of the validated input; the same key with another one is a 422. */
  fingerprint: Buffer;
}

export type Idempotent<T> = { replay: false; result: T } | { replay: true; result: T };

export async function withIdempotencyKey<T>(
  trx: Knex.Transaction,
  k: IdempotencyScope,
  run: () => Promise<T>,
): Promise<Idempotent<T>> {
  const store = idempotencyKeysStore(trx);
  if (!(await store.take(k))) {
    const row = await store.find<T>(k);
    if (!row || row.result === null)
      throw conflict('A request with this idempotency key is still being processed', 'idempotency_key_in_use');
    if (row.target_id !== k.targetId)
      throw conflict('This idempotency key was already used for another resource', 'idempotency_key_in_use');
    assertSameRequest(k.key, row.request_hash, k.fingerprint);
    return { replay: true, result: row.result };
  }
  const result = await run();
  await store.storeResult(k, result);
  return { replay: false, result };
}
