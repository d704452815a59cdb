/**
 * MED infractions, workflow side (docs/operations.md "MED infractions"): each step the `infraction-<id>`
 * workflow takes, idempotent (locked infraction row, guarded updates, ledger and event references)
 * so its activities can be retried freely.
 *
 * Money (docs/operations.md "MED infractions", "The money of an infraction"): one bound per payment — what all
 * its infractions hold blocked, plus its refunds in transit or confirmed (merchant and MED alike),
 * never exceeds what was paid; the charge row is locked while that bound is read and used. The
 * disputed amount is blocked from `available` as far as it goes and the bound allows; what is
 * missing is blocked as the merchant's pending money settles into available (the charge workflow's
 * settlement moves pending → available; a block taken straight from pending would leave that
 * settlement moving another charge's money). A closed infraction never blocks. Accepted: the
 * blocked funds, topped up from the platform's fee on the payment where they fall short, go to the
 * payer by a devolução (→ in transit → acquirer once the acquirer confirms that devolução); a
 * remainder, nothing to return, or a refused devolução opens an operator case. Rejected: blocked →
 * available.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { newId } from '../../lib/ids';
import { chargePaymentsStore } from '../../stores/charge-payments';
import { chargesStore, type Charge } from '../../stores/charges';
import { recordInfraction, recordRefund } from '../../observability/metrics';
import { infractionsStore, type Infraction } from '../../stores/infractions';
import type { Acquirer } from '../../acquirer/types';
import { AcquirerError } from '../../acquirer/errors';
import { centsToDecimalString } from '../../domain/money';
import type { InfractionProgress, MedRefundState } from '../../../workflows/infraction-types';
import * as ledger from '../ledger/ledger';
import { recordEvent } from '../platform/events';
import { callbackInboxStore } from '../../stores/callback-inbox';
import { acquirerRefundId, infractionCallback, internalRefundId } from '../../acquirer/wire';
import { wireToCents } from '../../acquirer/money-wire';
import { closeOperatorCase, openOperatorCase } from '../platform/operator-cases';
import { recordUnconfirmedSignal } from '../platform/signal-checks';
import type { InfractionStatus } from '../../contracts/statuses';
import { infractionDefensesStore } from '../../stores/infraction-defenses';
import { createDefenseForwarding } from './defense-forwarding';
import { paidAmountOf as paidOf } from '../../domain/due-date-amount';
import { bindContext } from '../../lib/bind-context';

export class InfractionNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    // The name the workflow's retry policies list as final.
    this.name = 'NotFoundError';
  }
}

type Trx = Knex.Transaction;

/** The reason a MED devolução carries, at the acquirer and on the charge's refund. */
const medReason = (inf: Infraction): string => `MED: ${inf.reason ?? 'infraction accepted'}`;

type LifecycleDeps = { knex: Knex; acquirer: Acquirer; logger: Logger };
/** What every step reads: the dependencies and the defense forwarder built from them. */
type LifecycleCtx = LifecycleDeps & { defenses: ReturnType<typeof createDefenseForwarding> };

export function createInfractionLifecycle(deps: LifecycleDeps) {
  const ctx: LifecycleCtx = { ...deps, defenses: createDefenseForwarding(deps) };
  return bindContext(ctx, {
    progress,
    forwardDefense,
    block,
    reject,
    accept,
    prepareRefund,
    sendRefund,
    checkRefund,
    failRefund,
    reportUnknownRefund,
    applyOperatorAction,
    completeRefund,
  });
}

async function lock(trx: Trx, id: string): Promise<Infraction> {
  const inf = await infractionsStore(trx).find(id, { lock: true });
  if (!inf) throw new InfractionNotFoundError(`infraction ${id} not found`);
  return inf;
}

async function chargeOf(db: Knex | Trx, inf: Infraction, opts: { lock?: boolean } = {}): Promise<Charge> {
  const charge = inf.chargeId ? await chargesStore(db).find(inf.chargeId, opts) : undefined;
  if (!charge) throw new InfractionNotFoundError(`charge of infraction ${inf.id} not found`);
  return charge;
}

