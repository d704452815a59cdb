/**
 * Queries on `charges` and `charge_refunds` of creation and listing: the list (docs/performance.md
 * "Where a charge's time goes"), the reconciler's sweeps, and the API side (creation, replay, get,
 * cancel, refund request). The payment lifecycle's are in ./charge-payments.ts.
 * `db` is the knex instance or the transaction the caller runs in. Rows are plain where the path
 * is hot (no model hydration), as the callers chose.
 */
import { bindContext } from '../lib/bind-context';
import type { Knex } from 'knex';
import type { Db } from '../db/types';
import { preparedStatement, queryPrepared, type PreparedStatement } from '../db/prepared';
import { newId } from '../lib/ids';
import { Charge } from '../models/charge';
import { ChargeRefund } from '../models/charge-refund';
import type { CreateChargeBody } from '../contracts/charges';
import type { DueDateRules } from '../domain/due-date-amount';
import type { ChargeType, RefundStatus } from '../contracts/statuses';
import { MAX_LIST_DEPTH, MAX_PAGE_LIMIT } from '../contracts/validation';
import { chargeRows, type ChargeRow } from './charge-rows';

export { Charge, ChargeRefund };

export type CustomerInput = NonNullable<CreateChargeBody['customer']>;

/** A charge as creation inserts it (PENDING, without a BR Code yet). */
export interface NewCharge {
  id: string;
  merchantId: string;
  /** IMMEDIATE unless given (docs/api.md "Charges"). */
  type?: ChargeType;
  amount: number;
  description: CreateChargeBody['description'];
  expiresIn: number;
  txid: string;
  idempotencyKey: string | null;
  tracking: CreateChargeBody['tracking'];
  /** A DUE_DATE charge's rules (docs/api.md "Due-date charges"). */
  dueRules?: DueDateRules;
  /** A RECURRING charge's subscription and cycle (docs/api.md "Subscriptions"). */
  subscription?: { id: string; cycle: number };
}

/** What a creation needs of its merchant, read in one statement. */
export interface CreationPrerequisitesRow {
  status: string;
  kyc_status: string;
  acquirer_account_id: string | null;
  pix_key: string | null;
}

/** The customer, by (merchant, document): the latest name, e-mail and phone win. */
const customerUpsert = (db: Db, merchantId: string, c: CustomerInput) =>
  db('customers')
    .insert({
      id: newId('cus'),
      merchant_id: merchantId,
      name: c.name,
      email: c.email,
      phone: c.phone,
      document: c.document,
    })
    .onConflict(['merchant_id', 'document'])
    .merge({ name: c.name, email: c.email, phone: c.phone, updated_at: db.fn.now() })
    .returning('id');

const EXPIRES_AT_SQL = 'now() + make_interval(secs => ?)';

/**
 * A new charge's columns, each written once. The batched insert (`insertManyUnlessKeyTaken`,
 * written out as SQL) puts `sql` in each VALUES row and binds `value` to its `?`; the query
 * builder's row (`chargeInsertRow`) takes `row`, else `value`.
 */
