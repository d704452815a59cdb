/**
 * Subscriptions, API side (docs/api.md "Subscriptions"): create (the acquirer's locrec and rec,
 * the authorisation QR, the `subscription-<id>` workflow), list, get with cycles, cancel, a variable
 * cycle's amount. Every query is scoped to the caller's merchant; another merchant's is 404.
 */
import type { Knex } from 'knex';
import type { Acquirer } from '../../acquirer/types';
import type { CobRCallback, RecCallback } from '../../acquirer/wire';
import type { CreateSubscriptionBody, ListSubscriptionsQuery, SubscriptionView } from '../../contracts/subscriptions';
import type { RecPeriodicity, SubscriptionPeriodicity } from '../../contracts/statuses';
import { conflict, forbidden, invalid, notFound, unprocessable, upstream, validationError } from '../../lib/errors';
import { cycleDate } from '../../domain/recurrence';
import { newId } from '../../lib/ids';
import type { Logger } from '../../lib/logger';
import { errorMessage } from '../../lib/error-message';
import { isValidDocument, renderQrDataUrl } from '../../pix';
import { chargesStore } from '../../stores/charges';
import { subscriptionsStore, type CycleRow, type SubscriptionRow } from '../../stores/subscriptions';
import type { SubscriptionWorkflows } from '../../temporal/clients/subscription';
import { recordCanceled } from './lifecycle';

/** Our periodicity in the BCB's words. */
export const REC_PERIODICITY: Record<SubscriptionPeriodicity, RecPeriodicity> = {
  WEEKLY: 'SEMANAL',
  MONTHLY: 'MENSAL',
  QUARTERLY: 'TRIMESTRAL',
  SEMIANNUAL: 'SEMESTRAL',
  YEARLY: 'ANUAL',
};

/** A cycle's cobr is created this many days before its date (BCB: 2 to 10); so the first date is at least this far. */
export const CYCLE_LEAD_DAYS = 3;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function subscriptionView(s: SubscriptionRow): SubscriptionView {
  return {
    id: s.id,
    status: s.status,
    payer: { name: s.payer_name, document: s.payer_document },
    periodicity: s.periodicity,
    amount: s.amount,
    maxAmount: s.max_amount,
    firstDate: s.first_date,
    endDate: s.end_date,
    retryPolicy: s.retry_policy,
    description: s.description,
    qrCode: s.qr_code,
    canceledBy: s.canceled_by,
    createdAt: s.created_at.toISOString(),
    approvedAt: iso(s.approved_at),
    endedAt: iso(s.ended_at),
  };
}

export const cycleView = (c: CycleRow) => ({
  number: c.number,
  dueDate: c.due_date,
  amount: c.amount,
  status: c.status,
  chargeId: c.charge_id,
  attempts: c.attempts,
  failureReason: c.failure_reason,
  paidAt: iso(c.paid_at),
});

export interface SubscriptionsDeps {
  knex: Knex;
  acquirer: Acquirer;
  logger: Logger;
  workflows: SubscriptionWorkflows;
}

export function createSubscriptionsService(deps: SubscriptionsDeps): SubscriptionsService {
  return new SubscriptionsService(deps);
}

/** One method per use case. */
export class SubscriptionsService {
  constructor(private readonly deps: SubscriptionsDeps) {}

  /** Rec and cobr callbacks, verified as signed: see `lookAgain`. */
  readonly callbacks = {
    rec: (b: RecCallback) => this.lookAgain(b.recs.map((r) => r.idRec)),
    cobr: (b: CobRCallback) => this.lookAgain(b.cobsr.map((c) => c.idRec)),
  };

  private async checkInput(merchantId: string, input: CreateSubscriptionBody): Promise<void> {
    if (!isValidDocument(input.payer.document))
      throw unprocessable('payer.document is not a valid CPF or CNPJ', 'invalid_document', 'payer.document');
    const earliest = new Date(Date.now() + CYCLE_LEAD_DAYS * 86_400_000).toISOString().slice(0, 10);
    if (input.firstDate < earliest)
      throw validationError(`firstDate must be on or after ${earliest} (${CYCLE_LEAD_DAYS} days ahead)`, 'firstDate');
    const p = await chargesStore(this.deps.knex).creationPrerequisites(merchantId);
    if (!p) throw notFound('Merchant not found');
    if (p.kyc_status !== 'APPROVED' || !p.acquirer_account_id || p.status !== 'ACTIVE')
      throw forbidden(
        'Cannot create subscriptions: KYC approved, an acquirer account and an active merchant are needed',
      );
  }

  /** The rec at the acquirer, with its QR location: what the payer scans to authorise (JORNADA_2). */
  private async openAtAcquirer(s: SubscriptionRow): Promise<string | null> {
    const loc = await this.deps.acquirer.createRecLocation();
    const rec = await this.deps.acquirer.createRec({
      contract: s.id,
      object: s.description,
      debtor: { name: s.payer_name, document: s.payer_document },
      firstDate: s.first_date,
      ...(s.end_date ? { endDate: s.end_date } : {}),
      periodicity: REC_PERIODICITY[s.periodicity],
      ...(s.amount !== null ? { amount: s.amount } : {}),
      retryPolicy: s.retry_policy === 'THREE_IN_SEVEN_DAYS' ? 'PERMITE_3R_7D' : 'NAO_PERMITE',
      locationId: loc.id,
    });
    const qr = (await this.deps.acquirer.getRec(rec.idRec)).pixCopiaECola ?? null;
    await subscriptionsStore(this.deps.knex).setRec(s.id, rec.idRec, qr);
    return qr;
  }