/** The event data every infraction event shares (docs/api.md "Events"). */
function eventData<S extends Infraction['status']>(inf: Infraction, status: S, amount = inf.amount) {
  return {
    infractionId: inf.id,
    chargeId: inf.chargeId,
    endToEndId: inf.e2eId,
    amount,
    reason: inf.reason ?? '',
    status,
  };
}

async function patch(trx: Trx, id: string, p: Partial<Infraction>): Promise<void> {
  await infractionsStore(trx).patch(id, p);
}

/**
 * Blocks what is still missing of the disputed amount from what is available now, within the
 * payment's bound (the charge row is locked by the caller). The ledger reference carries how much
 * was blocked before, so a retry of a committed step posts nothing and the next top-up (after more
 * money settled) gets a reference of its own.
 */
async function topUp(trx: Trx, inf: Infraction, charge: Charge): Promise<number> {
  const room =
    paidOf(charge) -
    charge.refundedAmount -
    (await chargesStore(trx).openClaims(charge.id, inf.id)) -
    inf.blockedAmount;
  const missing = Math.min(inf.amount - inf.blockedAmount, room);
  if (missing <= 0) return inf.blockedAmount;
  // Lock the available row so the amount we read is the amount we move (a withdrawal in between
  // would otherwise make the move fail); `available` sorts before `blocked`, the ledger's lock order.
  const available = await ledger.lockedBalance(trx, inf.merchantId, 'available');
  const take = Math.min(missing, available);
  if (take <= 0) return inf.blockedAmount;
  await ledger.moveBlocked(trx, {
    reference: `infraction:${inf.id}:block:${inf.blockedAmount}`,
    merchantId: inf.merchantId,
    amount: take,
    direction: 'block',
  });
  const blocked = inf.blockedAmount + take;
  await patch(trx, inf.id, { blockedAmount: blocked });
  return blocked;
}

/** The infraction may still take money: decided or not, no devolução chosen, not closed, no case waiting. */
const mayBlock = (inf: Infraction): boolean =>
  (inf.status === 'OPEN' || inf.status === 'ACCEPTED') && !inf.refundId && !inf.closedAt && !inf.operatorAction;

/** Time until the merchant's next unsettled charge settles; null when none is waiting. */
async function nextSettlementInMs(db: Knex | Trx, merchantId: string): Promise<number | null> {
  const at = await chargePaymentsStore(db).nextSettlementAt(merchantId);
  return at ? at.getTime() - Date.now() : null;
}

export async function progress(ctx: LifecycleCtx, id: string): Promise<InfractionProgress> {
  const { knex } = ctx;
  const inf = await infractionsStore(knex).find(id);
  if (!inf) throw new InfractionNotFoundError(`infraction ${id} not found`);
  const stillBlocking = mayBlock(inf) && inf.blockedAmount < inf.amount;
  const undecided = inf.status === 'OPEN' && inf.acquirerStatus === 'OPEN' && !inf.closedAt;
  const defense = undecided ? await infractionDefensesStore(knex).forInfraction(id) : undefined;
  return {
    status: inf.status,
    acquirerStatus: inf.acquirerStatus,
    amount: inf.amount,
    blocked: inf.blockedAmount,
    refundId: inf.refundId,
    closed: inf.closedAt !== null,
    operatorAction: inf.operatorAction,
    nextSettlementInMs: stillBlocking ? await nextSettlementInMs(knex, inf.merchantId) : null,
    defensePending: defense?.status === 'PENDING',
  };
}

/** Sends the merchant's PENDING defense to the acquirer, once (src/services/med/defense-forwarding.ts). */
export async function forwardDefense(ctx: LifecycleCtx, id: string): Promise<InfractionProgress> {
  const { defenses } = ctx;
  await defenses.forward(id);
  return progress(ctx, id);
}

/**
 * Blocks the disputed amount (as far as available goes) and records `infraction.received` once.
 * Called when the workflow starts and again whenever pending money may have settled.
 */
