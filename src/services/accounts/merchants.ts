/**
 * Merchants, their login user and their PIX keys: the operator's use cases (docs/operations.md "The admin API")
 * and the merchant's own profile. Every operator action writes an audit row in the same
 * transaction. Admin API and ops CLI both call these functions, so the rules live here only.
 */
import type { z } from 'zod';
import { bindContext } from '../../lib/bind-context';
import type * as contract from '../../contracts/merchants';
import type { KycStatus, MerchantStatus, PixKeyStatus } from '../../contracts/statuses';
import { assertPageWithinDepth } from '../../contracts/validation';
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import type { Config } from '../../config';
import type { Logger } from '../../lib/logger';
import { conflict, notFound, validationError } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { turnBatcher } from '../../lib/batcher';
import { merchantsStore, type Merchant, type PixKey } from '../../stores/merchants';
import { validatePixKey, type PixKeyType } from '../../pix/pix-key';
import { recordAudit, type Actor } from '../platform/audit';
import { hashPassword } from './auth';
import * as ledger from '../ledger/ledger';
import { requestFingerprint, withIdempotencyKey } from '../platform/idempotency';
import { recordPixKeyUpdated } from '../pix-keys/pix-keys';
import { LRUCache } from 'lru-cache';
import { cacheInvalidation, type CacheInvalidation } from '../platform/cache-invalidation';

export type { KycStatus, MerchantStatus, PixKeyStatus };

export type PixKeyView = z.infer<typeof contract.pixKeyView>;

/** What a merchant sees of itself (docs/api.md "Balance, fee, settlement": GET /v1/merchants/me). */
export type MerchantProfile = z.infer<typeof contract.merchantProfile>;

/** What the operator sees: the profile plus identity, acquirer account and every PIX key. */
export type MerchantAdminView = z.infer<typeof contract.merchantAdminView>;

export interface CreateMerchantInput {
  name: string;
  document: string;
  email: string;
  password: string;
  feeBps?: number;
  feeFixed?: number;
  settlementDelaySeconds?: number;
}

export interface UpdateMerchantInput {
  kycStatus?: KycStatus;
  status?: MerchantStatus;
  acquirerAccountId?: string | null;
  feeBps?: number;
  feeFixed?: number;
  settlementDelaySeconds?: number;
}

export type CreatedPixKey = PixKeyView & { merchantId: string };

export type Balance = z.infer<typeof contract.balance>;

export interface MerchantsDeps {
  knex: Knex;
  config: Pick<Config, 'DEFAULT_FEE_BPS' | 'DEFAULT_FEE_FIXED' | 'DEFAULT_SETTLEMENT_DELAY_SECONDS'>;
  logger?: Logger;
  /**
   * Called after a PIX key is committed as PENDING: starts its registration at the acquirer (the
   * `pixkey-<id>` workflow), which flips the key to ACTIVE asynchronously. A failing hook leaves the
   * key PENDING for the reconciler rather than failing the operator's request.
   */
  onPixKeyCreated?: (pixKey: CreatedPixKey) => Promise<void>;
  /** Drops the profile cache when a merchant or PIX key changes (defaults to the knex's shared listener). */
  invalidation?: CacheInvalidation;
}

const iso = (d: Date | string): string => new Date(d).toISOString();

const pixKeyView = (k: PixKey): PixKeyView => ({ id: k.id, type: k.type, key: k.key, status: k.status });

/** The key a merchant "has": the newest active one, else the newest of any status. */
function currentPixKey(keys: PixKey[]): PixKey | undefined {
  return keys.find((k) => k.status === 'ACTIVE') ?? keys[0];
}

function isUniqueViolation(err: unknown, constraintHint: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; constraint?: unknown; nativeError?: { code?: unknown; constraint?: unknown } };
  const code = e.code ?? e.nativeError?.code;
  const constraint = String(e.constraint ?? e.nativeError?.constraint ?? '');
  return code === '23505' && constraint.includes(constraintHint);
}

/** What every operation reads: the dependencies, the profile cache and the balance reader built from them. */
type MerchantsCtx = MerchantsDeps & {
  invalidation: CacheInvalidation;
  profileCache: LRUCache<string, { generation: number; profile: MerchantProfile }>;
  readBalance: (merchantId: string) => Promise<Balance | undefined>;
};

