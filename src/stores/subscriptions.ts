/**
 * Every query on `subscriptions` and `subscription_cycles` (docs/api.md "Subscriptions"): the API
 * side (create, replay, list, get, cancel) and the subscription workflow's steps. Every API read is
 * scoped to the merchant. Dates are read as `YYYY-MM-DD` text, never as instants.
 */
import type { Db } from '../db/types';
import type {
  SubscriptionCycleStatus,
  SubscriptionPeriodicity,
  SubscriptionRetryPolicy,
  SubscriptionStatus,
} from '../contracts/statuses';
import { OPEN_CYCLE_STATUSES } from '../contracts/statuses';
import { MAX_LIST_DEPTH } from '../contracts/validation';

export interface SubscriptionRow {
  id: string;
  merchant_id: string;
  status: SubscriptionStatus;
  payer_name: string;
  payer_document: string;
  periodicity: SubscriptionPeriodicity;
  amount: number | null;
  max_amount: number | null;
  first_date: string;
  end_date: string | null;
  retry_policy: SubscriptionRetryPolicy;
  description: string;
  id_rec: string | null;
  qr_code: string | null;
  canceled_by: 'MERCHANT' | 'PAYER' | null;
  ending_reason: string | null;
  created_at: Date;
  approved_at: Date | null;
  ended_at: Date | null;
}

export interface CycleRow {
  subscription_id: string;
  number: number;
  due_date: string;
  amount: number;
  status: SubscriptionCycleStatus;
  charge_id: string | null;
  attempts: number;
  failure_reason: string | null;
  paid_at: Date | null;
}

export type NewSubscription = Omit<
  SubscriptionRow,
  'status' | 'id_rec' | 'qr_code' | 'canceled_by' | 'ending_reason' | 'created_at' | 'approved_at' | 'ended_at'
> & { idempotency_key: string | null };

const COLUMNS = [
  'id',
  'merchant_id',
  'status',
  'payer_name',
  'payer_document',
  'periodicity',
  'amount',
  'max_amount',
  'first_date',
  'end_date',
  'retry_policy',
  'description',
  'id_rec',
  'qr_code',
  'canceled_by',
  'ending_reason',
  'created_at',
  'approved_at',
  'ended_at',
];
const CYCLE_COLUMNS = [
  'subscription_id',
  'number',
  'due_date',
  'amount',
  'status',
  'charge_id',
  'attempts',
  'failure_reason',
  'paid_at',
];

/** Dates as `YYYY-MM-DD` text (a `date` would come back as a local-midnight Date). */
const AS_TEXT = new Set(['first_date', 'end_date', 'due_date']);
const select = (db: Db, columns: string[]) => columns.map((c) => (AS_TEXT.has(c) ? db.raw(`${c}::text as ${c}`) : c));

export function subscriptionsStore(db: Db): SubscriptionsStore {
  return new SubscriptionsStore(db);
}

const one = (q: Promise<SubscriptionRow[]>) => q.then((rows) => rows[0]);

/** One method per query; `db` is the knex instance or the caller's transaction. */
export class SubscriptionsStore {
  private readonly COLS: ReturnType<typeof select>;
  private readonly CYCLE_COLS: ReturnType<typeof select>;
  constructor(private readonly db: Db) {
    this.COLS = select(db, COLUMNS);
    this.CYCLE_COLS = select(db, CYCLE_COLUMNS);
  }

  /** Inserts unless the merchant's idempotency key is taken (then false). */
  async insertUnlessKeyTaken(s: NewSubscription): Promise<boolean> {
    const rows = (await this.db('subscriptions')
      .insert(s)
      .onConflict(['merchant_id', 'idempotency_key'])
      .ignore()
      .returning('id')) as unknown[];
    return rows.length > 0;
  }

  byKey(merchantId: string, key: string): Promise<SubscriptionRow | undefined> {
    return one(this.db('subscriptions').select(this.COLS).where({ merchant_id: merchantId, idempotency_key: key }));
  }

  /** By id; with `merchantId`, only that merchant's (another's is not found). */
  find(id: string, merchantId?: string, opts: { lock?: boolean } = {}): Promise<SubscriptionRow | undefined> {
    const q = this.db('subscriptions')
      .select(this.COLS)
      .where({ id, ...(merchantId ? { merchant_id: merchantId } : {}) });
    return one(opts.lock ? q.forUpdate() : q);
  }

  /** The subscriptions of these recs (acquirer callbacks name the rec, not us). */
  byIdRecs(idRecs: string[]): Promise<Array<{ id: string; merchant_id: string }>> {
    return this.db('subscriptions').select('id', 'merchant_id').whereIn('id_rec', idRecs);
  }