export async function block(ctx: LifecycleCtx, id: string): Promise<InfractionProgress> {
  const { knex } = ctx;
  await knex.transaction(async (trx) => {
    const inf = await lock(trx, id);
    // The charge after the infraction, before the ledger rows: the order every MED step and a
    // merchant's refund request (charge, then ledger) lock in.
    if (mayBlock(inf)) await topUp(trx, inf, await chargeOf(trx, inf, { lock: true }));
    await recordEvent(trx, {
      merchantId: inf.merchantId,
      type: 'infraction.received',
      reference: `infraction.received:${inf.id}`,
      data: eventData(inf, 'OPEN'),
    });
  });
  return progress(ctx, id);
}

/**
 * The acquirer's decision is the one its signed callback stored on the row (docs/architecture.md
 * "Workflows carry intent; activities check facts"): a decision the row does not hold is recorded
 * and applies nothing, whatever signal asked for it.
 */
async function decidedByAcquirer(
  ctx: LifecycleCtx,
  trx: Trx,
  inf: Infraction,
  claimed: InfractionStatus,
): Promise<boolean> {
  const { logger } = ctx;
  const holds =
    claimed === 'REJECTED'
      ? inf.acquirerStatus === 'REJECTED'
      : inf.acquirerStatus === 'ACCEPTED' || inf.acquirerStatus === 'REFUNDED';
  if (holds) return true;
  await recordUnconfirmedSignal(trx, logger, {
    workflow: 'infraction',
    signal: 'acquirerUpdate',
    verdict: 'disagrees',
    subjectType: 'infraction',
    subjectId: inf.id,
    merchantId: inf.merchantId,
    claimed: { status: claimed },
    source: { acquirerStatus: inf.acquirerStatus },
  });
  return false;
}

/** OPEN → REJECTED: every blocked cent goes back to available; `infraction.updated` (REJECTED). */
export async function reject(ctx: LifecycleCtx, id: string): Promise<InfractionProgress> {
  const { knex } = ctx;
  const applied = await knex.transaction(async (trx): Promise<boolean> => {
    const inf = await lock(trx, id);
    if (inf.status !== 'OPEN' || !(await decidedByAcquirer(ctx, trx, inf, 'REJECTED'))) return false;
    if (inf.blockedAmount > 0) {
      await ledger.moveBlocked(trx, {
        reference: `infraction:${inf.id}:unblock`,
        merchantId: inf.merchantId,
        amount: inf.blockedAmount,
        direction: 'unblock',
      });
    }
    await patch(trx, inf.id, { status: 'REJECTED', blockedAmount: 0, closedAt: new Date() });
    await recordEvent(trx, {
      merchantId: inf.merchantId,
      type: 'infraction.updated',
      reference: `infraction.updated:${inf.id}:REJECTED`,
      data: eventData(inf, 'REJECTED'),
    });
    return true;
  });
  if (applied) recordInfraction('rejected');
  return progress(ctx, id);
}

/** OPEN → ACCEPTED with `infraction.updated` (ACCEPTED); the refund follows (prepareRefund). */
export async function accept(ctx: LifecycleCtx, id: string): Promise<InfractionProgress> {
  const { knex } = ctx;
  const applied = await knex.transaction(async (trx): Promise<boolean> => {
    const inf = await lock(trx, id);
    if (inf.status !== 'OPEN' || !(await decidedByAcquirer(ctx, trx, inf, 'ACCEPTED'))) return false;
    await patch(trx, inf.id, { status: 'ACCEPTED' });
    await recordEvent(trx, {
      merchantId: inf.merchantId,
      type: 'infraction.updated',
      reference: `infraction.updated:${inf.id}:ACCEPTED`,
      data: eventData(inf, 'ACCEPTED'),
    });
    return true;
  });
  if (applied) recordInfraction('accepted');
  return progress(ctx, id);
}

/**
 * Chooses the devolução of an accepted infraction, once (docs/operations.md "The money of an infraction"):
 * a last top-up, then what the payer is owed under this infraction — the disputed amount, at most
 * what the payment's bound leaves — is funded by the blocked money first and then by the
 * platform's fee on the payment (less what other devoluções of it took); the total moves to
 * transit under a refund id fixed in the same transaction. Any blocked excess is unblocked. A
 * remainder opens a MED_SHORTFALL case; nothing at all to return closes the infraction with a
 * MED_NOTHING_TO_RETURN case.
 */
