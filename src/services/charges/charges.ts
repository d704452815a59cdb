/**
 * Charges, API side (docs/architecture.md "Charges: how they work"): create with prerequisites, idempotency and the
 * cob at the acquirer; list, get, cancel, refund. What happens after creation (payment, expiry,
 * settlement, refunds at the acquirer) is the charge workflow's, in charges/lifecycle.ts.
 */
import { recordChargeCreated, recordRefund } from '../../observability/metrics';
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config';
import type { Logger } from '../../lib/logger';
import { newId } from '../../lib/ids';
import { conflict, forbidden, invalid, notFound, unprocessable, upstream } from '../../lib/errors';
import { isValidDocument, newTxid, renderQrDataUrl } from '../../pix';
import { chargesStore, type NewCharge } from '../../stores/charges';
import type { Acquirer } from '../../acquirer/types';
import { AcquirerError } from '../../acquirer/errors';
import type { ChargeWorkflows } from '../../temporal/clients/charge';
import type { CreateChargeBody, ListChargesQuery } from '../../contracts/charges';
import { assertPageWithinDepth } from '../../contracts/validation';
import * as ledger from '../ledger/ledger';
import { requestFingerprint, withIdempotencyKey } from '../platform/idempotency';
import {
  detailView,
  listItem,
  replayView,
  type ChargeDetailView,
  type ChargeListItem,
  type ChargeRow,
  type CustomerView,
} from './views';
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

/** How long a concurrent request with the same idempotency key waits for the first to finish. */
const IN_FLIGHT_WAIT_MS = 10_000;
/** Quick retries of a retryable acquirer failure while the client waits for its 201. */
const COB_ATTEMPTS = 3;

/** The customer a creation answers with: the body's, under the id its upsert gave. */
function createdCustomer(input: Pick<CreateChargeBody, 'customer'>, customerId: string | null): CustomerView | null {
  return input.customer && customerId
    ? { id: customerId, name: input.customer.name, document: input.customer.document }
    : null;
}