export function createMerchantsService(deps: MerchantsDeps) {
  const { knex } = deps;
  const ctx: MerchantsCtx = {
    ...deps,
    invalidation: deps.invalidation ?? cacheInvalidation(knex),
    profileCache: new LRUCache<string, { generation: number; profile: MerchantProfile }>({ max: 10_000 }),
    readBalance: turnBatcher<string, Balance | undefined>(async (ids) => {
      const found = await ledger.merchantBalances(knex, [...new Set(ids)]);
      return ids.map((id) => found.get(id));
    }),
  };
  return bindContext(ctx, {
    createMerchant,
    getProfile,
    getMerchant,
    listMerchants,
    updateMerchant,
    addPixKey,
    setPixKeyStatus,
    getBalance,
    adjustBalance,
  });
}

async function keysOf(db: Db, merchantId: string): Promise<PixKey[]> {
  return merchantsStore(db).pixKeysOf([merchantId]);
}

function profile(m: Merchant, keys: PixKey[]): MerchantProfile {
  const key = currentPixKey(keys);
  return {
    id: m.id,
    name: m.name,
    status: m.status,
    kycStatus: m.kycStatus,
    acquirerConfigured: m.acquirerAccountId !== null && m.acquirerAccountId !== undefined,
    pixKey: key ? pixKeyView(key) : null,
    feeBps: m.feeBps,
    feeFixed: Number(m.feeFixed),
    settlementDelaySeconds: m.settlementDelaySeconds,
    createdAt: iso(m.createdAt),
  };
}

function adminView(m: Merchant, keys: PixKey[]): MerchantAdminView {
  return {
    ...profile(m, keys),
    document: m.document,
    email: m.email,
    acquirerAccountId: m.acquirerAccountId ?? null,
    pixKeys: keys.map(pixKeyView),
    updatedAt: iso(m.updatedAt),
  };
}

async function findMerchant(db: Db, id: string): Promise<Merchant> {
  const m = await merchantsStore(db).findById(id);
  if (!m) throw notFound('Merchant not found');
  return m;
}

/** The merchant and its USER login, in one transaction. Starts ACTIVE with KYC PENDING. */
export async function createMerchant(
  ctx: MerchantsCtx,
  actor: Actor,
  input: CreateMerchantInput,
): Promise<{ merchant: MerchantAdminView; user: { id: string; email: string; role: 'USER' } }> {
  const { knex, config } = ctx;
  const email = input.email.trim().toLowerCase();
  const passwordHash = await hashPassword(input.password);
  try {
    return await knex.transaction(async (trx) => {
      const store = merchantsStore(trx);
      if (await store.findUserByEmail(email)) throw conflict('A user with this e-mail already exists');
      if (await store.findByDocument(input.document)) {
        throw conflict('A merchant with this document already exists');
      }
      const merchant = await store.insert({
        id: newId('mch'),
        name: input.name,
        document: input.document,
        email,
        status: 'ACTIVE',
        kycStatus: 'PENDING',
        acquirerAccountId: null,
        feeBps: input.feeBps ?? config.DEFAULT_FEE_BPS,
        feeFixed: input.feeFixed ?? config.DEFAULT_FEE_FIXED,
        settlementDelaySeconds: input.settlementDelaySeconds ?? config.DEFAULT_SETTLEMENT_DELAY_SECONDS,
      });
      const user = await store.insertUser({
        id: newId('usr'),
        email,
        passwordHash,
        role: 'USER',
        merchantId: merchant.id,
      });
      await recordAudit(trx, actor, {
        action: 'merchant.create',
        targetType: 'merchant',
        targetId: merchant.id,
        details: { name: input.name, document: input.document, email, userId: user.id },
      });
      return { merchant: adminView(merchant, []), user: { id: user.id, email: user.email, role: 'USER' as const } };
    });
  } catch (err) {
    // Two concurrent creations can both pass the checks above; the unique indexes decide.
    if (isUniqueViolation(err, 'email')) throw conflict('A user with this e-mail already exists');
    if (isUniqueViolation(err, 'document')) throw conflict('A merchant with this document already exists');
    throw err;
  }
}