export async function prepareRefund(ctx: LifecycleCtx, id: string): Promise<InfractionProgress> {
  await ctx.knex.transaction(async (trx) => {
    const inf = await lock(trx, id);
    if (inf.status !== 'ACCEPTED' || !mayBlock(inf)) return;
    const charge = await chargeOf(trx, inf, { lock: true });
    const funding = await fundDevolucao(trx, inf, charge);
    const caseOf = (kind: 'MED_NOTHING_TO_RETURN' | 'MED_SHORTFALL', reason: string) =>
      openOperatorCase(trx, ctx.logger, {
        reference: `infraction:${inf.id}:${kind}`,
        kind,
        merchantId: inf.merchantId,
        subjectType: 'infraction',
        subjectId: inf.id,
        reason,
        details: { chargeId: charge.id, ...funding, shortfall: funding.owed - funding.returned },
      });
    const { owed, returned: amount } = funding;
    if (amount <= 0) {
      await patch(trx, inf.id, { blockedAmount: 0, closedAt: new Date() });
      if (owed > 0)
        await caseOf(
          'MED_NOTHING_TO_RETURN',
          `accepted infraction: none of the merchant's money to return ${owed} cents to the payer`,
        );
      else
        ctx.logger.warn(
          { infractionId: inf.id, chargeId: charge.id },
          'accepted infraction on a payment already returned in full',
        );
      return;
    }
    await startDevolucao(trx, inf, charge, funding);
    if (amount < owed)
      await caseOf('MED_SHORTFALL', `the devolução returns ${amount} of the ${owed} cents owed to the payer`);
  });
  return progress(ctx, id);
}

interface DevolucaoFunding {
  /** What the payer is owed under this infraction. */
  owed: number;
  /** What will be returned: fromBlocked + fromFee. */
  returned: number;
  fromBlocked: number;
  fromFee: number;
}

/**
 * What the devolução returns and from where: the blocked money first (its excess unblocked), then
 * the platform's fee on the payment less what other devoluções of it took.
 */
async function fundDevolucao(trx: Trx, inf: Infraction, charge: Charge): Promise<DevolucaoFunding> {
  const blocked = await topUp(trx, inf, charge);
  const owed = Math.max(
    0,
    Math.min(
      inf.amount,
      paidOf(charge) - charge.refundedAmount - (await chargesStore(trx).openClaims(charge.id, inf.id)),
    ),
  );
  const fromBlocked = Math.min(blocked, owed);
  const excess = blocked - fromBlocked;
  if (excess > 0) {
    await ledger.moveBlocked(trx, {
      reference: `infraction:${inf.id}:release:${blocked}`,
      merchantId: inf.merchantId,
      amount: excess,
      direction: 'unblock',
    });
  }
  const feeLeft = Math.max(
    0,
    (charge.feeAmount ?? 0) - (await infractionsStore(trx).feeReturnedOnCharge(charge.id, inf.id)),
  );
  // blocked, fee_revenue and in_transit locked together in kind order before the fee is read,
  // as failRefund's posting locks them: fee_revenue first would deadlock two infractions of one
  // merchant (docs/operations.md "The money of an infraction").
  const locked = await ledger.lockedBalances(trx, inf.merchantId, ['blocked', 'fee_revenue', 'in_transit']);
  const fromFee = Math.min(owed - fromBlocked, feeLeft, locked.get('fee_revenue') ?? 0);
  return { owed, returned: fromBlocked + fromFee, fromBlocked, fromFee };
}

/**
 * A refund of the charge like any other (kind INFRACTION), REQUESTED while its money is in
 * transit: the books explain that money by it (docs/operations.md "Checking the books").
 */
async function startDevolucao(trx: Trx, inf: Infraction, charge: Charge, f: DevolucaoFunding): Promise<void> {
  const refundId = newId('rf');
  await chargePaymentsStore(trx).insertInfractionRefund({
    id: refundId,
    chargeId: charge.id,
    merchantId: inf.merchantId,
    amount: f.returned,
    reason: medReason(inf),
    e2eId: charge.e2eId,
  });
  await ledger.debitMedRefund(trx, {
    refundId,
    merchantId: inf.merchantId,
    fromBlocked: f.fromBlocked,
    fromFee: f.fromFee,
  });
  await patch(trx, inf.id, { refundId, refundAmount: f.returned, feeReturned: f.fromFee, blockedAmount: 0 });
}

