/**
 * The ledger: the one implementation of money movement (docs/architecture.md "Money and the ledger").
 *
 * Every movement is one transaction of postings that sum to zero, identified by a unique
 * reference so that posting it again (a retried activity, a duplicate callback) is a no-op.
 * Balances are materialised on `ledger_accounts` and changed only through here, by the ledger's
 * own database function (`ledger_post_batch`: the service's role cannot write the ledger's tables,
 * docs/production.md "Database roles"): a debit that would take a non-negative account (all but
 * `acquirer` and `adjustments`) below zero changes nothing and raises InsufficientFundsError. The database backs each rule (unique reference, CHECK balance ≥ 0,
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
 * (so callers can post together with their own writes), else in a transaction of its own. A debit
 * below zero of any non-negative account throws InsufficientFundsError and changes nothing.
 */
export async function post(db: Db, input: PostInput): Promise<PostResult> {
  const [posted] = await postAll(db, input.merchantId, [input]);
  if (!posted) throw new LedgerInvariantError('a batch of one posting answered nothing');
  return posted;
}

/**
 * Posts several movements of one merchant as one batch (`postBatch`: one statement per step
 * whatever their number), each seeing the ones before it; the first refusal throws, as `post`
 * does, so inside a transaction nothing of the batch stands.
 */
export async function postAll(db: Db, merchantId: string, inputs: readonly PostInput[]): Promise<PostResult[]> {
  const outcomes = await postBatch(db, merchantId, inputs);
  return outcomes.map((outcome) => {
    if ('refused' in outcome) throw outcome.refused;
    return outcome.posted;
  });
}

/** What one movement of a batch came to. */
export type BatchOutcome =
  | {
      posted: PostResult;
      /** The balances of the accounts the batch locked, right after this movement. */
      balancesAfter: ReadonlyMap<LedgerAccountKind, number>;
    }
  | { refused: InsufficientFundsError };

/** What `ledger_post_batch` answers for one movement. */
type BatchRow =
  | { status: 'posted' | 'replayed'; transactionId: string; kind: string; balances: Record<string, number> }
  | { status: 'refused'; account: LedgerAccountKind; requested: number };

/**
 * Posts one merchant's movements in arrival order, as if each were posted alone, in one call of
 * `ledger_post_batch` (docs/architecture.md "Money and the ledger"; the SQL and its steps are in migration
 * 20261201170000_least_privilege, run as the ledger's owner: docs/production.md "Database roles").
 * A movement that would overdraw is refused alone (InsufficientFundsError); a reference posted
 * before is a replay; one given twice in a batch is a caller's bug (LedgerInvariantError, nothing posted).
 */
export async function postBatch(db: Db, merchantId: string, inputs: readonly PostInput[]): Promise<BatchOutcome[]> {
  const seen = new Set<string>();
  for (const input of inputs) {
    validate(input);
    if (input.merchantId !== merchantId)
      throw new LedgerInvariantError(`${input.reference} is not a movement of merchant ${merchantId}`);
    if (seen.has(input.reference)) throw new LedgerInvariantError(`${input.reference} is twice in one batch`);
    seen.add(input.reference);
  }
  if (inputs.length === 0) return [];
  const movements = inputs.map((i) => ({
    id: newId('ltx'),
    reference: i.reference,
    kind: i.kind,
    description: i.description ?? null,
    metadata: i.metadata ?? null,
    postings: i.postings,
  }));
  // Ids for the accounts the function may have to create (used only for missing ones).
  const accountIds = Object.fromEntries(
    [...new Set(inputs.flatMap((i) => i.postings.map((p) => p.kind)))].map((k) => [k, newId('acc')]),
  );
  const result = (await db.raw('select ledger_post_batch(?, ?::jsonb, ?::jsonb) as outcomes', [
    merchantId,
    JSON.stringify(movements),
    JSON.stringify(accountIds),
  ])) as { rows: Array<{ outcomes: BatchRow[] }> };
  const rows = result.rows[0]?.outcomes ?? [];
  if (rows.length !== inputs.length) throw new LedgerInvariantError('the ledger answered another number of movements');
  return rows.map((r): BatchOutcome => {
    if (r.status === 'refused') return { refused: new InsufficientFundsError(merchantId, r.account, r.requested) };
    return {
      posted: { transactionId: r.transactionId, kind: r.kind, created: r.status === 'posted' },
      balancesAfter: new Map(Object.entries(r.balances).map(([k, v]) => [k as LedgerAccountKind, Number(v)])),
    };
  });
}

/**
 * The merchant's balances of `kinds`, their rows locked FOR UPDATE in kind order (the ledger's
 * lock order) until the caller's transaction ends; an account without a row is absent.
 */
