/**
 * The ledger: the one implementation of money movement (docs/architecture.md "Money and the ledger").
 *
 * Every movement is one transaction of postings that sum to zero, identified by a unique
 * reference so that posting it again (a retried activity, a duplicate callback) is a no-op.
 * Balances are materialised on `ledger_accounts` and changed only here, by guarded UPDATEs:
 * a debit that would take a non-negative account below zero changes nothing and raises
 * InsufficientFundsError. The database backs each rule (unique reference, CHECK balance ≥ 0,
 * a deferred zero-sum trigger), so a bug here fails loudly instead of losing money.
 *
 * Accounts are per merchant, including the platform-side counterparts (fee_revenue, acquirer,
 * adjustments), so concurrent payments of different merchants never contend for one row.
 */
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import { preparedStatement, queryPrepared } from '../../db/prepared';
import { newId } from '../../lib/ids';
import { invalid } from '../../lib/errors';
import type { LedgerAccountKind } from '../../models/ledger-account';
import { splitAvailableFirst } from '../../domain/money';

export type { LedgerAccountKind };

/** Kinds that may go negative: mirrors of money outside the merchant's balance. */
const SIGNED_KINDS: ReadonlySet<LedgerAccountKind> = new Set(['acquirer', 'adjustments']);

export interface Posting {
  kind: LedgerAccountKind;
  /** Signed cents: + credit, − debit. */
  amount: number;
}

export interface PostInput {
  reference: string;
  kind: string;
  merchantId: string;
  description?: string;
  metadata?: Record<string, unknown>;
  postings: Posting[];
}

export interface PostResult {
  transactionId: string;
  /** The stored transaction's kind: on a replay, the kind posted first under this reference. */
  kind: string;
  /** false when the reference had already been posted (idempotent replay). */
  created: boolean;
}

export interface Balance {
  available: number;
  pending: number;
  blocked: number;
  total: number;
}

export class InsufficientFundsError extends Error {
  constructor(
    readonly merchantId: string,
    readonly account: LedgerAccountKind,
    readonly requested: number,
  ) {
    super(`Insufficient ${account} balance`);
    this.name = 'InsufficientFundsError';
  }
}

/**
 * A posting set that cannot be right: a bug, never retried. Its name is the non-retryable error
 * type that workflows list for activities.
 */
export class LedgerInvariantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvariantViolation';
  }
}

/**
 * A transaction of its own, or a savepoint inside the caller's: a refused debit then undoes only
 * this movement (no orphan transaction row burning the reference), and the caller's transaction
 * stays usable if it chooses to catch the error.
 */
function inTransaction<T>(db: Db, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(fn);
}

function validate(input: PostInput): void {
  if (!input.reference) throw new LedgerInvariantError('ledger reference is required');
  if (!input.merchantId) throw new LedgerInvariantError('ledger merchantId is required');
  if (input.postings.length < 2) throw new LedgerInvariantError('a ledger transaction needs at least two postings');
  let sum = 0;
  for (const p of input.postings) {
    if (!Number.isSafeInteger(p.amount) || p.amount === 0) {
      throw new LedgerInvariantError(`posting amounts must be non-zero integers of cents (${p.kind}: ${p.amount})`);
    }
    sum += p.amount;
  }
  if (sum !== 0) throw new LedgerInvariantError(`postings of ${input.reference} sum to ${sum}, not zero`);
}

/**
 * Posts one balanced transaction, once per reference. Runs inside `db` when it is a transaction
 * (so callers can post together with their own writes; a savepoint isolates a refused debit),
 * else in a transaction of its own. A debit below zero of any non-negative account throws
 * InsufficientFundsError and changes nothing.
 */
export async function post(db: Db, input: PostInput): Promise<PostResult> {
  validate(input);
  return inTransaction(db, async (trx) => {
    const id = newId('ltx');
    // The unique reference is the idempotency gate. A concurrent duplicate waits here for the
    // first to commit and then finds the conflict; read-then-write would let both through.
    const inserted = await trx('ledger_transactions')
      .insert({
        id,
        reference: input.reference,
        kind: input.kind,
        merchant_id: input.merchantId,
        description: input.description ?? null,
        metadata: input.metadata ? JSON.stringify(input.metadata) : null,
      })
      .onConflict('reference')
      .ignore()
      .returning('id');
    if (inserted.length === 0) {
      const existing = (await trx('ledger_transactions').where({ reference: input.reference }).first('id', 'kind')) as {
        id: string;
        kind: string;
      };
      return { transactionId: existing.id, kind: existing.kind, created: false };
    }

    // Lock accounts in one global order (kind name, as PostgreSQL's `order by kind` sorts these
    // ASCII names) so two movements of one merchant never deadlock.
    const ordered = [...input.postings].sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
    const rows: Array<{ transaction_id: string; account_id: string; amount: number }> = [];
    for (const p of ordered) {
      const accountId = await ensureAccount(trx, input.merchantId, p.kind);
      const q = trx('ledger_accounts').where({ id: accountId });
      if (p.amount < 0 && !SIGNED_KINDS.has(p.kind)) q.andWhere('balance', '>=', -p.amount);
      const updated = await q.update({ balance: trx.raw('balance + ?', [p.amount]), updated_at: trx.fn.now() });
      if (updated === 0) throw new InsufficientFundsError(input.merchantId, p.kind, -p.amount);
      rows.push({ transaction_id: id, account_id: accountId, amount: p.amount });
    }
    await trx('ledger_postings').insert(rows);
    return { transactionId: id, kind: input.kind, created: true };
  });
}

