/**
 * What the charges service builds once and every operation shares (CONTRIBUTING.md "Layout"): its
 * dependencies, the list cache, the creation's batched writes and the prerequisites cache, with the
 * helpers that read them. The operations are module-level functions taking this context first.
 */
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config';
import type { Logger } from '../../lib/logger';
import { conflict, forbidden, notFound } from '../../lib/errors';
import { chargesStore, type NewCharge } from '../../stores/charges';
import type { Acquirer } from '../../acquirer/types';
import { AcquirerError } from '../../acquirer/errors';
import type { ChargeWorkflows } from '../../temporal/clients/charge';
import type { ListChargesQuery } from '../../contracts/charges';
import { replayView, type ChargeListItem, type ChargeRow } from './views';
import { cacheInvalidation, type CacheInvalidation } from '../platform/cache-invalidation';
import { listPageReader } from './list';
import { asError, turnBatcher } from '../../lib/batcher';
import { errorMessage } from '../../lib/error-message';

export interface ChargesDeps {
  knex: Knex;
  config: Pick<Config, 'CHARGE_LIST_CACHE_MS'>;
  logger: Logger;
  acquirer: Acquirer;
  workflows: ChargeWorkflows;
  /** Drops the prerequisites cache when a merchant or PIX key changes (defaults to the knex's shared listener). */
  invalidation?: CacheInvalidation;
}

/** What charge creation needs of its merchant, cached per process (docs/performance.md "Where a charge's time goes"). */
interface Prerequisites {
  generation: number;
  /** Why charges are refused (403), or null when they are allowed. */
  refusal: string | null;
  pixKey: string | null;
}

export type CreateChargeResult =
  | { replay: false; charge: ReturnType<typeof replayView> & { imageBase64: string } }
  | { replay: true; charge: ReturnType<typeof replayView> };

/** A page of the merchant's charges as the list answers it (and caches it). */
export interface ChargesPage {
  page: number;
  limit: number;
  total: number;
  charges: ChargeListItem[];
}

export interface ChargesContext {
  readonly knex: Knex;
  readonly logger: Logger;
  readonly acquirer: Acquirer;
  readonly workflows: ChargeWorkflows;
  readonly listCache: LRUCache<string, ChargesPage>;
  /** Each merchant's list-cache generation, part of every key (see `chargesContext`). */
  readonly generations: Map<string, number>;
  nextGeneration: number;
  readonly readPage: ReturnType<typeof listPageReader>;
  /** The charge inserted, or null when its idempotency key was taken. */
  readonly insertCharge: (charge: NewCharge) => Promise<Date | null>;
  /** False when the charge was no longer PENDING without a BR Code. */
  readonly storeQrCode: (item: { id: string; qrCode: string }) => Promise<boolean>;
  readonly invalidation: CacheInvalidation;
  readonly prerequisiteCache: LRUCache<string, Prerequisites>;
}

/** How long a concurrent request with the same idempotency key waits for the first to finish. */
const IN_FLIGHT_WAIT_MS = 10_000;
/** Quick retries of a retryable acquirer failure while the client waits for its 201. */
const COB_ATTEMPTS = 3;

export function chargesContext(deps: ChargesDeps): ChargesContext {
  const { knex, acquirer, workflows, logger } = deps;
  // The list cache (docs/api.md "Charges": 3 s per (merchant, query), dropped on that merchant's own writes in
  // this process). Dropping bumps the merchant's generation, which is part of every key, so it costs
  // O(1) however many entries the cache holds; entries of older generations are never read again and
  // age out by TTL or LRU.
  const listCache = new LRUCache<string, ChargesPage>({
    max: 5_000,
    ttl: Math.max(deps.config.CHARGE_LIST_CACHE_MS, 1),
  });
  const readPage = listPageReader(knex);
  const { insertCharge, storeQrCode } = creationWrites(knex);
  // The merchant and its ACTIVE PIX key rarely change and are read by every creation: cached per
  // merchant until the `pixflow_cache` notification of a change to merchants or PIX keys (sent by
  // a trigger as the change commits) bumps the generation. A missing merchant is not cached.
  const invalidation = deps.invalidation ?? cacheInvalidation(knex);
  const prerequisiteCache = new LRUCache<string, Prerequisites>({ max: 10_000 });
  return {
    knex,
    logger,
    acquirer,
    workflows,
    listCache,
    generations: new Map<string, number>(),
    nextGeneration: 0,
    readPage,
    insertCharge,
    storeQrCode,
    invalidation,
    prerequisiteCache,
  };
}

/**
 * The creation's two writes, batched per event-loop turn (docs/performance.md "Where a charge's time goes").
 * A statement that fails for one row fails for all: the rows are then tried alone, so only the
 * request whose row is at fault gets the error.
 */
