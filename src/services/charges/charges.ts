/**
 * Charges, API side (docs/architecture.md "Charges: how they work"): create with prerequisites, idempotency and the
 * cob at the acquirer; list, get, cancel, refund. What happens after creation (payment, expiry,
 * settlement, refunds at the acquirer) is the charge workflow's, in charges/lifecycle.ts. The state
 * built once is in charges/context.ts, creation's steps in charges/create.ts.
 */
import { recordRefund } from '../../observability/metrics';
import type { Knex } from 'knex';
import { bindContext } from '../../lib/bind-context';
import { newId } from '../../lib/ids';
import { invalid, notFound } from '../../lib/errors';
import { chargesStore } from '../../stores/charges';
import type { ListChargesQuery } from '../../contracts/charges';
import { assertPageWithinDepth } from '../../contracts/validation';
import * as ledger from '../ledger/ledger';
import { requestFingerprint, withIdempotencyKey } from '../platform/idempotency';
import { detailView, listItem, type ChargeDetailView, type CustomerView } from './views';
import { paidAmountOf } from './payment-terms';
import {
  chargesContext,
  dropListCache,
  findOwn,
  listKey,
  tell,
  type ChargesContext,
  type ChargesDeps,
  type ChargesPage,
} from './context';
import { create } from './create';

export type { ChargesDeps, CreateChargeResult } from './context';

export function createChargesService(deps: ChargesDeps) {
  return bindContext(chargesContext(deps), { create, list, get, cancel, refund, dropListCache });
}

async function list(ctx: ChargesContext, merchantId: string, q: ListChargesQuery): Promise<ChargesPage> {
  const key = listKey(ctx, merchantId, q);
  const cached = ctx.listCache.get(key);
  if (cached) return cached;
  const { page, limit, status, type } = q;
  const { rows, total } = await ctx.readPage({ merchantId, page, limit, status, type });
  assertPageWithinDepth(q.page, q.limit, total);
  const result = { page: q.page, limit: q.limit, total, charges: rows.map(listItem) };
  ctx.listCache.set(key, result);
  return result;
}

/** The charge with its refunds (`refundedAmount` is summed from the very list it shows). */
async function detail(ctx: ChargesContext, merchantId: string, id: string): Promise<ChargeDetailView> {
  const store = chargesStore(ctx.knex);
  const row = await store.findOwnWithPayment(merchantId, id);
  if (!row) throw notFound('Charge not found');
  return detailView(row, row, await store.paymentRefunds(id));
}

async function get(ctx: ChargesContext, merchantId: string, id: string): Promise<ChargeDetailView> {
  return detail(ctx, merchantId, id);
}

async function cancel(ctx: ChargesContext, merchantId: string, id: string): Promise<ChargeDetailView> {
  await findOwn(ctx, merchantId, id);
  const updated = await chargesStore(ctx.knex).cancelPending(merchantId, id);
  if (!updated) throw invalid('Only a PENDING charge can be canceled');
  dropListCache(ctx, merchantId);
  // The workflow removes the cob at the acquirer so nobody can pay it any more. The cancel itself is
  // committed: if Temporal cannot take the signal now, the merchant still gets its answer, and a
  // payment of the still-active cob would be returned to the payer automatically.
  await tell(ctx, () => ctx.workflows.cancelRequested({ id, merchantId }), { chargeId: id }, 'cancel');
  return detail(ctx, merchantId, id);
}

interface RefundInput {
  amount?: number;
  reason?: string;
}

/**
 * Refund of a PAID charge. With an idempotency key
 * (docs/api.md "Idempotency"), the same key replays the first answer and moves no money again, also when the
 * requests are concurrent.
 */
async function refund(
  ctx: ChargesContext,
  merchantId: string,
  id: string,
  input: RefundInput,
  idempotencyKey?: string,
) {
  const refundId = newId('rf');
  const request = { merchantId, id, refundId, input };
  const outcome = await ctx.knex.transaction(async (trx) => {
    if (!idempotencyKey) return { replay: false as const, result: await requestRefund(trx, request) };
    // The charge must be the caller's before its key space tells anything.
    const own = await chargesStore(trx).findOwnModel(merchantId, id);
    if (!own) throw notFound('Charge not found');
    const fingerprint = requestFingerprint({ amount: input.amount ?? null, reason: input.reason ?? null });
    return withIdempotencyKey(
      trx,
      { scope: 'charge_refund', ownerId: merchantId, key: idempotencyKey, targetId: id, fingerprint },
      () => requestRefund(trx, request),
    );
  });
  if (outcome.replay) return outcome;
  recordRefund('requested', 'MERCHANT');
  dropListCache(ctx, merchantId);
  // Committed (money in transit, refund REQUESTED): the reconciler restarts the workflow of any
  // charge with an open refund, so a signal Temporal cannot take now is only delayed.
  await tell(
    ctx,
    () => ctx.workflows.refundRequested({ id, merchantId }, refundId),
    { chargeId: id, refundId },
    'refund',
  );
  return outcome;
}

/** The refund REQUESTED and its debit, on the locked charge, within what is left to refund. */
async function requestRefund(
  trx: Knex.Transaction,
  { merchantId, id, refundId, input }: { merchantId: string; id: string; refundId: string; input: RefundInput },
) {
  const charges = chargesStore(trx);
  const charge = await charges.findOwnModel(merchantId, id, { lock: true });
  if (!charge) throw notFound('Charge not found');
  if (charge.status !== 'PAID') throw invalid('Only a PAID charge can be refunded');
  const open = await charges.openClaims(id);
  const refundable = paidAmountOf(charge) - charge.refundedAmount - open;
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
}

export type ChargesService = ReturnType<typeof createChargesService>;
export type { CustomerView };