async function ensureAccount(trx: Knex.Transaction, merchantId: string, kind: LedgerAccountKind): Promise<string> {
  const found = (await trx('ledger_accounts').where({ merchant_id: merchantId, kind }).first('id')) as
    { id: string } | undefined;
  if (found) return found.id;
  await trx('ledger_accounts')
    .insert({ id: newId('acc'), merchant_id: merchantId, kind, balance: 0 })
    .onConflict(['merchant_id', 'kind'])
    .ignore();
  const row = (await trx('ledger_accounts').where({ merchant_id: merchantId, kind }).first('id')) as { id: string };
  return row.id;
}

type BalanceRow = { kind: LedgerAccountKind | null; balance: number | null };

function balanceOf(rows: BalanceRow[]): Balance {
  let available = 0;
  let pending = 0;
  let blocked = 0;
  for (const r of rows) {
    if (r.kind === 'available') available = r.balance ?? 0;
    else if (r.kind === 'pending') pending = r.balance ?? 0;
    else if (r.kind === 'blocked') blocked = r.balance ?? 0;
  }
  return { available, pending, blocked, total: available + pending + blocked };
}

export async function getBalance(db: Db, merchantId: string): Promise<Balance> {
  const rows = (await db('ledger_accounts')
    .where({ merchant_id: merchantId })
    .whereIn('kind', ['available', 'pending', 'blocked'])
    .select('kind', 'balance')) as BalanceRow[];
  return balanceOf(rows);
}

// One fixed, prepared statement for GET /v1/merchants/me/balance
// (docs/performance.md "Where a read's time goes"): the merchants' existence and their three balances together, for every merchant whose
// balance was asked for in one turn of the event loop (`merchantBalances`). No row: no such
// merchant; a row with a null kind: a merchant without ledger accounts yet (all zero).
const MERCHANT_BALANCES = preparedStatement(
  'merchant_balances',
  `select m.id as "merchantId", a.kind, a.balance
  from merchants m
  left join ledger_accounts a on a.merchant_id = m.id and a.kind in ('available', 'pending', 'blocked')
  where m.id = any(?::text[])`,
);

/**
 * The balances of `merchantIds` in one round trip, by merchant; a merchant that does not exist has
 * no entry. Read from the ledger accounts at the statement's snapshot, never from a cache.
 */
export async function merchantBalances(db: Db, merchantIds: readonly string[]): Promise<Map<string, Balance>> {
  const rows = await queryPrepared<BalanceRow & { merchantId: string }>(db, MERCHANT_BALANCES, [merchantIds]);
  const byMerchant = new Map<string, BalanceRow[]>();
  for (const r of rows) {
    const list = byMerchant.get(r.merchantId);
    if (list) list.push(r);
    else byMerchant.set(r.merchantId, [r]);
  }
  return new Map([...byMerchant].map(([id, rs]) => [id, balanceOf(rs)]));
}

/** Every account of a merchant, platform-side ones included (operators, reconciliation, tests). */
export async function getAccounts(db: Db, merchantId: string): Promise<Partial<Record<LedgerAccountKind, number>>> {
  const rows = (await db('ledger_accounts').where({ merchant_id: merchantId }).select('kind', 'balance')) as Array<{
    kind: LedgerAccountKind;
    balance: number;
  }>;
  return Object.fromEntries(rows.map((r) => [r.kind, r.balance]));
}

/** The shape of most movements: `amount` from one of the merchant's accounts to another. */
export function move(
  db: Db,
  a: {
    reference: string;
    kind: string;
    merchantId: string;
    amount: number;
    from: LedgerAccountKind;
    to: LedgerAccountKind;
    metadata?: Record<string, unknown>;
  },
): Promise<PostResult> {
  return post(db, {
    reference: a.reference,
    kind: a.kind,
    merchantId: a.merchantId,
    metadata: a.metadata,
    postings: [
      { kind: a.from, amount: -a.amount },
      { kind: a.to, amount: a.amount },
    ],
  });
}

