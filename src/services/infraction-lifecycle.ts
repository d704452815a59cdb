/**
 * MED infractions, workflow side (README "MED infractions"): each step the `infraction-<id>`
 * workflow takes, idempotent (locked infraction row, guarded updates, ledger and event references)
 * so its activities can be retried freely.
 *
 * Money: the disputed amount is blocked from `available` as far as it goes; what is missing is
 * blocked as the merchant's pending money settles into available (the charge workflow's settlement
 * moves pending → available; a block taken straight from pending would leave that settlement moving
 * another charge's money). Accepted: the blocked funds go to the payer by a devolução (blocked → in
 * transit → acquirer once confirmed), the charge records the refund; rejected: blocked → available.
 */
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import { newId } from '../lib/ids';
import { chargesStore, type Charge } from '../stores/charges';
import { infractionsStore, type Infraction } from '../stores/infractions';
import type { Acquirer } from '../acquirer/types';
import { AcquirerError } from '../acquirer/errors';
import { centsToDecimalString } from '../domain/money';
import type { InfractionProgress, MedRefundState } from '../../workflows/infraction-types';
import * as ledger from './ledger';
import { recordEvent } from './events';
import { acquirerRefundId } from './charge-refund-ids';

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

export function createInfractionLifecycle(deps: { knex: Knex; acquirer: Acquirer; logger: Logger }) {
  const { knex, acquirer, logger } = deps;

  async function lock(trx: Trx, id: string): Promise<Infraction> {
    const inf = await infractionsStore(trx).find(id, { lock: true });
    if (!inf) throw new InfractionNotFoundError(`infraction ${id} not found`);
    return inf;
  }

  async function chargeOf(db: Knex | Trx, inf: Infraction): Promise<Charge> {
    const charge = inf.chargeId ? await chargesStore(db).find(inf.chargeId) : undefined;
    if (!charge) throw new InfractionNotFoundError(`charge of infraction ${inf.id} not found`);
    return charge;
  }

  /** The event data every infraction event shares (README "Behaviour the spec leaves open"). */
  function eventData(inf: Infraction, status: Infraction['status'], amount = inf.amount) {
    return { infractionId: inf.id, chargeId: inf.chargeId, endToEndId: inf.e2eId, amount, reason: inf.reason ?? '', status };
  }

  async function patch(trx: Trx, id: string, p: Partial<Infraction>): Promise<void> {
    await infractionsStore(trx).patch(id, p);
  }

  /**
   * Blocks what is still missing of the disputed amount from what is available now. The ledger
   * reference carries how much was blocked before, so a retry of a committed step posts nothing
   * and the next top-up (after more money settled) gets a reference of its own.
   */
  async function topUp(trx: Trx, inf: Infraction): Promise<number> {
    const missing = inf.amount - inf.blockedAmount;
    if (missing <= 0) return inf.blockedAmount;
    // Lock the available row so the amount we read is the amount we move (a withdrawal in between
    // would otherwise make the move fail); `available` sorts before `blocked`, the ledger's lock order.
    const row = (await trx('ledger_accounts')
      .where({ merchant_id: inf.merchantId, kind: 'available' })
      .forUpdate()
      .first('balance')) as { balance: number } | undefined;
    const take = Math.min(missing, row?.balance ?? 0);
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

  /** Time until the merchant's next unsettled charge settles; null when none is waiting. */
  async function nextSettlementInMs(db: Knex | Trx, merchantId: string): Promise<number | null> {
    const row = (await db('charges')
      .where({ merchant_id: merchantId })
      .whereIn('status', ['PAID', 'REFUNDED'])
      .whereNull('settled_at')
      .whereNotNull('settle_at')
      .min({ at: 'settle_at' })
      .first()) as { at: Date | string | null } | undefined;
    return row?.at ? new Date(row.at).getTime() - Date.now() : null;
  }

  async function progress(id: string): Promise<InfractionProgress> {
    const inf = await infractionsStore(knex).find(id);
    if (!inf) throw new InfractionNotFoundError(`infraction ${id} not found`);
    const stillBlocking = (inf.status === 'OPEN' || inf.status === 'ACCEPTED') && !inf.refundId && inf.blockedAmount < inf.amount;
    return {
      status: inf.status,
      acquirerStatus: inf.acquirerStatus,
      amount: inf.amount,
      blocked: inf.blockedAmount,
      refundId: inf.refundId,
      closed: inf.closedAt !== null,
      nextSettlementInMs: stillBlocking ? await nextSettlementInMs(knex, inf.merchantId) : null,
    };
  }

  /**
   * Blocks the disputed amount (as far as available goes) and records `infraction.received` once.
   * Called when the workflow starts and again whenever pending money may have settled.
   */
  async function block(id: string): Promise<InfractionProgress> {
    await knex.transaction(async (trx) => {
      const inf = await lock(trx, id);
      if ((inf.status === 'OPEN' || inf.status === 'ACCEPTED') && !inf.refundId) await topUp(trx, inf);
      await recordEvent(trx, {
        merchantId: inf.merchantId,
        type: 'infraction.received',
        reference: `infraction.received:${inf.id}`,
        data: eventData(inf, 'OPEN'),
      });
    });
    return progress(id);
  }

  /** OPEN → REJECTED: every blocked cent goes back to available; `infraction.updated` (REJECTED). */
  async function reject(id: string): Promise<InfractionProgress> {
    await knex.transaction(async (trx) => {
      const inf = await lock(trx, id);
      if (inf.status !== 'OPEN') return;
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
    });
    return progress(id);
  }

  /** OPEN → ACCEPTED with `infraction.updated` (ACCEPTED); the refund follows (prepareRefund). */
  async function accept(id: string): Promise<InfractionProgress> {
    await knex.transaction(async (trx) => {
      const inf = await lock(trx, id);
      if (inf.status !== 'OPEN') return;
      await patch(trx, inf.id, { status: 'ACCEPTED' });
      await recordEvent(trx, {
        merchantId: inf.merchantId,
        type: 'infraction.updated',
        reference: `infraction.updated:${inf.id}:ACCEPTED`,
        data: eventData(inf, 'ACCEPTED'),
      });
    });
    return progress(id);
  }

  /**
   * Chooses the devolução of an accepted infraction, once: a last top-up from available, then what
   * is blocked — bounded by what the payment still has to return (merchant refunds may have
   * returned part) — moves blocked → in transit under a fixed refund id; any excess is unblocked.
   * With nothing blocked there is nothing of the merchant's to return: the infraction stays
   * ACCEPTED and closed, for an operator.
   */
  async function prepareRefund(id: string): Promise<InfractionProgress> {
    await knex.transaction(async (trx) => {
      const inf = await lock(trx, id);
      if (inf.status !== 'ACCEPTED' || inf.refundId || inf.closedAt) return;
      // The charge before the ledger rows: the order a merchant's refund request locks them in.
      const charges = chargesStore(trx);
      const charge = inf.chargeId ? await charges.find(inf.chargeId, { lock: true }) : undefined;
      if (!charge) throw new InfractionNotFoundError(`charge of infraction ${inf.id} not found`);
      const blocked = await topUp(trx, inf);
      const open = await charges.openMerchantRefunds(charge.id);
      const refundable = Math.max(0, charge.amount - charge.refundedAmount - open);
      const amount = Math.min(blocked, refundable);
      const excess = blocked - amount;
      if (excess > 0) {
        await ledger.moveBlocked(trx, { reference: `infraction:${inf.id}:release`, merchantId: inf.merchantId, amount: excess, direction: 'unblock' });
      }
      if (amount <= 0) {
        if (refundable <= 0) logger.warn({ infractionId: inf.id, chargeId: charge.id }, 'accepted infraction on a payment already returned in full');
        else logger.error({ infractionId: inf.id, chargeId: charge.id }, 'accepted infraction with nothing blocked to return: needs an operator');
        await patch(trx, inf.id, { blockedAmount: 0, closedAt: new Date() });
        return;
      }
      // A refund of the charge like any other (kind INFRACTION), REQUESTED while its money is in
      // transit: the books explain that money by it (README "Checking the books").
      const refundId = newId('rf');
      await charges.insertInfractionRefund({
        id: refundId,
        chargeId: charge.id,
        merchantId: inf.merchantId,
        amount,
        reason: medReason(inf),
        e2eId: charge.e2eId,
      });
      await ledger.debitBlockedRefund(trx, { refundId, merchantId: inf.merchantId, amount });
      await patch(trx, inf.id, { refundId, refundAmount: amount, blockedAmount: 0 });
    });
    return progress(id);
  }

  async function refundTarget(id: string): Promise<{ inf: Infraction; refundId: string; amount: number; e2eId: string }> {
    const inf = await infractionsStore(knex).find(id);
    if (!inf?.refundId || !inf.refundAmount || !inf.e2eId) throw new InfractionNotFoundError(`infraction ${id} has no devolução to send`);
    return { inf, refundId: inf.refundId, amount: inf.refundAmount, e2eId: inf.e2eId };
  }

  /** Asks the acquirer for the devolução (idempotent on its id: a retry gets the same one). */
  async function sendRefund(id: string): Promise<MedRefundState> {
    const { inf, refundId, amount, e2eId } = await refundTarget(id);
    try {
      const r = await acquirer.requestRefund(e2eId, acquirerRefundId(refundId), amount, medReason(inf).slice(0, 140));
      await chargesStore(knex).setRefundRtrIdIfUnset(refundId, r.rtrId);
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
  async function checkRefund(id: string): Promise<MedRefundState> {
    const { refundId, e2eId } = await refundTarget(id);
    try {
      const r = await acquirer.getRefund(e2eId, acquirerRefundId(refundId));
      return { status: r.status, rtrId: r.rtrId, reason: r.reason };
    } catch (err) {
      if (err instanceof AcquirerError && err.code === 'NOT_FOUND') return { status: 'REFUSED', reason: 'unknown devolução' };
      throw err;
    }
  }

  /** A devolução that did not go through: its money waits in transit for the acquirer or an operator. */
  function noteRefundStuck(id: string, reason: string): Promise<void> {
    logger.error({ infractionId: id, reason }, 'MED devolução not completed: waiting for the acquirer or an operator');
    return Promise.resolve();
  }

  /**
   * The payer has the money back: in transit → acquirer, the charge's refund recorded (a CONFIRMED
   * INFRACTION refund; REFUNDED once fully refunded, guarded on PAID), the infraction REFUNDED, and
   * `infraction.refund_completed` then `charge.refunded`, all in one transaction.
   */
  async function completeRefund(id: string, rtrId: string | null): Promise<InfractionProgress> {
    await knex.transaction(async (trx) => {
      const inf = await lock(trx, id);
      if (inf.status === 'REFUNDED' || !inf.refundId || !inf.refundAmount) return;
      const refundId = inf.refundId;
      const amount = inf.refundAmount;
      const charges = chargesStore(trx);
      await charges.lockRefundRow(refundId);
      const charge = await chargeOf(trx, inf);
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
      await charges.confirmRefundFromOpenOrFailed(refundId, refundedAt, rtrId);
      const updated = await charges.addRefundedToPaid(charge.id, amount);
      if (!updated) logger.warn({ infractionId: inf.id, chargeId: charge.id, status: charge.status }, 'MED refund on a charge that is no longer PAID');
      await patch(trx, inf.id, { status: 'REFUNDED', refundedAt, closedAt: refundedAt });
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
    });
    return progress(id);
  }

  return { progress, block, reject, accept, prepareRefund, sendRefund, checkRefund, noteRefundStuck, completeRefund };
}

export type InfractionLifecycle = ReturnType<typeof createInfractionLifecycle>;
