/**
 * Subscriptions, workflow side (docs/api.md "Subscriptions"): what the `subscription-<id>` run asks
 * of the database and the acquirer. Facts come from the acquirer (GET /rec, GET /cobr), never from
 * a signal. A paid cycle is booked by the charge lifecycle's own `recordPayment` on the cycle's
 * RECURRING charge, so the ledger posting, fee split, settlement, refunds and MED are the charges'.
 * Every step is idempotent: guarded updates, once-only event references, acquirer ids.
 */
import type { Knex } from 'knex';
import { AcquirerError } from '../../acquirer/errors';
import type { Acquirer, CobR } from '../../acquirer/types';
import type { SubscriptionStatus } from '../../contracts/statuses';
import { addDays, cycleDate } from '../../domain/recurrence';
import { newId } from '../../lib/ids';
import type { Logger } from '../../lib/logger';
import { newTxid } from '../../pix';
import { chargesStore } from '../../stores/charges';
import { subscriptionsStore, type SubscriptionRow } from '../../stores/subscriptions';
import type { CycleCheck, CyclePlan, OpenedCycle } from '../../../workflows/subscription-types';
import type { PaymentNotice } from '../../../workflows/charge-types';
import type { ChargeLifecycle } from '../charges/lifecycle';
import { recordEvent } from '../platform/events';

export class SubscriptionNotFoundError extends Error {
  constructor(id: string) {
    super(`subscription ${id} not found`);
    this.name = 'NotFoundError';
  }
}

export interface SubscriptionLifecycleDeps {
  knex: Knex;
  acquirer: Acquirer;
  logger: Logger;
  charges: ChargeLifecycle;
}

export function createSubscriptionLifecycle(deps: SubscriptionLifecycleDeps): SubscriptionLifecycle {
  return new SubscriptionLifecycle(deps);
}

/** One method per step of the workflow (its activities, activities/subscriptions.ts). */
export class SubscriptionLifecycle {
  private readonly knex: Knex;
  private readonly acquirer: Acquirer;
  private readonly logger: Logger;
  constructor(private readonly deps: SubscriptionLifecycleDeps) {
    this.knex = deps.knex;
    this.acquirer = deps.acquirer;
    this.logger = deps.logger;
  }

  private async load(id: string): Promise<SubscriptionRow> {
    const s = await subscriptionsStore(this.knex).find(id);
    if (!s) throw new SubscriptionNotFoundError(id);
    return s;
  }

  /**
   * The subscription brought in line with its rec at the acquirer: approved → ACTIVE
   * (`subscription.approved`), refused → REFUSED, expired → EXPIRED, cancelled by the payer →
   * CANCELED (`subscription.canceled`). Answers the status and the first date.
   */
  async syncWithRec(id: string): Promise<{ status: SubscriptionStatus; firstDate: string }> {
    const s = await this.load(id);
    if ((s.status !== 'PENDING_APPROVAL' && s.status !== 'ACTIVE') || !s.id_rec)
      return { status: s.status, firstDate: s.first_date };
    const rec = await this.acquirer.getRec(s.id_rec);
    await this.knex.transaction(async (trx) => {
      const store = subscriptionsStore(trx);
      const from: SubscriptionStatus[] = ['PENDING_APPROVAL', 'ACTIVE'];
      if (rec.status === 'APROVADA' && (await store.transition(id, ['PENDING_APPROVAL'], 'ACTIVE')))
        await recordEvent(trx, {
          merchantId: s.merchant_id,
          type: 'subscription.approved',
          reference: `subscription.approved:${id}`,
          data: { subscriptionId: id, status: 'ACTIVE', approvedAt: new Date().toISOString() },
        });
      const reason = rec.ending ? `${rec.ending.code}: ${rec.ending.description}` : undefined;
      if (rec.status === 'REJEITADA')
        await store.transition(id, ['PENDING_APPROVAL'], 'REFUSED', { ending_reason: reason });
      if (rec.status === 'EXPIRADA') await store.transition(id, from, 'EXPIRED', { ending_reason: reason });
      if (
        rec.status === 'CANCELADA' &&
        (await store.transition(id, from, 'CANCELED', { canceled_by: 'PAYER', ending_reason: reason }))
      )
        await recordCanceled(trx, s, 'PAYER');
    });
    const after = await this.load(id);
    return { status: after.status, firstDate: after.first_date };
  }