// ---- The movements of the domain, each a `post` with a fixed reference scheme. ----

/** Payment received: the acquirer owes us `amount`; the merchant's net waits in pending. */
export function creditChargePayment(
  db: Db,
  a: { chargeId: string; merchantId: string; amount: number; fee: number },
): Promise<PostResult> {
  const net = a.amount - a.fee;
  const postings: Posting[] = [{ kind: 'acquirer', amount: -a.amount }];
  if (net > 0) postings.push({ kind: 'pending', amount: net });
  if (a.fee > 0) postings.push({ kind: 'fee_revenue', amount: a.fee });
  return post(db, {
    reference: `charge:${a.chargeId}:paid`,
    kind: 'charge_paid',
    merchantId: a.merchantId,
    metadata: { chargeId: a.chargeId, amount: a.amount, fee: a.fee },
    postings,
  });
}

/** Settlement: the charge's net moves pending → available. */
export async function settleChargePayment(
  db: Db,
  a: { chargeId: string; merchantId: string; net: number },
): Promise<PostResult | null> {
  if (a.net <= 0) return null;
  return move(db, {
    reference: `charge:${a.chargeId}:settled`,
    kind: 'charge_settled',
    merchantId: a.merchantId,
    amount: a.net,
    from: 'pending',
    to: 'available',
    metadata: { chargeId: a.chargeId },
  });
}

/** A payment the charge could not take: held in transit until it is returned to the payer. */
export function holdUnpayablePayment(
  db: Db,
  a: { refundId: string; merchantId: string; amount: number },
): Promise<PostResult> {
  return move(db, {
    reference: `refund:${a.refundId}:hold`,
    kind: 'unpayable_payment_hold',
    merchantId: a.merchantId,
    amount: a.amount,
    from: 'acquirer',
    to: 'in_transit',
  });
}

/** Refund requested by the merchant: taken from available first, then pending, into transit. */
export async function debitRefund(
  trx: Knex.Transaction,
  a: { refundId: string; merchantId: string; amount: number },
): Promise<PostResult> {
  // Lock both rows so the split we compute is the split we post.
  const rows = (await trx('ledger_accounts')
    .where({ merchant_id: a.merchantId })
    .whereIn('kind', ['available', 'pending'])
    .orderBy('kind') // the lock order post() uses, so refunds and withdrawals never deadlock
    .forUpdate()
    .select('kind', 'balance')) as Array<{ kind: LedgerAccountKind; balance: number }>;
  const of = (k: LedgerAccountKind): number => rows.find((r) => r.kind === k)?.balance ?? 0;
  const split = splitAvailableFirst(a.amount, of('available'), of('pending'));
  if (!split) throw new InsufficientFundsError(a.merchantId, 'available', a.amount);
  const postings: Posting[] = [{ kind: 'in_transit', amount: a.amount }];
  if (split.fromAvailable > 0) postings.push({ kind: 'available', amount: -split.fromAvailable });
  if (split.fromPending > 0) postings.push({ kind: 'pending', amount: -split.fromPending });
  return post(trx, {
    reference: `refund:${a.refundId}:debit`,
    kind: 'refund_debit',
    merchantId: a.merchantId,
    metadata: split,
    postings,
  });
}

/**
 * Money in transit (a refund or a withdrawal) is resolved: `left` — it reached the other bank, so
 * it is the acquirer's again; `returned` — it did not leave (rejected transfer, failed refund), so
 * it goes back to available.
 */
export function resolveInTransit(
  db: Db,
  a: { reference: string; kind: string; merchantId: string; amount: number; outcome: 'left' | 'returned' },
): Promise<PostResult> {
  return move(db, {
    reference: a.reference,
    kind: a.kind,
    merchantId: a.merchantId,
    amount: a.amount,
    from: 'in_transit',
    to: a.outcome === 'left' ? 'acquirer' : 'available',
  });
}

/** Withdrawal requested: available → in transit, at once (docs/architecture.md "Withdrawals: the saga"). */
export function debitWithdrawal(
  db: Db,
  a: { withdrawalId: string; merchantId: string; amount: number },
): Promise<PostResult> {
  return move(db, {
    reference: `withdrawal:${a.withdrawalId}:debit`,
    kind: 'withdrawal_debit',
    merchantId: a.merchantId,
    amount: a.amount,
    from: 'available',
    to: 'in_transit',
  });
}

/**
 * The transfer's outcome: `completed` — the money left (in transit → acquirer); `failed` — it did
 * not (in transit → available). Both outcomes share one reference, so whichever is posted first
 * wins and a late contradicting callback is a replay (`created: false`, `kind` says which won).
 */