async function lockBalances(
  trx: Knex.Transaction,
  merchantId: string,
  kinds: readonly LedgerAccountKind[],
): Promise<Map<LedgerAccountKind, number>> {
  const result = (await trx.raw('select kind, balance from ledger_lock_balances(?, ?::text[])', [
    merchantId,
    [...kinds],
  ])) as { rows: Array<{ kind: LedgerAccountKind; balance: number | string }> };
  return new Map(result.rows.map((r) => [r.kind, Number(r.balance)]));
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

interface Movement {
  reference: string;
  kind: string;
  merchantId: string;
  amount: number;
  from: LedgerAccountKind;
  to: LedgerAccountKind;
  metadata?: Record<string, unknown>;
}

/** The shape of most movements: `amount` from one of the merchant's accounts to another. */
function movement(a: Movement): PostInput {
  return {
    reference: a.reference,
    kind: a.kind,
    merchantId: a.merchantId,
    metadata: a.metadata,
    postings: [
      { kind: a.from, amount: -a.amount },
      { kind: a.to, amount: a.amount },
    ],
  };
}

/** Posts a `movement`. */
export function move(db: Db, a: Movement): Promise<PostResult> {
  return post(db, movement(a));
}

// ---- The movements of the domain, each a `post` with a fixed reference scheme. ----

/** Payment received: the acquirer owes us `amount`; the merchant's net waits in pending. */
export function chargePaymentCredit(a: {
  chargeId: string;
  merchantId: string;
  amount: number;
  fee: number;
}): PostInput {
  const net = a.amount - a.fee;
  const postings: Posting[] = [{ kind: 'acquirer', amount: -a.amount }];
  if (net > 0) postings.push({ kind: 'pending', amount: net });
  if (a.fee > 0) postings.push({ kind: 'fee_revenue', amount: a.fee });
  return {
    reference: `charge:${a.chargeId}:paid`,
    kind: 'charge_paid',
    merchantId: a.merchantId,
    metadata: { chargeId: a.chargeId, amount: a.amount, fee: a.fee },
    postings,
  };
}

/** Posts a `chargePaymentCredit`. */
export function creditChargePayment(
  db: Db,
  a: { chargeId: string; merchantId: string; amount: number; fee: number },
): Promise<PostResult> {
  return post(db, chargePaymentCredit(a));
}

/** Settlement: the charge's net moves pending → available; nothing to move when the net is 0. */
export function chargeSettlement(a: { chargeId: string; merchantId: string; net: number }): PostInput | null {
  if (a.net <= 0) return null;
  return movement({
    reference: `charge:${a.chargeId}:settled`,
    kind: 'charge_settled',
    merchantId: a.merchantId,
    amount: a.net,
    from: 'pending',
    to: 'available',
    metadata: { chargeId: a.chargeId },
  });
}

/** Posts a `chargeSettlement`. */
export async function settleChargePayment(
  db: Db,
  a: { chargeId: string; merchantId: string; net: number },
): Promise<PostResult | null> {
  const settlement = chargeSettlement(a);
  return settlement ? post(db, settlement) : null;
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
  // Lock both rows so the split we compute is the split we post (the lock order post() uses, so
  // refunds and withdrawals never deadlock).
  const locked = await lockBalances(trx, a.merchantId, ['available', 'pending']);
  const of = (k: LedgerAccountKind): number => locked.get(k) ?? 0;
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
export function withdrawalDebit(a: { withdrawalId: string; merchantId: string; amount: number }): PostInput {
  return movement({
    reference: `withdrawal:${a.withdrawalId}:debit`,
    kind: 'withdrawal_debit',
    merchantId: a.merchantId,
    amount: a.amount,
    from: 'available',
    to: 'in_transit',
  });
}

/** The withdrawal's debit alone (the API debits them in batches: `withdrawalDebit`, `postBatch`). */
export function debitWithdrawal(
  db: Db,
  a: { withdrawalId: string; merchantId: string; amount: number },
): Promise<PostResult> {
  return post(db, withdrawalDebit(a));
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
  return (await lockBalances(trx, merchantId, [kind])).get(kind) ?? 0;
}

/**
 * Several of the merchant's balances, their rows locked FOR UPDATE in the ledger's one lock order
 * (kind name, as every posting locks them): a step that reads a balance before posting locks
 * everything the posting will touch at once, so it never takes a later row before an earlier one
 * (docs/architecture.md "Money and the ledger"). An account without a row reads 0.
 */
export async function lockedBalances(
  trx: Knex.Transaction,
  merchantId: string,
  kinds: readonly LedgerAccountKind[],
): Promise<Map<LedgerAccountKind, number>> {
  const locked = await lockBalances(trx, merchantId, kinds);
  return new Map(kinds.map((k) => [k, locked.get(k) ?? 0]));
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