const NEW_CHARGE_COLUMNS: ReadonlyArray<{
  name: string;
  sql: string;
  value?: (c: NewCharge) => Knex.RawBinding;
  row?: (db: Db, c: NewCharge, customerId: string | Knex.Raw | null) => unknown;
}> = [
  { name: 'id', sql: '?', value: (c) => c.id },
  { name: 'merchant_id', sql: '?', value: (c) => c.merchantId },
  { name: 'customer_id', sql: 'null', row: (_db, _c, customerId) => customerId },
  { name: 'type', sql: '?', value: (c) => c.type ?? 'IMMEDIATE' },
  { name: 'amount', sql: '?', value: (c) => c.amount },
  // The builder leaves a missing description to the column's default.
  { name: 'description', sql: '?', value: (c) => c.description ?? null, row: (_db, c) => c.description },
  { name: 'status', sql: "'PENDING'", row: () => 'PENDING' },
  { name: 'expires_in', sql: '?', value: (c) => c.expiresIn },
  {
    name: 'expires_at',
    sql: EXPIRES_AT_SQL,
    value: (c) => c.expiresIn,
    row: (db, c) => db.raw(EXPIRES_AT_SQL, [c.expiresIn]),
  },
  { name: 'txid', sql: '?', value: (c) => c.txid },
  { name: 'idempotency_key', sql: '?', value: (c) => c.idempotencyKey },
  { name: 'tracking', sql: '?', value: (c) => (c.tracking ? JSON.stringify(c.tracking) : null) },
  { name: 'due_date', sql: '?::date', value: (c) => c.dueRules?.dueDate ?? null },
  { name: 'validity_after_due', sql: '?::int', value: (c) => c.dueRules?.validityAfterDue ?? null },
  { name: 'due_rules', sql: '?::jsonb', value: (c) => (c.dueRules ? JSON.stringify(c.dueRules) : null) },
  { name: 'subscription_id', sql: '?', value: (c) => c.subscription?.id ?? null },
  { name: 'subscription_cycle', sql: '?', value: (c) => c.subscription?.cycle ?? null },
];

const chargeInsertRow = (db: Db, c: NewCharge, customerId: string | Knex.Raw | null): Record<string, unknown> =>
  Object.fromEntries(
    NEW_CHARGE_COLUMNS.map((col) => [col.name, col.row ? col.row(db, c, customerId) : col.value?.(c)]),
  );

/** `insertManyUnlessKeyTaken`: the columns, one VALUES row, the bindings of one charge and what follows the list. */
const INSERT_CHARGES_SQL = `insert into charges
  (${NEW_CHARGE_COLUMNS.map((col) => col.name).join(', ')})`;
const INSERT_CHARGES_ROW = `(${NEW_CHARGE_COLUMNS.map((col) => col.sql).join(', ')})`;
const INSERT_CHARGES_BINDINGS = NEW_CHARGE_COLUMNS.flatMap((col) => (col.value ? [col.value] : []));
const INSERT_CHARGES_TAIL = 'on conflict (merchant_id, idempotency_key) do nothing returning id, created_at';

/** A row of the list statement: which query of the batch, its total, and a charge (its columns all null past the last page). */
type PageRow = ChargeRow & { query: number | string; total: number | string | null };

/** One page of one merchant's list, as the API asks for it. */
export interface PageQuery {
  merchantId: string;
  page: number;
  limit: number;
  status?: ChargeRow['status'];
  type?: ChargeType;
}

/**
 * Offsets from which a page starts at the hour its first charge was created
 * (docs/performance.md "Deep pages") instead of walking `offset` index entries: below it the walk is
 * cheaper than looking the hour up.
 */
export const DEEP_PAGE_OFFSET = 1000;

/**
 * The list statement (see `pagesWithTotals`), with or without a status filter, shallow or deep:
 * four fixed statements so that each keeps the plan of its own index. Each answers a batch of
 * pages, one per element of its arrays (`unnest … with ordinality`: the element's number tells
 * whose rows are whose), each page and total found as for a statement of its own. A deep one first
 * asks `pixflow_charge_page_start` (migration `charge_hour_counts`) where its page begins: the end
 * of the hour its first charge was created in, and how many charges come before that; the index
 * walk then starts there and skips only the rest. A page's size and offset come from the arrays, so
 * the planner cannot know how few rows a page has (it guesses a tenth of the merchant's charges):
 * the page is bounded by the API's largest page, a constant it can count on, and each of its rows
 * and customers is fetched by its key in a lateral subquery (`limit 1`: not merged into a join).
 * Without both, a page was a hash join over every charge, or a plan costly enough for PostgreSQL
 * to compile it (JIT) on every call: 0.1–0.45 s per page against 0.2 ms.
 */