export function resolveWithdrawal(
  db: Db,
  a: { withdrawalId: string; merchantId: string; amount: number; outcome: 'completed' | 'failed' },
): Promise<PostResult> {
  return resolveInTransit(db, {
    reference: `withdrawal:${a.withdrawalId}:resolved`,
    kind: a.outcome === 'completed' ? 'withdrawal_completed' : 'withdrawal_failed',
    merchantId: a.merchantId,
    amount: a.amount,
    outcome: a.outcome === 'completed' ? 'left' : 'returned',
  });
}

/** A completed transfer the destination bank sent back: the money returns to available. */
export function creditReturnedTransfer(
  db: Db,
  a: { withdrawalId: string; merchantId: string; amount: number },
): Promise<PostResult> {
  return move(db, {
    reference: `withdrawal:${a.withdrawalId}:returned`,
    kind: 'withdrawal_returned',
    merchantId: a.merchantId,
    amount: a.amount,
    from: 'acquirer',
    to: 'available',
  });
}

/** MED infraction: funds move available → blocked (or back, when the infraction is rejected). */
export function moveBlocked(
  db: Db,
  a: { reference: string; merchantId: string; amount: number; direction: 'block' | 'unblock' },
): Promise<PostResult> {
  const block = a.direction === 'block';
  return move(db, {
    reference: a.reference,
    kind: `infraction_${a.direction}`,
    merchantId: a.merchantId,
    amount: a.amount,
    from: block ? 'available' : 'blocked',
    to: block ? 'blocked' : 'available',
  });
}

/**
 * MED refund (docs/operations.md "The money of an infraction"): the blocked funds and, where they fall short,
 * part of the platform's fee on the payment go to the payer. Like a merchant refund they wait in
 * transit until the acquirer confirms the devolução (then `resolveInTransit` with the refund's
 * reference scheme) or refuses it (`returnMedRefund`).
 */
export function debitMedRefund(
  db: Db,
  a: { refundId: string; merchantId: string; fromBlocked: number; fromFee: number },
): Promise<PostResult> {
  const postings: Posting[] = [{ kind: 'in_transit', amount: a.fromBlocked + a.fromFee }];
  if (a.fromBlocked > 0) postings.push({ kind: 'blocked', amount: -a.fromBlocked });
  if (a.fromFee > 0) postings.push({ kind: 'fee_revenue', amount: -a.fromFee });
  return post(db, {
    reference: `refund:${a.refundId}:debit`,
    kind: 'infraction_refund_debit',
    merchantId: a.merchantId,
    metadata: { fromBlocked: a.fromBlocked, fromFee: a.fromFee },
    postings,
  });
}

/**
 * A MED devolução the acquirer refused or did not complete: its money leaves transit the way it
 * came — the merchant's part back to `blocked` (still held for the payer), the fee's part back to
 * the platform. Shares the refund's resolution reference, so it and a confirmation never both post.
 */
export function returnMedRefund(
  db: Db,
  a: { refundId: string; merchantId: string; toBlocked: number; toFee: number },
): Promise<PostResult> {
  const postings: Posting[] = [{ kind: 'in_transit', amount: -(a.toBlocked + a.toFee) }];
  if (a.toBlocked > 0) postings.push({ kind: 'blocked', amount: a.toBlocked });
  if (a.toFee > 0) postings.push({ kind: 'fee_revenue', amount: a.toFee });
  return post(db, {
    reference: `refund:${a.refundId}:resolved`,
    kind: 'infraction_refund_failed',
    merchantId: a.merchantId,
    metadata: { toBlocked: a.toBlocked, toFee: a.toFee },
    postings,
  });
}

/** One of the merchant's balances, its row locked FOR UPDATE (inside a transaction); 0 without one. */
export async function lockedBalance(
  trx: Knex.Transaction,
  merchantId: string,
  kind: LedgerAccountKind,
): Promise<number> {
  const row = (await trx('ledger_accounts').where({ merchant_id: merchantId, kind }).forUpdate().first('balance')) as
    { balance: number } | undefined;
  return row?.balance ?? 0;
}

/**
 * Operator adjustment of `available` (credit > 0, debit < 0; never below zero). The platform's
 * `adjustments` account takes the other side, so adjustments stay visible and sum to zero.
 */
export async function postAdjustment(
  trx: Knex.Transaction,
  a: { merchantId: string; amount: number; reason: string; reference: string },
): Promise<PostResult> {
  try {
    return await post(trx, {
      reference: a.reference,
      kind: 'adjustment',
      merchantId: a.merchantId,
      description: a.reason,
      postings: [
        { kind: 'available', amount: a.amount },
        { kind: 'adjustments', amount: -a.amount },
      ],
    });
  } catch (err) {
    if (err instanceof InsufficientFundsError)
      throw invalid('Insufficient available balance for this adjustment', 'insufficient_balance');
    throw err;
  }
}