  /** Nobody approved before the first cycle had to be created: the rec is cancelled, EXPIRED. */
  async expireApproval(id: string): Promise<void> {
    await this.closeAtAcquirer(id);
    await subscriptionsStore(this.knex).transition(id, ['PENDING_APPROVAL'], 'EXPIRED', {
      ending_reason: 'not approved by the payer in time',
    });
  }

  /** Cycle `n`, or null when the subscription is not ACTIVE or the cycle would fall after its end (COMPLETED). */
  async planCycle(id: string, n: number): Promise<CyclePlan | null> {
    const s = await this.load(id);
    if (s.status !== 'ACTIVE') return null;
    const dueDate = cycleDate(s.first_date, s.periodicity, n);
    if (s.end_date !== null && dueDate > s.end_date) {
      await subscriptionsStore(this.knex).transition(id, ['ACTIVE'], 'COMPLETED', { ending_reason: 'past endDate' });
      return null;
    }
    const retries = s.retry_policy === 'THREE_IN_SEVEN_DAYS' ? 3 : 0;
    return { number: n, dueDate, amount: s.amount ?? (s.max_amount as number), retries, retryWindowDays: 7 };
  }

  /**
   * The cycle's RECURRING charge and cycle row (once), then its cobr at the acquirer (idempotent on
   * the txid). `expiresIn`: seconds until the last retry could fall. A variable cycle with no
   * amount set is SKIPPED instead: nothing is charged (docs/api.md "Variable amounts").
   */
  async openCycle(id: string, plan: CyclePlan, expiresIn: number): Promise<OpenedCycle> {
    const opened = await this.knex.transaction((trx) => this.cycleCharge(trx, id, plan, expiresIn));
    if (!opened) return { skipped: true };
    const charge = await chargesStore(this.knex).find(opened.chargeId);
    const account = (await chargesStore(this.knex).creationPrerequisites(opened.s.merchant_id))?.acquirer_account_id;
    const txid = charge?.txid as string;
    await this.acquirer.createCobR({
      txid,
      idRec: opened.s.id_rec as string,
      dueDate: plan.dueDate,
      amount: opened.amount,
      description: `${opened.s.description} ${plan.number}`,
      receiver: { account: (account ?? 'unknown').slice(0, 20), accountType: 'PAGAMENTO' },
    });
    return { chargeId: opened.chargeId, txid };
  }

  /**
   * With the subscription row locked (so an amount set meanwhile waits or comes too late): the
   * cycle's charge and row, or null when the cycle is SKIPPED. A variable cycle charges the amount
   * the merchant set; `plan.amount` is then only the payer's bound, never charged unasked.
   */
  private async cycleCharge(trx: Knex.Transaction, id: string, plan: CyclePlan, expiresIn: number) {
    const store = subscriptionsStore(trx);
    const s = await store.find(id, undefined, { lock: true });
    if (!s) throw new SubscriptionNotFoundError(id);
    const seen = await store.cycle(id, plan.number);
    if (seen?.status === 'SKIPPED') return null;
    if (seen?.charge_id) return { s, chargeId: seen.charge_id, amount: seen.amount };
    const amount = s.amount ?? (seen?.status === 'SCHEDULED' ? seen.amount : null);
    const cycle = { subscription_id: id, number: plan.number, due_date: plan.dueDate };
    if (amount === null) {
      await store.insertCycle({ ...cycle, amount: 0, status: 'SKIPPED', charge_id: null });
      return null;
    }
    const chargeId = newId('ch');
    await chargesStore(trx).insertUnlessKeyTaken({
      id: chargeId,
      merchantId: s.merchant_id,
      type: 'RECURRING',
      amount,
      description: `${s.description} ${plan.number}`.slice(0, 255),
      expiresIn: Math.max(60, Math.round(expiresIn)),
      txid: newTxid(),
      idempotencyKey: null,
      tracking: undefined,
      subscription: { id, cycle: plan.number },
    });
    await store.insertCycle({ ...cycle, amount, status: 'PENDING', charge_id: chargeId });
    return { s, chargeId, amount };
  }