const pageStatement = (byStatus: boolean, deep: boolean): string => {
  const status = byStatus ? ' and status = q.status' : '';
  const ids = deep
    ? `pixflow_charge_page_start(q.merchant, q.status, q.skip) s
        cross join lateral (select id from (select id from charges where merchant_id = q.merchant${status} and created_at < s.before_ts
              order by created_at desc, id desc limit q.take offset s.skip) p limit ${MAX_PAGE_LIMIT}) page`
    : `(select id from (select id from charges where merchant_id = q.merchant${status}
              order by created_at desc, id desc limit q.take offset q.skip) p limit ${MAX_PAGE_LIMIT}) page`;
  return `select q.query, t.total, r.id, r.type, r.txid, r."qrCode", r.amount, r.description, r.status, r."expiresIn", r."paidAt",
      r."createdAt", r."customerId", r."customerName", r."customerDocument"
    from unnest(?::text[], ?::text[], ?::int[], ?::bigint[]) with ordinality as q(merchant, status, take, skip, query)
    cross join lateral (select coalesce(sum(n), 0)::bigint as total from charge_counts where merchant_id = q.merchant${status}) t
    left join lateral (
      select c.id, c.type, c.txid, c.qr_code as "qrCode", c.amount, c.description, c.status, c.expires_in as "expiresIn",
          c.paid_at as "paidAt", c.created_at as "createdAt", c.customer_id as "customerId",
          cu.name as "customerName", cu.document as "customerDocument"
        from ${ids}
        cross join lateral (select * from charges where id = page.id limit 1) c
        left join lateral (select name, document from customers where id = c.customer_id limit 1) cu on true
        -- Only a page that holds rows, none past the depth bound, is walked (pageIsRead): a
        -- one-time filter on the total, so a page past the end or too deep costs the sum alone.
        -- offset 0 keeps the subquery whole: pulled up, the filter became a join filter applied
        -- after the walk.
        where q.skip < t.total and least(q.skip + q.take, t.total) <= ${MAX_LIST_DEPTH}
        offset 0
    ) r on true
    order by q.query, r."createdAt" desc, r.id desc`;
};
const PAGES_OF_ALL = preparedStatement('charge_list_pages', pageStatement(false, false));
const PAGES_OF_STATUS = preparedStatement('charge_list_pages_status', pageStatement(true, false));
const DEEP_PAGES_OF_ALL = preparedStatement('charge_list_deep_pages', pageStatement(false, true));
const DEEP_PAGES_OF_STATUS = preparedStatement('charge_list_deep_pages_status', pageStatement(true, true));

/**
 * A page of one type (and optionally one status), with its total: the ids from the
 * (merchant, type, created_at desc, id desc) index, which includes the status, and the total a
 * plain count over that index (docs/api.md "Charges": bounded by the list's depth, no counter kept
 * per type). One page per statement; the unfiltered list keeps the batched path above.
 */
const PAGE_OF_TYPE = preparedStatement(
  'charge_list_page_type',
  `with q as (select ?::text as merchant, ?::text as type, ?::text as status, ?::int as take, ?::bigint as skip),
  t as (select count(*)::bigint as total from charges, q
    where merchant_id = q.merchant and charges.type = q.type and (q.status is null or charges.status = q.status))
  select t.total, r.id, r.type, r.txid, r."qrCode", r.amount, r.description, r.status, r."expiresIn", r."paidAt",
      r."createdAt", r."customerId", r."customerName", r."customerDocument"
    from q cross join t
    left join lateral (
      select c.id, c.type, c.txid, c.qr_code as "qrCode", c.amount, c.description, c.status, c.expires_in as "expiresIn",
          c.paid_at as "paidAt", c.created_at as "createdAt", c.customer_id as "customerId",
          cu.name as "customerName", cu.document as "customerDocument"
        from (select id from charges where merchant_id = q.merchant and type = q.type
              and (q.status is null or status = q.status)
              order by created_at desc, id desc limit q.take offset q.skip) page
        cross join lateral (select * from charges where id = page.id limit 1) c
        left join lateral (select name, document from customers where id = c.customer_id limit 1) cu on true
        where q.skip < t.total and least(q.skip + q.take, t.total) <= ${MAX_LIST_DEPTH}
        offset 0
    ) r on true
    order by r."createdAt" desc, r.id desc`,
);