async function refundTarget(
  ctx: LifecycleCtx,
  id: string,
): Promise<{ inf: Infraction; refundId: string; amount: number; e2eId: string }> {
  const { knex } = ctx;
  const inf = await infractionsStore(knex).find(id);
  if (!inf?.refundId || !inf.refundAmount || !inf.e2eId)
    throw new InfractionNotFoundError(`infraction ${id} has no devolução to send`);
  return { inf, refundId: inf.refundId, amount: inf.refundAmount, e2eId: inf.e2eId };
}

/** Asks the acquirer for the devolução (idempotent on its id: a retry gets the same one). */
export async function sendRefund(ctx: LifecycleCtx, id: string): Promise<MedRefundState> {
  const { acquirer, knex, logger } = ctx;
  const { inf, refundId, amount, e2eId } = await refundTarget(ctx, id);
  try {
    const r = await acquirer.requestRefund(e2eId, acquirerRefundId(refundId), amount, medReason(inf).slice(0, 140));
    await chargePaymentsStore(knex).setRefundRtrIdIfUnset(refundId, r.rtrId);
    return { status: r.status, rtrId: r.rtrId, reason: r.reason };
  } catch (err) {
    // Refused for good (e.g. the acquirer already returned the payment itself): the workflow then
    // waits for the acquirer's own REFUNDED announcement instead.
    if (err instanceof AcquirerError && (err.code === 'REJECTED' || err.code === 'NOT_FOUND')) {
      logger.warn({ infractionId: id, err: err.message }, 'MED devolução refused by the acquirer');
      return { status: 'REFUSED', reason: err.problem?.detail ?? err.code };
    }
    throw err;
  }
}

/** How the devolução stands at the acquirer (the fallback when its callback does not come). */
export async function checkRefund(ctx: LifecycleCtx, id: string): Promise<MedRefundState> {
  const { acquirer } = ctx;
  const { refundId, e2eId } = await refundTarget(ctx, id);
  try {
    const r = await acquirer.getRefund(e2eId, acquirerRefundId(refundId));
    return { status: r.status, rtrId: r.rtrId, reason: r.reason };
  } catch (err) {
    // Not known there is no outcome: the money stays in transit and the request is made again
    // (idempotent on its id), never taken as refused.
    if (err instanceof AcquirerError && err.code === 'NOT_FOUND')
      return { status: 'UNKNOWN', reason: 'the acquirer does not know the devolução' };
    throw err;
  }
}

/**
 * The acquirer's own devolução of the payment, as its signed REFUNDED callback of this infraction
 * carries it: settled (DEVOLVIDO) and none of ours. The payer has that money back.
 */
async function acquirersOwnReturn(
  db: Knex | Trx,
  inf: Infraction,
): Promise<{ id: string; rtrId: string; amount: number } | null> {
  const row = await callbackInboxStore(db).findSigned('infractions', `${inf.acquirerInfractionId}:REFUNDED`);
  const parsed = row ? infractionCallback.safeParse(row.payload) : undefined;
  const d = parsed?.success ? parsed.data.infraction.devolucao : undefined;
  if (!d || d.status !== 'DEVOLVIDO') return null;
  if (await chargePaymentsStore(db).findRefund(internalRefundId(d.id))) return null;
  return { id: d.id, rtrId: d.rtrId, amount: wireToCents(d.valor) ?? 0 };
}

/**
 * The infraction's own devolução was refused or not completed: in one transaction its refund is
 * FAILED, its money leaves transit — the merchant's part re-blocked (still held for the payer),
 * the fee's part back to the platform — and a MED_REFUND_REFUSED case waits for an operator to
 * retry the devolução or release the money (docs/operations.md "Operator cases"). Once per devolução.
 */