export function createChargesService(deps: ChargesDeps) {
  const { knex, acquirer, workflows, logger } = deps;
  // The list cache (docs/api.md "Charges": 3 s per (merchant, query), dropped on that merchant's own writes in
  // this process). Dropping bumps the merchant's generation, which is part of every key, so it costs
  // O(1) however many entries the cache holds; entries of older generations are never read again and
  // age out by TTL or LRU.
  const listCache = new LRUCache<string, { page: number; limit: number; total: number; charges: ChargeListItem[] }>({
    max: 5_000,
    ttl: Math.max(deps.config.CHARGE_LIST_CACHE_MS, 1),
  });
  const generations = new Map<string, number>();
  let nextGeneration = 0;
  const dropListCache = (merchantId: string): void => void generations.set(merchantId, ++nextGeneration);
  const listKey = (merchantId: string, q: ListChargesQuery): string =>
    `${merchantId}|${generations.get(merchantId) ?? 0}|${q.type ?? ''}|${q.status ?? ''}|${q.page}|${q.limit}`;

  const readPage = listPageReader(knex);

  // The creation's two writes, batched per event-loop turn (docs/performance.md "Where a charge's time goes").
  // A statement that fails for one row fails for all: the rows are then tried alone, so only the
  // request whose row is at fault gets the error.
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

  async function findOwn(merchantId: string, id: string, db: Db = knex): Promise<ChargeRow> {
    const row = await chargesStore(db).findOwn(merchantId, id);
    if (!row) throw notFound('Charge not found');
    return row;
  }

  // The merchant and its ACTIVE PIX key rarely change and are read by every creation: cached per
  // merchant until the `pixflow_cache` notification of a change to merchants or PIX keys (sent by
  // a trigger as the change commits) bumps the generation. A missing merchant is not cached.
  const invalidation = deps.invalidation ?? cacheInvalidation(knex);
  const prerequisiteCache = new LRUCache<string, Prerequisites>({ max: 10_000 });

  async function loadPrerequisites(merchantId: string): Promise<Prerequisites> {
    const generation = invalidation.generation();
    const hit = invalidation.live() ? prerequisiteCache.get(merchantId) : undefined;
    if (hit && hit.generation === generation) return hit;
    const row = await chargesStore(knex).creationPrerequisites(merchantId);
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
    prerequisiteCache.set(merchantId, loaded);
    return loaded;
  }

  /** The merchant's active PIX key, or 403 naming every unmet prerequisite. */
  async function prerequisites(merchantId: string): Promise<{ pixKey: string }> {
    const p = await loadPrerequisites(merchantId);
    if (p.refusal !== null || p.pixKey === null)
      throw forbidden(p.refusal ?? 'Cannot create charges: no active PIX key');
    return { pixKey: p.pixKey };
  }

  /** Sends a workflow message after the change it announces has committed; a failure is logged, not thrown. */
  async function tell(send: () => Promise<void>, ids: Record<string, string>, what: string): Promise<void> {
    try {
      await send();
    } catch (err) {
      logger.error({ ...ids, err: errorMessage(err) }, `charge workflow not told about the ${what}`);
    }
  }

  /**
   * The charge a key made, once its creation finished, whatever body the replay carries: the API
   * contract replays a used key unconditionally (docs/api.md "Idempotency").
   */
  async function replayOf(merchantId: string, key: string): Promise<CreateChargeResult | null> {
    const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
    for (;;) {
      const row = await chargesStore(knex).findByIdempotencyKey(merchantId, key);
      if (!row) return null;
      // The first request is finished once the acquirer answered (the BR Code is stored) or it failed.
      if (row.qrCode || row.status !== 'PENDING') return { replay: true, charge: replayView(row) };
      if (Date.now() > deadline)
        throw conflict('A request with this idempotency key is still being processed', 'idempotency_key_in_use');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function createCobWithRetries(req: Parameters<Acquirer['createCob']>[0]) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await acquirer.createCob(req);
      } catch (err) {
        const retryable = err instanceof AcquirerError && err.retryable;
        if (!retryable || attempt >= COB_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      }
    }
  }

  async function create(
    merchantId: string,
    input: CreateChargeBody,
    idempotencyKey?: string,
  ): Promise<CreateChargeResult> {
    // A replay (any body: docs/api.md "Idempotency") answers whatever a check would say now, so
    // a key is looked up before any check could refuse the request — but only then: on the usual
    // path the insert below finds a used key by itself (no extra round trip).
    let pixKey: string;
    try {
      if (input.customer && !isValidDocument(input.customer.document)) {
        throw unprocessable('customer.document is not a valid CPF or CNPJ', 'invalid_document', 'customer.document');
      }
      ({ pixKey } = await prerequisites(merchantId));
    } catch (err) {
      const replay = idempotencyKey ? await replayOf(merchantId, idempotencyKey) : null;
      if (replay) return replay;
      throw err;
    }

    const id = newId('ch');
    // The txid is ours (BCB lets the receiver choose it) and is stored with the row, before the
    // acquirer is called: should this process die between the cob and our next write, a payment of
    // that cob still finds its charge (which the reconciler will have FAILED) and goes back to the payer.
    const txid = newTxid();
    const newCharge: NewCharge = {
      id,
      merchantId,
      amount: input.amount,
      description: input.description,
      expiresIn: input.expiresIn,
      txid,
      idempotencyKey: idempotencyKey ?? null,
      tracking: input.tracking,
    };
    const { customer: customerInput } = input;
    let inserted: { createdAt: Date; customerId: string | null } | null;
    if (!customerInput) {
      const createdAt = await insertCharge(newCharge);
      inserted = createdAt ? { createdAt, customerId: null } : null;
    } else if (!idempotencyKey) {
      // No key, so no racing twin: the customer upsert and the charge go in one statement (a
      // data-modifying CTE), one round trip instead of five.
      inserted = await chargesStore(knex).insertUnlessKeyTaken(newCharge, customerInput);
    } else {
      inserted = await knex.transaction(async (trx) => {
        const charges = chargesStore(trx);
        const created = await charges.insertUnlessKeyTaken(newCharge);
        if (!created) return null;
        // Only the request that won the key writes the customer: a racing twin with another body
        // must not rewrite the customer's name or e-mail. One transaction, so the charge is never
        // seen without its customer.
        const customerId = await charges.upsertCustomer(merchantId, customerInput);
        await charges.setCustomer(id, customerId);
        return { createdAt: created.createdAt, customerId };
      });
    }
    if (!inserted) {
      // Lost the race for this idempotency key: answer with the winner's charge.
      const replay = await replayOf(merchantId, idempotencyKey as string);
      if (replay) return replay;
      throw conflict('A request with this idempotency key is still being processed', 'idempotency_key_in_use');
    }
    dropListCache(merchantId);

    // The workflow starts beside the acquirer call, not after it: started with a delay to the
    // expiry, it reads nothing of the charge until its first task (the expiry itself, or earlier
    // when a payment or cancel arrives by signal-with-start), so it needs nothing the cob gives.
    // Should the cob fail, the charge is FAILED by then and that first task finds nothing owed.
    // The charge is payable at the acquirer once the cob exists, so the merchant gets its 201 even
    // if Temporal cannot start the workflow: a payment still reaches a workflow (every message is
    // signal-with-start), and the periodic reconciler starts the missing one so expiry happens too.
    const workflowStarted = tell(
      () => workflows.start({ id, merchantId }, { startDelayMs: input.expiresIn * 1000 }),
      { chargeId: id },
      'creation',
    );
    let cob: Awaited<ReturnType<Acquirer['createCob']>>;
    try {
      cob = await createCobWithRetries({
        txid,
        amount: input.amount,
        expiresIn: input.expiresIn,
        key: pixKey,
        description: input.description,
        debtor: input.customer ? { name: input.customer.name, document: input.customer.document } : undefined,
      });
    } catch (err) {
      logger.warn({ chargeId: id, err: errorMessage(err) }, 'cob creation failed');
      // Kept FAILED with null txid and qrCode (docs/api.md "Charges"). Nobody was
      // given a BR Code for it. Guarded: only from PENDING (the reconciler may have failed it already).
      await chargesStore(knex).failCreation(id, 'acquirer unavailable at creation');
      await workflowStarted;
      dropListCache(merchantId);
      throw upstream('The acquirer could not create the charge; it was recorded as FAILED');
    }
    // The image (off the main thread) is rendered while the BR Code is stored. The BR Code is
    // stored only on a charge still PENDING without one: if the reconciler took this creation for
    // interrupted (an acquirer slower than its threshold) and FAILED it, the charge stays FAILED,
    // its cob is removed, and the answer is the 502 that FAILED means — never a 201 for a charge
    // the database calls FAILED (the image is then thrown away).
    const image = renderQrDataUrl(cob.pixCopiaECola);
    image.catch(() => undefined);
    const stored = await storeQrCode({ id, qrCode: cob.pixCopiaECola });
    if (!stored) {
      await workflowStarted;
      await acquirer
        .removeCob(txid)
        .catch((err: unknown) =>
          logger.warn({ chargeId: id, err: errorMessage(err) }, 'cob of a charge failed meanwhile not removed'),
        );
      dropListCache(merchantId);
      throw upstream('The acquirer answered too late; the charge was recorded as FAILED');
    }
    const [imageBase64] = await Promise.all([image, workflowStarted]);
    dropListCache(merchantId);
    recordChargeCreated(input.amount);
    return {
      replay: false,
      charge: {
        id,
        type: 'IMMEDIATE',
        txid,
        qrCode: cob.pixCopiaECola,
        amount: input.amount,
        status: 'PENDING',
        expiresIn: input.expiresIn,
        customer: createdCustomer(input, inserted.customerId),
        createdAt: inserted.createdAt.toISOString(),
        imageBase64,
      },
    };
  }

  async function list(merchantId: string, q: ListChargesQuery) {
    const key = listKey(merchantId, q);
    const cached = listCache.get(key);
    if (cached) return cached;
    const { page, limit, status, type } = q;
    const { rows, total } = await readPage({ merchantId, page, limit, status, type });
    assertPageWithinDepth(q.page, q.limit, total);
    const result = { page: q.page, limit: q.limit, total, charges: rows.map(listItem) };
    listCache.set(key, result);
    return result;
  }

  /** The charge with its refunds (`refundedAmount` is summed from the very list it shows). */
  async function detail(merchantId: string, id: string): Promise<ChargeDetailView> {
    const store = chargesStore(knex);
    const row = await store.findOwnWithPayment(merchantId, id);
    if (!row) throw notFound('Charge not found');
    return detailView(row, row, await store.paymentRefunds(id));
  }

  async function get(merchantId: string, id: string): Promise<ChargeDetailView> {
    return detail(merchantId, id);
  }

  async function cancel(merchantId: string, id: string): Promise<ChargeDetailView> {
    await findOwn(merchantId, id);
    const updated = await chargesStore(knex).cancelPending(merchantId, id);
    if (!updated) throw invalid('Only a PENDING charge can be canceled');
    dropListCache(merchantId);
    // The workflow removes the cob at the acquirer so nobody can pay it any more. The cancel itself is
    // committed: if Temporal cannot take the signal now, the merchant still gets its answer, and a
    // payment of the still-active cob would be returned to the payer automatically.
    await tell(() => workflows.cancelRequested({ id, merchantId }), { chargeId: id }, 'cancel');
    return detail(merchantId, id);
  }

  /**
   * Refund of a PAID charge. With an idempotency key
   * (docs/api.md "Idempotency"), the same key replays the first answer and moves no money again, also when the
   * requests are concurrent.
   */
  async function refund(
    merchantId: string,
    id: string,
    input: { amount?: number; reason?: string },
    idempotencyKey?: string,
  ) {
    const refundId = newId('rf');
    const requestRefund = async (trx: Knex.Transaction) => {
      const charges = chargesStore(trx);
      const charge = await charges.findOwnModel(merchantId, id, { lock: true });
      if (!charge) throw notFound('Charge not found');
      if (charge.status !== 'PAID') throw invalid('Only a PAID charge can be refunded');
      const open = await charges.openClaims(id);
      const refundable = charge.amount - charge.refundedAmount - open;
      const amount = input.amount ?? refundable;
      if (refundable <= 0) throw invalid('Nothing left to refund on this charge');
      if (amount > refundable)
        throw invalid(`amount exceeds the refundable ${refundable} cents`, 'invalid_request', 'amount');
      await charges.insertRefund({
        id: refundId,
        chargeId: id,
        merchantId,
        amount,
        reason: input.reason ?? null,
        kind: 'MERCHANT',
        status: 'REQUESTED',
        e2eId: charge.e2eId,
      });
      try {
        await ledger.debitRefund(trx, { refundId, merchantId, amount });
      } catch (err) {
        if (err instanceof ledger.InsufficientFundsError)
          throw invalid('Insufficient balance for this refund', 'insufficient_balance');
        throw err;
      }
      return { id: refundId, chargeId: id, amount, reason: input.reason ?? null, status: 'REQUESTED' as const };
    };
    const outcome = await knex.transaction(async (trx) => {
      if (!idempotencyKey) return { replay: false as const, result: await requestRefund(trx) };
      // The charge must be the caller's before its key space tells anything.
      const own = await chargesStore(trx).findOwnModel(merchantId, id);
      if (!own) throw notFound('Charge not found');
      const fingerprint = requestFingerprint({ amount: input.amount ?? null, reason: input.reason ?? null });
      return withIdempotencyKey(
        trx,
        { scope: 'charge_refund', ownerId: merchantId, key: idempotencyKey, targetId: id, fingerprint },
        () => requestRefund(trx),
      );
    });
    if (outcome.replay) return outcome;
    recordRefund('requested', 'MERCHANT');
    dropListCache(merchantId);
    // Committed (money in transit, refund REQUESTED): the reconciler restarts the workflow of any
    // charge with an open refund, so a signal Temporal cannot take now is only delayed.
    await tell(() => workflows.refundRequested({ id, merchantId }, refundId), { chargeId: id, refundId }, 'refund');
    return outcome;
  }

  return { create, list, get, cancel, refund };
}

export type ChargesService = ReturnType<typeof createChargesService>;
export type { CustomerView };