function creationWrites(knex: Knex): Pick<ChargesContext, 'insertCharge' | 'storeQrCode'> {
  const insertCharge = turnBatcher<NewCharge, Date | null>(async (cs) => {
    const insertAll = async (list: NewCharge[]) => {
      const created = await chargesStore(knex).insertManyUnlessKeyTaken(list);
      return list.map((c) => created.get(c.id) ?? null);
    };
    if (cs.length === 1) return insertAll([...cs]);
    return insertAll([...cs]).catch(() => Promise.all(cs.map((c) => insertAll([c]).then(([r]) => r ?? null, asError))));
  });
  const storeQrCode = turnBatcher<{ id: string; qrCode: string }, boolean>(async (items) => {
    const stored = await chargesStore(knex).storeQrCodes([...items]);
    return items.map((i) => stored.has(i.id));
  });
  return { insertCharge, storeQrCode };
}

/** Drops the merchant's cached list pages by bumping its generation. */
export function dropListCache(ctx: ChargesContext, merchantId: string): void {
  ctx.generations.set(merchantId, ++ctx.nextGeneration);
}

export function listKey(ctx: ChargesContext, merchantId: string, q: ListChargesQuery): string {
  return `${merchantId}|${ctx.generations.get(merchantId) ?? 0}|${q.type ?? ''}|${q.status ?? ''}|${q.page}|${q.limit}`;
}

export async function findOwn(
  ctx: ChargesContext,
  merchantId: string,
  id: string,
  db: Db = ctx.knex,
): Promise<ChargeRow> {
  const row = await chargesStore(db).findOwn(merchantId, id);
  if (!row) throw notFound('Charge not found');
  return row;
}

async function loadPrerequisites(ctx: ChargesContext, merchantId: string): Promise<Prerequisites> {
  const generation = ctx.invalidation.generation();
  const hit = ctx.invalidation.live() ? ctx.prerequisiteCache.get(merchantId) : undefined;
  if (hit && hit.generation === generation) return hit;
  const row = await chargesStore(ctx.knex).creationPrerequisites(merchantId);
  if (!row) throw notFound('Merchant not found');
  // Each unmet prerequisite is named.
  const missing: string[] = [];
  if (row.kyc_status !== 'APPROVED') missing.push('KYC not approved');
  if (!row.acquirer_account_id) missing.push('acquirer account not configured');
  if (!row.pix_key) missing.push('no active PIX key');
  let refusal: string | null = null;
  if (missing.length > 0) refusal = `Cannot create charges: ${missing.join('; ')}`;
  else if (row.status !== 'ACTIVE') refusal = 'Cannot create charges: merchant is suspended';
  const loaded: Prerequisites = { generation, refusal, pixKey: row.pix_key };
  ctx.prerequisiteCache.set(merchantId, loaded);
  return loaded;
}

/** The merchant's active PIX key, or 403 naming every unmet prerequisite. */
export async function prerequisites(ctx: ChargesContext, merchantId: string): Promise<{ pixKey: string }> {
  const p = await loadPrerequisites(ctx, merchantId);
  if (p.refusal !== null || p.pixKey === null) throw forbidden(p.refusal ?? 'Cannot create charges: no active PIX key');
  return { pixKey: p.pixKey };
}

/** Sends a workflow message after the change it announces has committed; a failure is logged, not thrown. */
export async function tell(
  ctx: ChargesContext,
  send: () => Promise<void>,
  ids: Record<string, string>,
  what: string,
): Promise<void> {
  try {
    await send();
  } catch (err) {
    ctx.logger.error({ ...ids, err: errorMessage(err) }, `charge workflow not told about the ${what}`);
  }
}

/**
 * The charge a key made, once its creation finished, whatever body the replay carries: the API
 * contract replays a used key unconditionally (docs/api.md "Idempotency").
 */
export async function replayOf(
  ctx: Pick<ChargesContext, 'knex'>,
  merchantId: string,
  key: string,
): Promise<CreateChargeResult | null> {
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    const row = await chargesStore(ctx.knex).findByIdempotencyKey(merchantId, key);
    if (!row) return null;
    // The first request is finished once the acquirer answered (the BR Code is stored) or it failed.
    if (row.qrCode || row.status !== 'PENDING') return { replay: true, charge: replayView(row) };
    if (Date.now() > deadline)
      throw conflict('A request with this idempotency key is still being processed', 'idempotency_key_in_use');
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function createCobWithRetries(ctx: ChargesContext, req: Parameters<Acquirer['createCob']>[0]) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.acquirer.createCob(req);
    } catch (err) {
      const retryable = err instanceof AcquirerError && err.retryable;
      if (!retryable || attempt >= COB_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
}