export async function failRefund(ctx: LifecycleCtx, id: string, reason: string): Promise<InfractionProgress> {
  const { knex, logger } = ctx;
  let ownReturn: { id: string; rtrId: string; amount: number } | null = null;
  const applied = await knex.transaction(async (trx): Promise<boolean> => {
    const inf = await lock(trx, id);
    if (inf.status !== 'ACCEPTED' || !inf.refundId || !inf.refundAmount) return false;
    const refundId = inf.refundId;
    const refund = await chargePaymentsStore(trx).findRefund(refundId, { lock: true });
    // Confirmed meanwhile (the charge's own refund path applied a DEVOLVIDO): not a failure; the
    // workflow asks again and completes.
    if (!refund || refund.status === 'CONFIRMED') return false;
    // Refused because the acquirer already returned the payment itself: the payer has the money,
    // so it is booked as this devolução's completion, once, and no case offers to release it
    // (docs/operations.md "The money of an infraction").
    ownReturn = await acquirersOwnReturn(trx, inf);
    if (ownReturn) return false;
    const fromFee = inf.feeReturned;
    const fromBlocked = inf.refundAmount - fromFee;
    await ledger.returnMedRefund(trx, {
      refundId,
      merchantId: inf.merchantId,
      toBlocked: fromBlocked,
      toFee: fromFee,
    });
    await chargePaymentsStore(trx).failRefund(refundId, reason);
    await closeOperatorCase(trx, logger, unknownCase(inf.id, refundId), `the acquirer did not complete it: ${reason}`);
    await patch(trx, inf.id, {
      refundId: null,
      refundAmount: null,
      feeReturned: 0,
      blockedAmount: inf.blockedAmount + fromBlocked,
      operatorAction: 'pending',
    });
    await openOperatorCase(trx, logger, {
      reference: `infraction:${inf.id}:MED_REFUND_REFUSED:${refundId}`,
      kind: 'MED_REFUND_REFUSED',
      merchantId: inf.merchantId,
      subjectType: 'infraction',
      subjectId: inf.id,
      reason: `the devolução of ${inf.refundAmount} cents was not completed: ${reason}`,
      details: {
        chargeId: inf.chargeId,
        refundId,
        amount: inf.refundAmount,
        reblocked: fromBlocked,
        feeBack: fromFee,
      },
    });
    return true;
  });
  if (applied) {
    recordInfraction('refund_refused');
    recordRefund('failed', 'INFRACTION');
  }
  const own = ownReturn as { id: string; rtrId: string; amount: number } | null;
  if (own) {
    logger.warn(
      { infractionId: id, acquirerDevolucao: own.id, amount: own.amount },
      "the acquirer returned the payment itself: booked as the MED devolução's completion",
    );
    return completeRefund(ctx, id, own.rtrId);
  }
  return progress(ctx, id);
}

/** The reference of the MED_REFUND_UNKNOWN case of one devolução. */
const unknownCase = (infractionId: string, refundId: string): string =>
  `infraction:${infractionId}:MED_REFUND_UNKNOWN:${refundId}`;

/**
 * The devolução's outcome cannot be learnt (the acquirer unreachable for the whole window, or it
 * does not know the devolução): its money stays in transit, never re-blocked or released by
 * guess, and a MED_REFUND_UNKNOWN case tells an operator while the workflow keeps asking. Only
 * `acknowledge` is offered: nothing an operator does there can pay twice.
 */
export async function reportUnknownRefund(ctx: LifecycleCtx, id: string, reason: string): Promise<InfractionProgress> {
  const { knex, logger } = ctx;
  await knex.transaction(async (trx) => {
    const inf = await lock(trx, id);
    if (inf.status !== 'ACCEPTED' || !inf.refundId) return;
    await openOperatorCase(trx, logger, {
      reference: unknownCase(inf.id, inf.refundId),
      kind: 'MED_REFUND_UNKNOWN',
      merchantId: inf.merchantId,
      subjectType: 'infraction',
      subjectId: inf.id,
      reason: `the outcome of the devolução of ${inf.refundAmount ?? 0} cents cannot be learnt (${reason}): kept in transit, asked again hourly`,
      details: { chargeId: inf.chargeId, refundId: inf.refundId, amount: inf.refundAmount, error: reason },
    });
  });
  return progress(ctx, id);
}

/**
 * Applies an operator's decision on a refused devolução: `release` — the re-blocked money goes
 * back to the merchant and the infraction closes (the payer is not refunded by us); `retry` — the
 * infraction may choose a new devolução. Nothing while the case still waits.
 */