export async function getProfile(ctx: MerchantsCtx, merchantId: string): Promise<MerchantProfile> {
  const { invalidation, profileCache } = ctx;
  const generation = invalidation.generation();
  const hit = invalidation.live() ? profileCache.get(merchantId) : undefined;
  if (hit && hit.generation === generation) return hit.profile;
  const loaded = await loadProfile(ctx, merchantId);
  profileCache.set(merchantId, { generation, profile: loaded });
  return loaded;
}

/** One plain-row statement; the same body as `profile`. */
async function loadProfile(ctx: MerchantsCtx, merchantId: string): Promise<MerchantProfile> {
  const { knex } = ctx;
  const r = await merchantsStore(knex).profileOf(merchantId);
  if (!r) throw notFound('Merchant not found');
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    kycStatus: r.kyc_status,
    acquirerConfigured: r.acquirer_account_id !== null,
    pixKey:
      r.pix_key_id !== null
        ? {
            id: r.pix_key_id,
            type: r.pix_key_type as PixKeyType,
            key: r.pix_key_key as string,
            status: r.pix_key_status as PixKeyStatus,
          }
        : null,
    feeBps: r.fee_bps,
    feeFixed: Number(r.fee_fixed),
    settlementDelaySeconds: r.settlement_delay_seconds,
    createdAt: iso(r.created_at),
  };
}

export async function getMerchant(ctx: MerchantsCtx, id: string): Promise<MerchantAdminView> {
  const { knex } = ctx;
  const m = await findMerchant(knex, id);
  return adminView(m, await keysOf(knex, id));
}

export async function listMerchants(
  ctx: MerchantsCtx,
  opts: {
    page: number;
    limit: number;
  },
): Promise<{ total: number; merchants: MerchantAdminView[] }> {
  const { knex } = ctx;
  const store = merchantsStore(knex);
  const { total, rows } = await store.page({ limit: opts.limit, offset: (opts.page - 1) * opts.limit });
  assertPageWithinDepth(opts.page, opts.limit, total);
  const keys = await store.pixKeysOf(rows.map((r) => r.id));
  return {
    total,
    merchants: rows.map((m) =>
      adminView(
        m,
        keys.filter((k) => k.merchantId === m.id),
      ),
    ),
  };
}

export async function updateMerchant(
  ctx: MerchantsCtx,
  actor: Actor,
  id: string,
  input: UpdateMerchantInput,
): Promise<MerchantAdminView> {
  const { knex } = ctx;
  return knex.transaction(async (trx) => {
    const before = await merchantsStore(trx).findById(id, { lock: true });
    if (!before) throw notFound('Merchant not found');
    const patch: Partial<Merchant> = {};
    if (input.kycStatus !== undefined) patch.kycStatus = input.kycStatus;
    if (input.status !== undefined) patch.status = input.status;
    if (input.acquirerAccountId !== undefined) patch.acquirerAccountId = input.acquirerAccountId;
    if (input.feeBps !== undefined) patch.feeBps = input.feeBps;
    if (input.feeFixed !== undefined) patch.feeFixed = input.feeFixed;
    if (input.settlementDelaySeconds !== undefined) patch.settlementDelaySeconds = input.settlementDelaySeconds;
    const after = Object.keys(patch).length > 0 ? await merchantsStore(trx).patch(before, patch) : before;
    await recordAudit(trx, actor, {
      action: 'merchant.update',
      targetType: 'merchant',
      targetId: id,
      details: { ...input },
    });
    return adminView(after, await keysOf(trx, id));
  });
}