/** Which of the four batched list statements reads this (untyped) page. */
function listStatementOf(q: PageQuery): PreparedStatement {
  const deep = (q.page - 1) * q.limit >= DEEP_PAGE_OFFSET;
  if (q.status) return deep ? DEEP_PAGES_OF_STATUS : PAGES_OF_STATUS;
  return deep ? DEEP_PAGES_OF_ALL : PAGES_OF_ALL;
}

/** Fills `out[i]` for each page of one type among `queries` (`PAGE_OF_TYPE`, one statement per page). */
async function readPagesOfType(
  db: Db,
  queries: readonly PageQuery[],
  out: Array<{ rows: ChargeRow[]; total: number }>,
): Promise<void> {
  await Promise.all(
    queries.map(async (q, i) => {
      if (!q.type) return;
      const found = await queryPrepared<PageRow>(db, PAGE_OF_TYPE, [
        q.merchantId,
        q.type,
        q.status ?? null,
        q.limit,
        (q.page - 1) * q.limit,
      ]);
      const page = { rows: [] as ChargeRow[], total: Number(found[0]?.total ?? 0) };
      for (const row of found) if ((row.id as string | null) !== null) page.rows.push(row);
      out[i] = page;
    }),
  );
}

/** The parked inbox row of a refund (`parkRefund`), correlated to `charge_refunds` in a subquery. */
export const parkedRefundRows = (db: Db) =>
  db('acquirer_callbacks')
    .where({ kind: 'refund', status: 'PARKED' })
    .whereRaw(`acquirer_callbacks.external_id = replace(charge_refunds.id, '_', '') || ':PARKED'`);

/** A refund of a charge's payment as GET /v1/charges/:id lists it (before its view). */
export interface ChargeRefundRow {
  id: string;
  kind: 'MERCHANT' | 'INFRACTION';
  amount: number;
  status: RefundStatus;
  reason: string | null;
  createdAt: Date;
  confirmedAt: Date | null;
}

/** What the payment told about a PAID charge: its payer, end-to-end id and the fee booked with it. */
export interface ChargePaymentRow {
  payerName: string | null;
  payerDocument: string | null;
  e2eId: string | null;
  feeAmount: number | null;
  /** A DUE_DATE charge's due date (`YYYY-MM-DD`) and validity; null otherwise. */
  dueDate?: string | null;
  validityAfterDue?: number | null;
  amountPaid?: number | null;
  paymentBreakdown?: { fine: number; interest: number; discount: number; abatement: number } | null;
}

export const chargesStore = (db: Db) =>
  bindContext(db, {
    find,
    findOwn,
    paymentRefunds,
    findOwnWithPayment,
    findByIdempotencyKey,
    creationPrerequisites,
    upsertCustomer,
    insertUnlessKeyTaken,
    setCustomer,
    failCreation,
    insertManyUnlessKeyTaken,
    storeQrCode,
    storeQrCodes,
    cancelPending,
    findOwnModel,
    openClaims,
    insertRefund,
    pagesWithTotals,
    failInterruptedCreations,
    owingWorkflows,
  });