  async create(merchantId: string, input: CreateSubscriptionBody, key?: string) {
    await this.checkInput(merchantId, input);
    const store = subscriptionsStore(this.deps.knex);
    const id = newId('sub');
    const inserted = await store.insertUnlessKeyTaken({
      id,
      merchant_id: merchantId,
      payer_name: input.payer.name,
      payer_document: input.payer.document,
      periodicity: input.periodicity,
      amount: input.amount ?? null,
      max_amount: input.maxAmount ?? null,
      first_date: input.firstDate,
      end_date: input.endDate ?? null,
      retry_policy: input.retryPolicy,
      description: input.description,
      idempotency_key: key ?? null,
    });
    if (!inserted && key) {
      const seen = await store.byKey(merchantId, key);
      if (seen) return { replay: true as const, subscription: subscriptionView(seen) };
    }
    const row = (await store.find(id)) as SubscriptionRow;
    try {
      await this.openAtAcquirer(row);
    } catch (err) {
      this.deps.logger.warn({ subscriptionId: id, err: errorMessage(err) }, 'acquirer refused the recurrence');
      await store.transition(id, ['PENDING_APPROVAL'], 'EXPIRED', { ending_reason: 'acquirer failure at creation' });
      throw upstream('The acquirer could not create the recurrence');
    }
    await this.deps.workflows.start({ id, merchantId });
    const created = (await store.find(id)) as SubscriptionRow;
    const imageBase64 = created.qr_code ? await renderQrDataUrl(created.qr_code) : null;
    return { replay: false as const, subscription: { ...subscriptionView(created), imageBase64 } };
  }

  async list(merchantId: string, q: ListSubscriptionsQuery) {
    const { rows, total } = await subscriptionsStore(this.deps.knex).page({ merchantId, ...q });
    return { page: q.page, limit: q.limit, total, subscriptions: rows.map(subscriptionView) };
  }

  async get(merchantId: string, id: string) {
    const store = subscriptionsStore(this.deps.knex);
    const s = await store.find(id, merchantId);
    if (!s) throw notFound('Subscription not found');
    return { ...subscriptionView(s), cycles: (await store.cycles(id)).map(cycleView) };
  }

  /** The merchant cancels: CANCELED and `subscription.canceled` at once; the workflow cancels at the this.deps.acquirer. */
  async cancel(merchantId: string, id: string) {
    const done = await this.deps.knex.transaction(async (trx) => {
      const store = subscriptionsStore(trx);
      const s = await store.find(id, merchantId, { lock: true });
      if (!s) throw notFound('Subscription not found');
      if (!(await store.transition(id, ['PENDING_APPROVAL', 'ACTIVE'], 'CANCELED', { canceled_by: 'MERCHANT' })))
        throw invalid(`Subscription is ${s.status}; only PENDING_APPROVAL or ACTIVE can be canceled`);
      await recordCanceled(trx, s, 'MERCHANT');
      return s;
    });
    await this.deps.workflows.cancelRequested({ id, merchantId: done.merchant_id });
    return this.get(merchantId, id);
  }

  /**
   * The merchant sets what a variable subscription's cycle `n` charges, up to the maxAmount the
   * payer authorised, until that cycle's cobr is created (docs/api.md "Variable amounts"). The
   * subscription row is locked, as the workflow's `openCycle` locks it, so one of the two wins.
   */
  async setCycleAmount(merchantId: string, id: string, n: number, amount: number) {
    await this.deps.knex.transaction(async (trx) => {
      const store = subscriptionsStore(trx);
      const s = await store.find(id, merchantId, { lock: true });
      if (!s) throw notFound('Subscription not found');
      if (s.max_amount === null)
        throw invalid('Subscription has a fixed amount; only a variable one (maxAmount) takes cycle amounts');
      if (s.status !== 'PENDING_APPROVAL' && s.status !== 'ACTIVE')
        throw invalid(`Subscription is ${s.status}; cycle amounts are set on PENDING_APPROVAL or ACTIVE ones`);
      if (amount > s.max_amount)
        throw validationError(`amount must not exceed the maxAmount the payer authorised (${s.max_amount})`, 'amount');
      const dueDate = cycleDate(s.first_date, s.periodicity, n);
      if (s.end_date !== null && dueDate > s.end_date)
        throw validationError(`cycle ${n} would fall on ${dueDate}, after endDate ${s.end_date}`, 'number');
      if (!(await store.scheduleCycleAmount(id, n, dueDate, amount))) {
        const status = (await store.cycle(id, n))?.status ?? 'open';
        throw conflict(`Cycle ${n} is ${status}: its cobr was created or it was skipped; its amount is final`);
      }
    });
    return this.get(merchantId, id);
  }

  /**
   * A rec or cobr callback, already verified as signed by the acquirer: its subscriptions' runs
   * look again (at the acquirer: the callback's word is not taken). A rec not ours is ignored.
   */
  private async lookAgain(idRecs: string[]): Promise<void> {
    for (const s of await subscriptionsStore(this.deps.knex).byIdRecs([...new Set(idRecs)]))
      await this.deps.workflows.lookAgain({ id: s.id, merchantId: s.merchant_id });
  }
}