/** Adds a PIX key as PENDING; the acquirer registration (hook) activates it later. */
export async function addPixKey(
  ctx: MerchantsCtx,
  actor: Actor,
  merchantId: string,
  input: { type: PixKeyType; key: string },
): Promise<PixKeyView> {
  const { knex } = ctx;
  const check = validatePixKey(input.type, input.key);
  if (!check.ok) throw validationError(check.reason, 'key');
  let created: PixKey;
  try {
    created = await knex.transaction(async (trx) => {
      await findMerchant(trx, merchantId);
      if (await merchantsStore(trx).findPixKey(input.type, input.key)) {
        throw conflict('This PIX key is already registered');
      }
      const row = await merchantsStore(trx).insertPixKey({
        id: newId('pxk'),
        merchantId,
        type: input.type,
        key: input.key,
        status: 'PENDING',
      });
      await recordAudit(trx, actor, {
        action: 'pix_key.create',
        targetType: 'merchant',
        targetId: merchantId,
        details: { pixKeyId: row.id, type: input.type, key: input.key },
      });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'key')) throw conflict('This PIX key is already registered');
    throw err;
  }
  if (ctx.onPixKeyCreated) {
    try {
      await ctx.onPixKeyCreated({ ...pixKeyView(created), merchantId });
    } catch (err) {
      ctx.logger?.error({ err, pixKeyId: created.id }, 'onPixKeyCreated hook failed; key stays PENDING');
    }
  }
  return pixKeyView(created);
}

/** Operator override of a key's status; a change records `pixkey.updated` (src/services/pix-keys/pix-keys.ts). */
export async function setPixKeyStatus(
  ctx: MerchantsCtx,
  actor: Actor,
  merchantId: string,
  keyId: string,
  status: PixKeyStatus,
): Promise<PixKeyView> {
  const { knex } = ctx;
  return knex.transaction(async (trx) => {
    const key = await merchantsStore(trx).lockPixKey(merchantId, keyId);
    if (!key) throw notFound('PIX key not found');
    const from = key.status; // patchAndFetch updates `key` itself
    const updated = await merchantsStore(trx).patchPixKey(key, { status });
    if (from !== status) await recordPixKeyUpdated(trx, updated, status);
    await recordAudit(trx, actor, {
      action: 'pix_key.update',
      targetType: 'merchant',
      targetId: merchantId,
      details: { pixKeyId: keyId, from, to: status },
    });
    return pixKeyView(updated);
  });
}

/** available, pending, blocked and their total, in cents; 404 for an unknown merchant. */
export async function getBalance(ctx: MerchantsCtx, merchantId: string): Promise<Balance> {
  const { readBalance } = ctx;
  const b = await readBalance(merchantId);
  if (!b) throw notFound('Merchant not found');
  return { available: b.available, pending: b.pending, blocked: b.blocked, total: b.total };
}

/**
 * A signed adjustment of `available` (credit > 0, debit < 0; never below zero, which the ledger
 * enforces), posted and audited in one transaction. With an idempotency key the same key replays
 * the first answer and posts nothing again, also concurrently
 * (docs/api.md "Idempotency"); the key space is the merchant's, shared by the admin API and the ops CLI.
 */
export async function adjustBalance(
  ctx: MerchantsCtx,
  actor: Actor,
  merchantId: string,
  input: { amount: number; reason: string },
  idempotencyKey?: string,
): Promise<{ adjustment: { id: string; amount: number; reason: string }; balance: Balance; idempotent?: true }> {
  const { knex } = ctx;
  const id = newId('adj');
  const post = async (trx: Knex.Transaction) => {
    await ledger.postAdjustment(trx, {
      merchantId,
      amount: input.amount,
      reason: input.reason,
      reference: `adjustment:${id}`,
    });
    await recordAudit(trx, actor, {
      action: 'balance.adjust',
      targetType: 'merchant',
      targetId: merchantId,
      details: {
        adjustmentId: id,
        amount: input.amount,
        reason: input.reason,
        ...(idempotencyKey ? { idempotencyKey } : {}),
      },
    });
    return { id, amount: input.amount, reason: input.reason };
  };
  const outcome = await knex.transaction(async (trx) => {
    await findMerchant(trx, merchantId);
    if (!idempotencyKey) return { replay: false as const, result: await post(trx) };
    const fingerprint = requestFingerprint({ amount: input.amount, reason: input.reason });
    return withIdempotencyKey(
      trx,
      { scope: 'adjustment', ownerId: merchantId, key: idempotencyKey, targetId: merchantId, fingerprint },
      () => post(trx),
    );
  });
  const balance = await getBalance(ctx, merchantId);
  return outcome.replay
    ? { adjustment: outcome.result, balance, idempotent: true }
    : { adjustment: outcome.result, balance };
}

export type MerchantsService = ReturnType<typeof createMerchantsService>;
