/**
 * Merchants, their users and PIX keys: the queries of the operator's use cases
 * (src/services/accounts/merchants.ts), the withdrawal prerequisites and the PIX key registration.
 */
import type { Db } from '../db/types';
import type { KycStatus, MerchantStatus, PixKeyStatus } from '../contracts/statuses';
import type { PixKeyType } from '../pix/pix-key';
import { preparedStatement, queryPrepared } from '../db/prepared';
import { Merchant } from '../models/merchant';
import { PixKey } from '../models/pix-key';
import { pageIsRead } from '../contracts/validation';
import { User } from '../models/user';
import type { Role } from '../contracts/statuses';
import { bindContext } from '../lib/bind-context';

export { Merchant, PixKey, User };

/** A user and its merchant's status, as stored (authentication reads this per token). */
export interface UserAccessRow {
  id: string;
  role: Role;
  merchant_id: string | null;
  status: 'ACTIVE' | 'DISABLED';
  token_version: number;
  merchant_status: 'ACTIVE' | 'SUSPENDED' | null;
}

/**
 * What GET /v1/merchants/me shows, as one plain row: the merchant and its current PIX key (the
 * newest ACTIVE one, else the newest of any status; null columns when it has none).
 */
export interface MerchantProfileRow {
  id: string;
  name: string;
  status: MerchantStatus;
  kyc_status: KycStatus;
  acquirer_account_id: string | null;
  fee_bps: number;
  fee_fixed: number;
  settlement_delay_seconds: number;
  created_at: Date;
  pix_key_id: string | null;
  pix_key_type: PixKeyType | null;
  pix_key_key: string | null;
  pix_key_status: PixKeyStatus | null;
}

// A fixed, prepared statement (docs/performance.md "Where a read's time goes"): no query builder to
// compile, no plan per call and no model to hydrate on a path every integration polls. The lateral
// subquery reads the merchant's few keys through the (merchant_id, created_at) index.
const PROFILE = preparedStatement(
  'merchant_profile',
  `select m.id, m.name, m.status, m.kyc_status, m.acquirer_account_id, m.fee_bps, m.fee_fixed,
    m.settlement_delay_seconds, m.created_at,
    k.id as pix_key_id, k.type as pix_key_type, k.key as pix_key_key, k.status as pix_key_status
  from merchants m
  left join lateral (
    select id, type, key, status from pix_keys
    where merchant_id = m.id
    order by (status = 'ACTIVE') desc, created_at desc, id desc
    limit 1
  ) k on true
  where m.id = ?`,
);

export const merchantsStore = (db: Db) =>
  bindContext(db, {
    profileOf,
    findById,
    findByDocument,
    insert,
    patch,
    page,
    statusOf,
    findUserAccess,
    findUserByEmail,
    lockUser,
    patchUser,
    usersOf,
    bumpTokenVersions,
    insertUser,
    pixKeysOf,
    findPixKeyById,
    lockPixKeyFromAcquirer,
    movePixKeyStatus,
    setAcquirerKeyId,
    unregisteredPixKeys,
    insertAdminUnlessExists,
    findPixKey,
    lockPixKey,
    insertPixKey,
    patchPixKey,
  });

/** The merchant's profile row with its current PIX key, in one statement; undefined when it does not exist. */
export async function profileOf(db: Db, id: string): Promise<MerchantProfileRow | undefined> {
  return (await queryPrepared<MerchantProfileRow>(db, PROFILE, [id]))[0];
}

export async function findById(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<Merchant | undefined> {
  const q = Merchant.query(db).findById(id);
  if (opts.lock) q.forUpdate();
  return q;
}

export async function findByDocument(db: Db, document: string): Promise<Merchant | undefined> {
  return Merchant.query(db).findOne({ document });
}

export async function insert(
  db: Db,
  m: Pick<
    Merchant,
    | 'id'
    | 'name'
    | 'document'
    | 'email'
    | 'status'
    | 'kycStatus'
    | 'acquirerAccountId'
    | 'feeBps'
    | 'feeFixed'
    | 'settlementDelaySeconds'
  >,
): Promise<Merchant> {
  return Merchant.query(db).insertAndFetch(m);
}

export async function patch(db: Db, m: Merchant, patch: Partial<Merchant>): Promise<Merchant> {
  return m.$query(db).patchAndFetch(patch);
}

/** A page, newest first, and the total; no rows are read for a page past the end or too deep (`pageIsRead`). */
export async function page(
  db: Db,
  opts: { limit: number; offset: number },
): Promise<{ total: number; rows: Merchant[] }> {
  const total = await Merchant.query(db).resultSize();
  if (!pageIsRead(opts.offset, opts.limit, total)) return { total, rows: [] };
  const rows = await Merchant.query(db)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(opts.limit)
    .offset(opts.offset);
  return { total, rows };
}

/** A merchant's status alone (null when it does not exist). */
export async function statusOf(db: Db, id: string): Promise<string | null> {
  return ((await db('merchants').where({ id }).first('status')) as { status: string } | undefined)?.status ?? null;
}

/** What a token is checked against: the user joined to its merchant's status, as a plain row. */
export async function findUserAccess(db: Db, userId: string): Promise<UserAccessRow | undefined> {
  return (await db('users as u')
    .leftJoin('merchants as m', 'm.id', 'u.merchant_id')
    .where('u.id', userId)
    .first('u.id', 'u.role', 'u.merchant_id', 'u.status', 'u.token_version', 'm.status as merchant_status')) as
    UserAccessRow | undefined;
}

export async function findUserByEmail(db: Db, email: string): Promise<User | undefined> {
  return User.query(db).findOne({ email });
}

export async function lockUser(db: Db, id: string): Promise<User | undefined> {
  return User.query(db).findById(id).forUpdate();
}

export async function patchUser(db: Db, u: User, patch: Partial<User>): Promise<User> {
  return u.$query(db).patchAndFetch({ ...patch, updatedAt: new Date() });
}

/** A merchant's users, oldest first. */
export async function usersOf(db: Db, merchantId: string): Promise<User[]> {
  return User.query(db)
    .where({ merchant_id: merchantId })
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ]);
}