  private async cobrOf(id: string, n: number): Promise<{ cobr: CobR; chargeId: string; s: SubscriptionRow }> {
    const s = await this.load(id);
    const cycle = await subscriptionsStore(this.knex).cycle(id, n);
    const charge = cycle?.charge_id ? await chargesStore(this.knex).find(cycle.charge_id) : undefined;
    if (!cycle || !charge?.txid) throw new SubscriptionNotFoundError(`${id} cycle ${n}`);
    return { cobr: await this.acquirer.getCobR(charge.txid), chargeId: charge.id, s };
  }

  /** What the acquirer says of the cycle's cobr. */
  async checkCycle(id: string, n: number): Promise<CycleCheck> {
    const { cobr, s } = await this.cobrOf(id, n);
    const paid = cobr.pix[0];
    if (paid)
      return {
        kind: 'paid',
        notice: {
          endToEndId: paid.endToEndId,
          txid: cobr.txid,
          amount: paid.amount,
          paidAt: paid.paidAt,
          // As the acquirer's cobr reports it (no pagador), so the charge lifecycle's check agrees.
          payer: null,
        },
      };
    if (cobr.status !== 'ATIVA' && cobr.status !== 'CRIADA') return { kind: 'closed', reason: `cobr ${cobr.status}` };
    const last = cobr.attempts.at(-1);
    if (last?.status === 'REJEITADA') {
      await subscriptionsStore(this.knex).setAttempts(id, n, cobr.attempts.length);
      const reason = last.rejection ? `${last.rejection.code}: ${last.rejection.description}` : 'debit rejected';
      // PERMITE_3R_7D: up to 3 retries, each a day after the last, within 7 days of the due date.
      const next = addDays(last.settlementDate, 1);
      const canRetry =
        s.retry_policy === 'THREE_IN_SEVEN_DAYS' && cobr.attempts.length <= 3 && next <= addDays(cobr.dueDate, 7);
      return { kind: 'attempt_failed', attempts: cobr.attempts.length, reason, retryDate: canRetry ? next : null };
    }
    return { kind: 'waiting' };
  }

  /** Asks for another debit on `date`; one already scheduled for that date is not asked again. */
  async retryCycle(id: string, n: number, date: string): Promise<void> {
    const { cobr } = await this.cobrOf(id, n);
    const last = cobr.attempts.at(-1);
    if (last && last.settlementDate === date && last.status !== 'REJEITADA') return;
    await this.acquirer.retryCobR(cobr.txid, date);
    await subscriptionsStore(this.knex).setAttempts(id, n, cobr.attempts.length + 1);
  }

  /** `subscription.charge.failed` for one attempt (once); with no retry left, the cycle FAILED. */
  async recordCycleFailure(id: string, n: number, f: { attempt: number; reason: string; retryDate: string | null }) {
    const s = await this.load(id);
    const cycle = await subscriptionsStore(this.knex).cycle(id, n);
    if (!cycle?.charge_id) throw new SubscriptionNotFoundError(`${id} cycle ${n}`);
    await this.knex.transaction(async (trx) => {
      if (f.retryDate === null) await subscriptionsStore(trx).endCycle(id, n, 'FAILED', { failure_reason: f.reason });
      await recordEvent(trx, {
        merchantId: s.merchant_id,
        type: 'subscription.charge.failed',
        reference: `subscription.charge.failed:${id}:${n}:${f.attempt}`,
        data: {
          subscriptionId: id,
          cycle: n,
          chargeId: cycle.charge_id as string,
          amount: cycle.amount,
          dueDate: cycle.due_date,
          ...f,
        },
      });
    });
    if (f.retryDate === null) await this.endCharge(cycle.charge_id);
  }

