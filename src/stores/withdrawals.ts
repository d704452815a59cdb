/**
 * Every query on `withdrawals`: the API side (request, replay, list, get), the saga's steps, the
 * callback handler, the sandbox and the reconciler all read and write withdrawals through here.
 * `db` is the knex instance or the transaction the caller runs in.
 */
import type { Db } from '../db/types';
import type { PixKeyType } from '../pix/pix-key';
import { Withdrawal } from '../models/withdrawal';
import { MAX_LIST_DEPTH } from '../contracts/validation';
import { bindContext } from '../lib/bind-context';

export { Withdrawal };

/** The columns the API shows (plus the merchant), as stored. */
export interface WithdrawalRow {
  id: string;
  merchant_id: string;
  amount: number;
  description: string | null;
  pix_key: string;
  pix_key_type: PixKeyType;
  status: Withdrawal['status'];
  batch_id: string | null;
  created_at: Date;
}

const COLUMNS = [
  'id',
  'merchant_id',
  'amount',
  'description',
  'pix_key',
  'pix_key_type',
  'status',
  'batch_id',
  'created_at',
];

export interface NewWithdrawal {
  id: string;
  merchantId: string;
  amount: number;
  description: string | null;
  pixKeyType: string;
  pixKey: string;
  idempotencyKey: string | null;
  /** The request's fingerprint when it has an idempotency key (docs/api.md "Idempotency"). */
  requestHash: Buffer | null;
}

export const withdrawalsStore = (db: Db) =>
  bindContext(db, {
    find,
    findByIdempotencyKey,
    findForMerchant,
    insertManyUnlessKeyTaken,
    deleteUncommitted,
    page,
    setTransferOnce,
    patch,
    transferIdOf,
    forTransferCallback,
    processingAfter,
  });

/** The whole row, optionally locked FOR UPDATE (inside a transaction). */
export async function find(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<Withdrawal | undefined> {
  const q = Withdrawal.query(db);
  if (opts.lock) q.forUpdate();
  return q.findById(id);
}

/** The withdrawal the key made, with the fingerprint of the request that made it (null before fingerprints). */
export async function findByIdempotencyKey(
  db: Db,
  merchantId: string,
  key: string,
): Promise<(WithdrawalRow & { request_hash: Buffer | null }) | undefined> {
  return (await db('withdrawals')
    .where({ merchant_id: merchantId, idempotency_key: key })
    .first([...COLUMNS, 'request_hash'])) as (WithdrawalRow & { request_hash: Buffer | null }) | undefined;
}

/** Another merchant's withdrawal is undefined, like an unknown id. */
export async function findForMerchant(db: Db, merchantId: string, id: string): Promise<WithdrawalRow | undefined> {
  return (await db('withdrawals').where({ id, merchant_id: merchantId }).first(COLUMNS)) as WithdrawalRow | undefined;
}

/**
 * Inserts a merchant's withdrawals in one statement, each unless its idempotency key is taken; key
 * order, so two such statements never deadlock. A request missing from the result lost its key.
 */
export async function insertManyUnlessKeyTaken(db: Db, ws: readonly NewWithdrawal[]): Promise<WithdrawalRow[]> {
  const ordered = [...ws].sort((a, b) => (a.idempotencyKey ?? '').localeCompare(b.idempotencyKey ?? ''));
  return (await db('withdrawals')
    .insert(
      ordered.map((w) => ({
        id: w.id,
        merchant_id: w.merchantId,
        amount: w.amount,
        description: w.description,
        pix_key_type: w.pixKeyType,
        pix_key: w.pixKey,
        status: 'PROCESSING',
        idempotency_key: w.idempotencyKey,
        request_hash: w.requestHash,
      })),
    )
    .onConflict(['merchant_id', 'idempotency_key'])
    .ignore()
    .returning(COLUMNS)) as WithdrawalRow[];
}

/** Takes back rows this transaction inserted, when their debits were refused (no funds). */
export async function deleteUncommitted(db: Db, ids: readonly string[]): Promise<void> {
  await db('withdrawals').whereIn('id', ids).delete();
}

/**
 * One page, newest first, and the merchant's total in one statement (docs/api.md "Pagination
 * limits"): the total from `list_counts`, the ids from the index alone, nothing walked past the end.
 */
export async function page(
  db: Db,
  merchantId: string,
  opts: { limit: number; offset: number },
): Promise<{ rows: WithdrawalRow[]; total: number }> {
  const { rows } = (await db.raw(
    `select t.total, w.id, w.merchant_id, w.amount, w.description, w.pix_key, w.pix_key_type, w.status, w.batch_id, w.created_at
     from (select coalesce(sum(n), 0)::bigint as total from list_counts where list = 'withdrawals' and owner_id = :merchant) t
     left join lateral (
       select x.* from (select id from withdrawals where merchant_id = :merchant
                          order by created_at desc, id desc limit :take offset :skip) p
       cross join lateral (select * from withdrawals where id = p.id limit 1) x
       where :skip::bigint < t.total and least(:skip::bigint + :take, t.total) <= ${MAX_LIST_DEPTH}
       offset 0
     ) w on true
     order by w.created_at desc, w.id desc`,
    { merchant: merchantId, take: opts.limit, skip: opts.offset },
  )) as { rows: Array<WithdrawalRow & { total: string | number }> };
  const total = Number(rows[0]?.total ?? 0);
  return {
    rows: rows.filter((r) => (r.id as string | null) !== null).map(({ total: _total, ...r }) => r as WithdrawalRow),
    total,
  };
}

/** Keeps the acquirer's transfer id and batch, once (the first answer wins). */
export async function setTransferOnce(
  db: Db,
  id: string,
  t: { transferId: string; batchId: string | null },
): Promise<void> {
  await Withdrawal.query(db)
    .patch({ transferId: t.transferId, batchId: t.batchId, updatedAt: new Date() })
    .where({ id })
    .whereNull('transfer_id');
}

export async function patch(
  db: Db,
  id: string,
  fields: Partial<
    Pick<
      Withdrawal,
      'status' | 'transferId' | 'failureReason' | 'completedAt' | 'failedAt' | 'refundedAt' | 'updatedAt'
    >
  >,
): Promise<void> {
  await Withdrawal.query(db).patch(fields).where({ id });
}

export async function transferIdOf(db: Db, id: string): Promise<string | null> {
  const row = (await db('withdrawals').where({ id }).first('transfer_id')) as
    { transfer_id: string | null } | undefined;
  return row?.transfer_id ?? null;
}

/** What the transfer callback handler compares a callback with. */
export async function forTransferCallback(
  db: Db,
  id: string,
): Promise<
  | { id: string; merchant_id: string; status: Withdrawal['status']; transfer_id: string | null; amount: number }
  | undefined
> {
  return (await db('withdrawals').where({ id }).first('id', 'merchant_id', 'status', 'transfer_id', 'amount')) as
    | { id: string; merchant_id: string; status: Withdrawal['status']; transfer_id: string | null; amount: number }
    | undefined;
}

/** PROCESSING withdrawals after `after` in id order (keyset pages for the reconciler). */
export async function processingAfter(
  db: Db,
  after: string,
  limit: number,
): Promise<Array<{ id: string; merchant_id: string }>> {
  return (await db('withdrawals')
    .where('status', 'PROCESSING')
    .andWhere('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .select('id', 'merchant_id')) as Array<{ id: string; merchant_id: string }>;
}

export type WithdrawalsStore = ReturnType<typeof withdrawalsStore>;