/** Every JWT of the merchant's users becomes stale (token version + 1). */
export async function bumpTokenVersions(db: Db, merchantId: string): Promise<void> {
  await db('users')
    .where({ merchant_id: merchantId })
    .update({ token_version: db.raw('token_version + 1'), updated_at: db.fn.now() });
}

export async function insertUser(
  db: Db,
  u: Pick<User, 'id' | 'email' | 'passwordHash' | 'role' | 'merchantId'>,
): Promise<User> {
  return User.query(db).insertAndFetch(u);
}

/** The PIX keys of some merchants, newest first. */
export async function pixKeysOf(db: Db, merchantIds: string[]): Promise<PixKey[]> {
  if (merchantIds.length === 0) return [];
  return PixKey.query(db)
    .whereIn('merchant_id', merchantIds)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
}

/** A PIX key by id, optionally locked FOR UPDATE. */
export async function findPixKeyById(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<PixKey | undefined> {
  const q = PixKey.query(db);
  if (opts.lock) q.forUpdate();
  return q.findById(id);
}

/** The key an acquirer callback names: by the acquirer's key id, else by (type, key); locked. */
export async function lockPixKeyFromAcquirer(
  db: Db,
  acquirerKeyId: string,
  type: string,
  key: string,
): Promise<PixKey | undefined> {
  return (
    (await PixKey.query(db).forUpdate().findOne({ acquirer_key_id: acquirerKeyId })) ??
    (await PixKey.query(db).forUpdate().findOne({ type, key }))
  );
}

/** Moves a key to `to` only from one of `from`; false when another writer got there first. */
export async function movePixKeyStatus(
  db: Db,
  id: string,
  from: readonly string[],
  to: PixKey['status'],
): Promise<boolean> {
  const n = await PixKey.query(db)
    .patch({ status: to, updatedAt: new Date() })
    .where({ id })
    .whereIn('status', [...from]);
  return n > 0;
}

export async function setAcquirerKeyId(
  db: Db,
  id: string,
  acquirerKeyId: string,
  opts: { touch?: boolean } = {},
): Promise<void> {
  await PixKey.query(db)
    .patch(opts.touch ? { acquirerKeyId, updatedAt: new Date() } : { acquirerKeyId })
    .where({ id });
}

/** PENDING or ACTIVE keys the acquirer has not registered yet (at most 1000, by id). */
/** Up to `limit` keys after id `after` (keyset order) that should be at the acquirer and are not. */
export async function unregisteredPixKeys(
  db: Db,
  after: string,
  limit: number,
): Promise<Array<{ id: string; merchant_id: string }>> {
  return (await db('pix_keys')
    .whereIn('status', ['PENDING', 'ACTIVE'])
    .whereNull('acquirer_key_id')
    .andWhere('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .select('id', 'merchant_id')) as Array<{ id: string; merchant_id: string }>;
}

/** An ADMIN user unless the e-mail exists (two processes may start together); true if inserted. */
export async function insertAdminUnlessExists(
  db: Db,
  u: { id: string; email: string; passwordHash: string },
): Promise<boolean> {
  const inserted = await User.query(db)
    .insert({ ...u, role: 'ADMIN', merchantId: null })
    .onConflict('email')
    .ignore();
  return Boolean(inserted);
}

export async function findPixKey(db: Db, type: string, key: string): Promise<PixKey | undefined> {
  return PixKey.query(db).findOne({ type, key });
}

/** A merchant's key (another merchant's is undefined), locked FOR UPDATE. */
export async function lockPixKey(db: Db, merchantId: string, keyId: string): Promise<PixKey | undefined> {
  return PixKey.query(db).findOne({ id: keyId, merchant_id: merchantId }).forUpdate();
}

export async function insertPixKey(
  db: Db,
  k: Pick<PixKey, 'id' | 'merchantId' | 'type' | 'key' | 'status'>,
): Promise<PixKey> {
  return PixKey.query(db).insertAndFetch(k);
}

export async function patchPixKey(db: Db, k: PixKey, patch: Partial<PixKey>): Promise<PixKey> {
  return k.$query(db).patchAndFetch(patch);
}