/** The whole row, optionally locked FOR UPDATE (inside a transaction). */
export async function find(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<Charge | undefined> {
  const q = Charge.query(db);
  if (opts.lock) q.forUpdate();
  return q.findById(id);
}

/** A merchant's charge as the API shows it; another merchant's is undefined. */
export async function findOwn(db: Db, merchantId: string, id: string): Promise<ChargeRow | undefined> {
  return (await chargeRows(db).where({ 'charges.id': id, 'charges.merchant_id': merchantId }).first()) as
    ChargeRow | undefined;
}

/**
 * The refunds of the charge's payment (docs/api.md "Charges"), oldest first: the merchant's and
 * the MED devoluções (stored kind INFRACTION); not an unpayable payment's return, which gives
 * back another payment than the charge's.
 */
export async function paymentRefunds(db: Db, chargeId: string): Promise<ChargeRefundRow[]> {
  return (await db('charge_refunds')
    .where({ charge_id: chargeId })
    .whereIn('kind', ['MERCHANT', 'INFRACTION'])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(
      'id',
      'kind',
      'amount',
      'status',
      'reason',
      'created_at as createdAt',
      'confirmed_at as confirmedAt',
    )) as ChargeRefundRow[];
}

/** A merchant's charge with its payment's facts (null until paid), in the one read of `findOwn`. */
export async function findOwnWithPayment(
  db: Db,
  merchantId: string,
  id: string,
): Promise<(ChargeRow & ChargePaymentRow) | undefined> {
  return (await chargeRows(db)
    .select(
      'charges.payer_name as payerName',
      'charges.payer_document as payerDocument',
      'charges.e2e_id as e2eId',
      'charges.fee_amount as feeAmount',
      db.raw(`to_char(charges.due_date, 'YYYY-MM-DD') as "dueDate"`),
      'charges.validity_after_due as validityAfterDue',
      'charges.amount_paid as amountPaid',
      'charges.payment_breakdown as paymentBreakdown',
    )
    .where({ 'charges.id': id, 'charges.merchant_id': merchantId })
    .first()) as (ChargeRow & ChargePaymentRow) | undefined;
}

/** The charge the merchant's idempotency key made. */
export async function findByIdempotencyKey(db: Db, merchantId: string, key: string): Promise<ChargeRow | undefined> {
  return (await chargeRows(db).where({ 'charges.merchant_id': merchantId, 'charges.idempotency_key': key }).first()) as
    ChargeRow | undefined;
}

/** The merchant's status, KYC, acquirer account and oldest ACTIVE PIX key, in one statement. */
export async function creationPrerequisites(db: Db, merchantId: string): Promise<CreationPrerequisitesRow | undefined> {
  return (await db('merchants as m')
    .where('m.id', merchantId)
    .first(
      'm.status',
      'm.kyc_status',
      'm.acquirer_account_id',
      db.raw(
        `(select k.key from pix_keys k where k.merchant_id = m.id and k.status = 'ACTIVE' order by k.created_at limit 1) as pix_key`,
      ),
    )) as CreationPrerequisitesRow | undefined;
}

/** Upserts the customer (see `customerUpsert`); its id. */
export async function upsertCustomer(db: Db, merchantId: string, c: CustomerInput): Promise<string> {
  const rows = (await customerUpsert(db, merchantId, c)) as Array<{ id: string }>;
  const row = rows[0];
  if (!row) throw new Error('customer upsert returned no row');
  return row.id;
}

/**
 * Inserts a PENDING charge unless the merchant's idempotency key is taken (then null). With
 * `customer`, the customer upsert and the charge go in one statement (a data-modifying CTE).
 */
export async function insertUnlessKeyTaken(
  db: Db,
  c: NewCharge,
  customer?: CustomerInput,
): Promise<{ createdAt: Date; customerId: string | null } | null> {
  if (!customer) {
    const created = (await insertManyUnlessKeyTaken(db, [c])).get(c.id);
    return created ? { createdAt: created, customerId: null } : null;
  }
  const q: Knex.QueryBuilder = customer
    ? db.with('cus', customerUpsert(db, c.merchantId, customer)).from('charges')
    : db('charges');
  const rows = (await q
    .insert(chargeInsertRow(db, c, customer ? db.raw('(select id from cus)') : null))
    .onConflict(['merchant_id', 'idempotency_key'])
    .ignore()
    .returning(['created_at', 'customer_id'])) as Array<{ created_at: Date; customer_id: string | null }>;
  const row = rows[0];
  return row ? { createdAt: row.created_at, customerId: row.customer_id } : null;
}

export async function setCustomer(db: Db, id: string, customerId: string): Promise<void> {
  await db('charges').where({ id }).update({ customer_id: customerId });
}

/** A creation the acquirer refused: FAILED without txid, only from PENDING. */
export async function failCreation(db: Db, id: string, reason: string): Promise<void> {
  await db('charges')
    .update({ status: 'FAILED', txid: null, failure_reason: reason, updated_at: db.fn.now() })
    .where({ id, status: 'PENDING' });
}

/**
 * New charges without a customer, in one statement (docs/performance.md "Where a charge's time goes": the
 * creations of one event-loop turn are written together). A charge whose idempotency key is
 * taken — by an earlier charge or by another in the same list — is not inserted. Answers the
 * inserted ids with their creation time. Written out: the query builder's compile of the
 * API's hottest statement cost more than the statement.
 */
export async function insertManyUnlessKeyTaken(db: Db, cs: NewCharge[]): Promise<Map<string, Date>> {
  const values = cs.map(() => INSERT_CHARGES_ROW).join(', ');
  const bindings: Knex.RawBinding[] = [];
  for (const c of cs) for (const value of INSERT_CHARGES_BINDINGS) bindings.push(value(c));
  const { rows } = (await db.raw(`${INSERT_CHARGES_SQL} values ${values} ${INSERT_CHARGES_TAIL}`, bindings)) as {
    rows: Array<{ id: string; created_at: Date }>;
  };
  return new Map(rows.map((r) => [r.id, r.created_at]));
}

/** Stores the BR Code on a charge still PENDING without one; false otherwise. */
export async function storeQrCode(db: Db, id: string, qrCode: string): Promise<boolean> {
  return (await storeQrCodes(db, [{ id, qrCode }])).has(id);
}

/** `storeQrCode` for several charges in one statement; answers the ids that were stored. */
export async function storeQrCodes(db: Db, items: Array<{ id: string; qrCode: string }>): Promise<Set<string>> {
  const values = items.map(() => '(?::text, ?::text)').join(', ');
  const { rows } = (await db.raw(
    `update charges c set qr_code = v.qr_code, updated_at = now() from (values ${values}) as v(id, qr_code)
     where c.id = v.id and c.status = 'PENDING' and c.qr_code is null returning c.id`,
    items.flatMap((i) => [i.id, i.qrCode]),
  )) as { rows: Array<{ id: string }> };
  return new Set(rows.map((r) => r.id));
}

/** PENDING → CANCELED for the merchant's charge; false when it is not PENDING (or not theirs). */
export async function cancelPending(db: Db, merchantId: string, id: string): Promise<boolean> {
  const n = await Charge.query(db)
    .patch({ status: 'CANCELED', updatedAt: new Date() })
    .where({ id, merchant_id: merchantId, status: 'PENDING' });
  return n > 0;
}

/** The merchant's charge as a model, optionally locked FOR UPDATE (inside a transaction). */
export async function findOwnModel(
  db: Db,
  merchantId: string,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<Charge | undefined> {
  const q = Charge.query(db);
  if (opts.lock) q.forUpdate();
  return q.findOne({ id, merchant_id: merchantId });
}

/**
 * What is already spoken for of the payment besides its confirmed refunds
 * (docs/operations.md "MED infractions", one bound per payment): refunds in transit (the merchant's and MED devoluções)
 * plus what infractions other than `exceptInfractionId` hold blocked. A merchant refund and a
 * MED block both take at most `amount − refundedAmount − openClaims`.
 */
export async function openClaims(db: Db, chargeId: string, exceptInfractionId: string | null = null): Promise<number> {
  const row = (await db
    .select(
      db.raw(
        `(select coalesce(sum(amount), 0) from charge_refunds
            where charge_id = ? and kind in ('MERCHANT', 'INFRACTION') and status = 'REQUESTED')
         + (select coalesce(sum(blocked_amount), 0) from infractions
            where charge_id = ? and id is distinct from ?) as s`,
        [chargeId, chargeId, exceptInfractionId],
      ),
    )
    .first()) as { s: number | string | null };
  return Number(row.s ?? 0);
}

export async function insertRefund(
  db: Db,
  r: Pick<ChargeRefund, 'id' | 'chargeId' | 'merchantId' | 'amount' | 'reason' | 'kind' | 'status' | 'e2eId'>,
): Promise<void> {
  await ChargeRefund.query(db).insert(r);
}

/**
 * Pages, newest first, each with its merchant's total (of one status); every page of one kind
 * (filtered or not, shallow or deep) in one prepared statement
 * (docs/performance.md "Where a read's time goes"; Balance reads for why several in one): the total is a sum over `charge_counts` (at
 * most eight rows per status), which a trigger keeps in the transaction of every change to a
 * charge; the page's ids come from the (merchant[, status], created_at desc, id desc) index
 * first, skipping `offset` index entries (from `DEEP_PAGE_OFFSET` on, only those created in the
 * hour the page begins in: `charge_hour_counts`), then only that page's rows and customers are
 * read. A page and its total come from one snapshot; a page past the end is empty and still
 * has the total.
 */
export async function pagesWithTotals(
  db: Db,
  queries: readonly PageQuery[],
): Promise<Array<{ rows: ChargeRow[]; total: number }>> {
  const out = queries.map(() => ({ rows: [] as ChargeRow[], total: 0 }));
  // One statement per kind of page (filtered or not, shallow or deep), each for all its pages.
  const byStatement = new Map<PreparedStatement, number[]>();
  queries.forEach((q, i) => {
    if (q.type) return; // read by readPagesOfType, beside the batched statements
    const statement = listStatementOf(q);
    const list = byStatement.get(statement);
    if (list) list.push(i);
    else byStatement.set(statement, [i]);
  });
  await Promise.all([
    readPagesOfType(db, queries, out),
    ...[...byStatement].map(async ([statement, members]) => {
      const qs = members.map((i) => queries[i] as PageQuery);
      const found = await queryPrepared<PageRow>(db, statement, [
        qs.map((q) => q.merchantId),
        qs.map((q) => q.status ?? null),
        qs.map((q) => q.limit),
        qs.map((q) => (q.page - 1) * q.limit),
      ]);
      for (const row of found) {
        const page = out[members[Number(row.query) - 1] as number] as { rows: ChargeRow[]; total: number };
        page.total = Number(row.total ?? 0);
        // A page past the end is its total's row alone, its charge columns null.
        if ((row.id as string | null) !== null) page.rows.push(row);
      }
    }),
  ]);
  return out;
}

/** PENDING charges without a BR Code older than two minutes become FAILED; how many. */
export async function failInterruptedCreations(db: Db): Promise<number> {
  return db('charges')
    .where({ status: 'PENDING' })
    .whereNull('qr_code')
    .where('created_at', '<', db.raw(`now() - interval '2 minutes'`))
    .update({ status: 'FAILED', failure_reason: 'creation interrupted', updated_at: db.fn.now() });
}

/**
 * Charges that still owe something (awaiting payment, awaiting settlement, an open refund not
 * parked), after `after` by id (keyset pagination; partial indexes keep this cheap).
 */
/* eslint-disable @typescript-eslint/no-misused-promises -- knex ignores a where callback's return; the builder is thenable, not a query in flight */
export async function owingWorkflows(
  db: Db,
  after: string,
  limit: number,
): Promise<Array<{ id: string; merchant_id: string }>> {
  return (await db('charges')
    .where('id', '>', after)
    .andWhere((q) =>
      q
        .where((p) => p.where('status', 'PENDING').whereNotNull('qr_code'))
        .orWhere((p) => p.where('status', 'PAID').whereNull('settled_at'))
        .orWhereExists(
          db('charge_refunds')
            .whereRaw('charge_refunds.charge_id = charges.id')
            .where('status', 'REQUESTED')
            .whereNotExists(parkedRefundRows(db)),
        ),
    )
    .orderBy('id')
    .limit(limit)
    .select('id', 'merchant_id')) as Array<{ id: string; merchant_id: string }>;
}

/* eslint-enable @typescript-eslint/no-misused-promises */