  async setRec(id: string, idRec: string, qrCode: string | null): Promise<void> {
    await this.db('subscriptions')
      .where({ id })
      .update({ id_rec: idRec, qr_code: qrCode, updated_at: this.db.fn.now() });
  }

  /** Guarded: moves an open subscription to `status`; false when it was no longer in `from`. */
  async transition(
    id: string,
    from: SubscriptionStatus[],
    to: SubscriptionStatus,
    extra: { canceled_by?: 'MERCHANT' | 'PAYER'; ending_reason?: string } = {},
  ): Promise<boolean> {
    const n = await this.db('subscriptions')
      .where({ id })
      .whereIn('status', from)
      .update({
        status: to,
        ...extra,
        ...(to === 'ACTIVE' ? { approved_at: this.db.fn.now() } : { ended_at: this.db.fn.now() }),
        qr_code: null,
        updated_at: this.db.fn.now(),
      });
    return n > 0;
  }

  async page(q: { merchantId: string; page: number; limit: number; status?: SubscriptionStatus }) {
    const base = this.db('subscriptions')
      .where({ merchant_id: q.merchantId })
      .modify((b) => (q.status ? void b.where({ status: q.status }) : undefined));
    const offset = (q.page - 1) * q.limit;
    const [rows, counted] = await Promise.all([
      base
        .clone()
        .select(this.COLS)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(q.limit)
        .offset(Math.min(offset, MAX_LIST_DEPTH)) as Promise<SubscriptionRow[]>,
      base.clone().count<Array<{ count: string }>>('* as count'),
    ]);
    return { rows, total: Number(counted[0]?.count ?? 0) };
  }

  cycles(subscriptionId: string): Promise<CycleRow[]> {
    return this.db('subscription_cycles')
      .select(this.CYCLE_COLS)
      .where({ subscription_id: subscriptionId })
      .orderBy('number') as Promise<CycleRow[]>;
  }

  cycle(subscriptionId: string, number: number, opts: { lock?: boolean } = {}): Promise<CycleRow | undefined> {
    const q = this.db('subscription_cycles').select(this.CYCLE_COLS).where({ subscription_id: subscriptionId, number });
    return (opts.lock ? q.forUpdate() : q).then((rows: CycleRow[]) => rows[0]);
  }

  /** The cycle row once; a SCHEDULED one (an amount set ahead) becomes it. */
  async insertCycle(c: Pick<CycleRow, 'subscription_id' | 'number' | 'due_date' | 'amount' | 'charge_id' | 'status'>) {
    await this.db('subscription_cycles')
      .insert({ ...c, updated_at: this.db.fn.now() })
      .onConflict(['subscription_id', 'number'])
      .merge(['amount', 'status', 'charge_id', 'updated_at'])
      .where('subscription_cycles.status', 'SCHEDULED');
  }

  /** A variable cycle's amount set ahead (SCHEDULED, no charge); false when the cycle is past that. */
  async scheduleCycleAmount(subscriptionId: string, number: number, dueDate: string, amount: number) {
    const rows = (await this.db('subscription_cycles')
      .insert({ subscription_id: subscriptionId, number, due_date: dueDate, amount, status: 'SCHEDULED' })
      .onConflict(['subscription_id', 'number'])
      .merge({ amount, updated_at: this.db.fn.now() })
      .where('subscription_cycles.status', 'SCHEDULED')
      .returning('number')) as unknown[];
    return rows.length > 0;
  }

  /** Guarded: a PENDING cycle's end (PAID, FAILED, CANCELED), or a SCHEDULED one's cancel; false when it had already ended. */
  async endCycle(
    subscriptionId: string,
    number: number,
    status: Exclude<SubscriptionCycleStatus, 'PENDING' | 'SCHEDULED' | 'SKIPPED'>,
    extra: { failure_reason?: string; paid_at?: Date } = {},
  ): Promise<boolean> {
    const n = await this.db('subscription_cycles')
      .where({ subscription_id: subscriptionId, number })
      .whereIn('status', status === 'CANCELED' ? OPEN_CYCLE_STATUSES : ['PENDING'])
      .update({ status, ...extra, updated_at: this.db.fn.now() });
    return n > 0;
  }

  async setAttempts(subscriptionId: string, number: number, attempts: number): Promise<void> {
    await this.db('subscription_cycles')
      .where({ subscription_id: subscriptionId, number })
      .where('attempts', '<', attempts)
      .update({ attempts, updated_at: this.db.fn.now() });
  }

  /** Cycles not yet ended (`OPEN_CYCLE_STATUSES`). */
  openCycles(subscriptionId: string): Promise<CycleRow[]> {
    return this.db('subscription_cycles')
      .select(this.CYCLE_COLS)
      .where({ subscription_id: subscriptionId })
      .whereIn('status', OPEN_CYCLE_STATUSES) as Promise<CycleRow[]>;
  }
}