  /**
   * The debit booked as the cycle charge's payment by the charge lifecycle (ledger with fee split,
   * PAID, `charge.paid`), then the cycle PAID with `subscription.charge.paid`, once.
   */
  async bookCycle(
    id: string,
    n: number,
    notice: PaymentNotice,
  ): Promise<{ booked: boolean; settlesInMs: number | null }> {
    const s = await this.load(id);
    const cycle = await subscriptionsStore(this.knex).cycle(id, n);
    if (!cycle?.charge_id) throw new SubscriptionNotFoundError(`${id} cycle ${n}`);
    const recorded = await this.deps.charges.recordPayment(cycle.charge_id, notice);
    if (recorded.kind !== 'paid' && recorded.kind !== 'duplicate') return { booked: false, settlesInMs: null };
    const snapshot = recorded.snapshot ?? (await this.deps.charges.loadSnapshot(cycle.charge_id));
    const settlesInMs = snapshot.settled ? null : snapshot.settlesInMs;
    await this.knex.transaction(async (trx) => {
      const paidAt = new Date(notice.paidAt);
      if (!(await subscriptionsStore(trx).endCycle(id, n, 'PAID', { paid_at: paidAt }))) return;
      await recordEvent(trx, {
        merchantId: s.merchant_id,
        type: 'subscription.charge.paid',
        reference: `subscription.charge.paid:${id}:${n}`,
        data: {
          subscriptionId: id,
          cycle: n,
          chargeId: cycle.charge_id as string,
          amount: notice.amount,
          dueDate: cycle.due_date,
          paidAt: paidAt.toISOString(),
        },
      });
    });
    return { booked: true, settlesInMs };
  }

  /** The paid cycle's net pending → available (the charge lifecycle's own settlement, idempotent). */
  settleCycle(chargeId: string): Promise<void> {
    return this.deps.charges.settle(chargeId);
  }

  /** An unpaid cycle's charge CANCELED (the charge lifecycle's guarded expiry) and its cobr cancelled. */
  private async endCharge(chargeId: string): Promise<void> {
    await this.cancelCobR(chargeId);
    await this.deps.charges.expire(chargeId);
  }

  private async cancelCobR(chargeId: string): Promise<void> {
    const txid = (await chargesStore(this.knex).find(chargeId))?.txid;
    if (!txid) return;
    try {
      await this.acquirer.cancelCobR(txid);
    } catch (err) {
      // Paid meanwhile (400) or unknown (404): nothing to cancel; the payment is booked by its check.
      if (!(err instanceof AcquirerError && (err.status === 400 || err.status === 404))) throw err;
    }
  }

  /** The rec cancelled at the acquirer (its open cobrs go with it); the open cycles CANCELED. Their charges. */
  async closeAtAcquirer(id: string): Promise<{ openChargeIds: string[] }> {
    const s = await this.load(id);
    if (s.id_rec) {
      try {
        await this.acquirer.cancelRec(s.id_rec);
      } catch (err) {
        if (!(err instanceof AcquirerError && err.status === 400)) throw err;
        this.logger.info({ subscriptionId: id }, 'rec already ended at the acquirer');
      }
    }
    const open = await subscriptionsStore(this.knex).openCycles(id);
    for (const c of open) {
      if (c.charge_id) await this.endCharge(c.charge_id);
      await subscriptionsStore(this.knex).endCycle(id, c.number, 'CANCELED', { failure_reason: 'subscription ended' });
    }
    return { openChargeIds: open.flatMap((c) => (c.charge_id ? [c.charge_id] : [])) };
  }

  async status(id: string): Promise<SubscriptionStatus> {
    return (await this.load(id)).status;
  }
}

/** `subscription.canceled`, once per subscription, in the caller's transaction. */
export async function recordCanceled(trx: Knex.Transaction, s: SubscriptionRow, by: 'MERCHANT' | 'PAYER') {
  await recordEvent(trx, {
    merchantId: s.merchant_id,
    type: 'subscription.canceled',
    reference: `subscription.canceled:${s.id}`,
    data: { subscriptionId: s.id, status: 'CANCELED', canceledBy: by, canceledAt: new Date().toISOString() },
  });
}