export async function applyOperatorAction(ctx: LifecycleCtx, id: string): Promise<InfractionProgress> {
  const { knex } = ctx;
  const released = await knex.transaction(async (trx): Promise<boolean> => {
    const inf = await lock(trx, id);
    if (inf.operatorAction === 'release') {
      if (inf.blockedAmount > 0) {
        await ledger.moveBlocked(trx, {
          reference: `infraction:${inf.id}:released-by-operator`,
          merchantId: inf.merchantId,
          amount: inf.blockedAmount,
          direction: 'unblock',
        });
      }
      await patch(trx, inf.id, { operatorAction: null, blockedAmount: 0, closedAt: new Date() });
      return true;
    } else if (inf.operatorAction === 'retry') {
      await patch(trx, inf.id, { operatorAction: null });
    }
    return false;
  });
  if (released) recordInfraction('released');
  return progress(ctx, id);
}

/**
 * The payer has the money back: in transit → acquirer, the charge's refund recorded (a CONFIRMED
 * INFRACTION refund; REFUNDED once fully refunded, guarded on PAID), the infraction REFUNDED, and
 * `infraction.refund_completed` then `charge.refunded`, all in one transaction.
 */
export async function completeRefund(ctx: LifecycleCtx, id: string, rtrId: string | null): Promise<InfractionProgress> {
  const applied = await ctx.knex.transaction(async (trx): Promise<boolean> => {
    const inf = await lock(trx, id);
    if (inf.status !== 'ACCEPTED' || !inf.refundId || !inf.refundAmount) return false;
    const refundId = inf.refundId;
    const amount = inf.refundAmount;
    const payments = chargePaymentsStore(trx);
    await payments.lockRefundRow(refundId);
    // Locked before the ledger's accounts, as every path that changes a charge and its merchant's
    // balances locks them (the charge run's settleRefund, a merchant's refund): the other order
    // deadlocks against them.
    const charge = await chargeOf(trx, inf, { lock: true });
    await ledger.resolveInTransit(trx, {
      reference: `refund:${refundId}:resolved`,
      kind: 'infraction_refund_confirmed',
      merchantId: inf.merchantId,
      amount,
      outcome: 'left',
    });
    const refundedAt = new Date();
    const reason = medReason(inf);
    // The charge workflow may have confirmed it already (a devolução callback that restarted it);
    // a FAILED one the acquirer then completed on its own is confirmed now.
    await payments.confirmRefundFromOpenOrFailed(refundId, refundedAt, rtrId);
    // REFUNDED once fully refunded, as for a merchant's refund; the payment's bound keeps the sum
    // within the amount, so this only fails on a charge no longer PAID.
    const updated = await payments.addRefundedToPaid(charge.id, amount);
    if (!updated)
      ctx.logger.warn(
        { infractionId: inf.id, chargeId: charge.id, status: charge.status },
        'MED refund on a charge that is no longer PAID',
      );
    await patch(trx, inf.id, { status: 'REFUNDED', refundedAt, closedAt: refundedAt, blockedAmount: 0 });
    await closeOperatorCase(
      trx,
      ctx.logger,
      unknownCase(inf.id, refundId),
      'the devolução settled: the payer has the money',
    );
    await recordEvent(trx, {
      merchantId: inf.merchantId,
      type: 'infraction.refund_completed',
      reference: `infraction.refund_completed:${inf.id}`,
      data: { ...eventData(inf, 'REFUNDED', amount), refundedAt: refundedAt.toISOString() },
    });
    await recordEvent(trx, {
      merchantId: inf.merchantId,
      type: 'charge.refunded',
      reference: `charge.refunded:${refundId}`,
      data: {
        refundId,
        txid: charge.txid,
        chargeId: charge.id,
        amount: centsToDecimalString(amount),
        status: 'closed',
        reason,
        end2endId: charge.e2eId,
      },
    });
    return true;
  });
  if (applied) {
    recordInfraction('refunded');
    recordRefund('confirmed', 'INFRACTION');
  }
  return progress(ctx, id);
}

export type InfractionLifecycle = ReturnType<typeof createInfractionLifecycle>;
