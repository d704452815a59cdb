/**
 * The ledger invariant as code (docs/architecture.md "Money and the ledger", "Checking the books"): one
 * function that an operator (`npm run ops -- ledger check`) and every test suite that moves money
 * call to prove that no money was lost, made up or moved twice.
 *
 * It reads one consistent snapshot (REPEATABLE READ, read only) and reports every violation it
 * finds instead of stopping at the first, so an operator sees the whole damage at once:
 *
 * - every ledger transaction has at least two postings and sums to zero;
 * - every materialised balance equals the sum of its account's postings;
 * - no balance that must stay non-negative is negative;
 * - each merchant's books reconcile with its business records:
 *   - a charge has a payment transaction exactly when it was paid, for exactly its amount;
 *   - `fee_revenue` holds exactly the fees of the merchant's paid charges, less what MED devoluções
 *     took from the fee (docs/operations.md "The money of an infraction");
 *   - every withdrawal was debited once for its amount, and its resolution matches its status;
 *   - every cent in `in_transit` belongs to a withdrawal or a refund whose status says it is still
 *     travelling, and nothing else is in transit;
 *   - `blocked` holds exactly what the merchant's MED infractions say is blocked (`blocked_amount`).
 *
 * Since migration 20261126100000 PostgreSQL itself refuses, at commit, a balance that disagrees
 * with its postings, a posting to another merchant's account and a transaction without postings;
 * the checks of those rules stay here for books written where the triggers did not run (a restore
 * or replication apply with session_replication_role = replica, an older schema).
 */
import type { Knex } from 'knex';

export interface LedgerViolation {
  check:
    | 'unbalanced_transaction'
    | 'balance_mismatch'
    | 'negative_balance'
    | 'charge_payment_mismatch'
    | 'fee_revenue_mismatch'
    | 'withdrawal_mismatch'
    | 'in_transit_mismatch'
    | 'blocked_mismatch';
  detail: Record<string, unknown>;
}

export interface LedgerCheckReport {
  ok: boolean;
  checkedAt: string;
  /** Merchants the check was limited to; null for all. */
  merchantIds: string[] | null;
  /** Merchants left out of the check. */
  excludedMerchantIds: string[];
  counts: {
    transactions: number;
    postings: number;
    accounts: number;
    charges: number;
    withdrawals: number;
    refunds: number;
  };
  violations: LedgerViolation[];
}

/** Kinds that mirror money outside the merchant's balance and may go negative. */
const SIGNED_KINDS = ['acquirer', 'adjustments'];

/** What a withdrawal's resolution transaction must be, by status (see src/services/ledger/ledger.ts). */
const WITHDRAWAL_RESOLUTION: Record<string, { resolved: string | null; returned: boolean }> = {
  PROCESSING: { resolved: null, returned: false },
  COMPLETED: { resolved: 'withdrawal_completed', returned: false },
  FAILED: { resolved: 'withdrawal_failed', returned: false },
  REFUNDED: { resolved: 'withdrawal_completed', returned: true },
};

const num = (v: unknown): number => Number(v ?? 0);

/** One run of the check: its snapshot, its scope and the violations found so far. */
interface CheckRun {
  trx: Knex.Transaction;
  /** Limits a query to the chosen merchants, less the excluded ones. */
  scope<Q extends Knex.QueryBuilder>(q: Q, column: string): Q;
  violations: LedgerViolation[];
}

interface AccountRow {
  id: string;
  merchant_id: string;
  kind: string;
  balance: string | number;
  posted: string;
}

export async function checkLedgerInvariant(
  knex: Knex,
  opts: {
    merchantIds?: string[];
    excludeMerchantIds?: string[];
    /** Told as each check begins (the ops CLI prints it: a whole ledger takes a while). */
    progress?: (step: string) => void;
  } = {},
): Promise<LedgerCheckReport> {
  const step = opts.progress ?? (() => undefined);
  const merchantIds = opts.merchantIds && opts.merchantIds.length > 0 ? opts.merchantIds : null;
  const excluded = opts.excludeMerchantIds ?? [];
  const trx = await knex.transaction({ isolationLevel: 'repeatable read', readOnly: true });
  const run: CheckRun = {
    trx,
    violations: [],
    scope: (q, column) => {
      if (merchantIds) q.whereIn(column, merchantIds);
      if (excluded.length > 0) q.whereNotIn(column, excluded);
      return q;
    },
  };
  try {
    step('ledger check: balanced transactions');
    await checkTransactions(run);
    step('ledger check: account balances');
    const accounts = await checkAccounts(run);
    const accountOf = new Map(accounts.map((a) => [`${a.merchant_id}:${a.kind}`, num(a.balance)]));
    step('ledger check: charges');
    const charges = await checkCharges(run, accounts, accountOf);
    step('ledger check: money in transit');
    const transit = await transitByEntity(run);
    step('ledger check: withdrawals');
    const withdrawals = await checkWithdrawals(run, transit);
    step('ledger check: refunds');
    const refunds = await checkRefunds(run, transit);
    step('ledger check: blocked funds');
    await checkBlocked(run, accounts, accountOf);
    transit.reportUnexplained();
    const counts = await countEntries(run);
    await trx.commit();
    return {
      ok: run.violations.length === 0,
      checkedAt: new Date().toISOString(),
      merchantIds,
      excludedMerchantIds: excluded,
      counts: { ...counts, accounts: accounts.length, charges, withdrawals, refunds },
      violations: run.violations,
    };
  } catch (err) {
    await trx.rollback().catch(() => undefined);
    throw err;
  }
}

/** Every transaction has at least two postings and sums to zero. */
async function checkTransactions({ trx, scope, violations }: CheckRun): Promise<void> {
  const unbalanced = (await scope(
    trx('ledger_transactions as t')
      .leftJoin('ledger_postings as p', 'p.transaction_id', 't.id')
      .groupBy('t.id', 't.reference')
      .havingRaw('coalesce(sum(p.amount), 0) <> 0 or count(p.id) < 2')
      .select('t.id', 't.reference', trx.raw('coalesce(sum(p.amount), 0) as sum'), trx.raw('count(p.id) as postings')),
    't.merchant_id',
  )) as Array<{ id: string; reference: string; sum: string; postings: string }>;
  for (const r of unbalanced) {
    violations.push({
      check: 'unbalanced_transaction',
      detail: { transactionId: r.id, reference: r.reference, sum: num(r.sum), postings: num(r.postings) },
    });
  }
}

/** Every balance equals its postings' sum; none that must stay non-negative is negative. */
async function checkAccounts({ trx, scope, violations }: CheckRun): Promise<AccountRow[]> {
  const accounts = (await scope(
    trx('ledger_accounts as a')
      .leftJoin('ledger_postings as p', 'p.account_id', 'a.id')
      .groupBy('a.id', 'a.merchant_id', 'a.kind', 'a.balance')
      .select('a.id', 'a.merchant_id', 'a.kind', 'a.balance', trx.raw('coalesce(sum(p.amount), 0) as posted')),
    'a.merchant_id',
  )) as AccountRow[];
  for (const a of accounts) {
    const balance = num(a.balance);
    if (balance !== num(a.posted)) {
      violations.push({
        check: 'balance_mismatch',
        detail: { accountId: a.id, merchantId: a.merchant_id, kind: a.kind, balance, postings: num(a.posted) },
      });
    }
    if (balance < 0 && !SIGNED_KINDS.includes(a.kind)) {
      violations.push({
        check: 'negative_balance',
        detail: { accountId: a.id, merchantId: a.merchant_id, kind: a.kind, balance },
      });
    }
  }
  return accounts;
}

interface ChargeCheckRow {
  id: string;
  merchant_id: string;
  amount: string | number;
  paid_at: Date | null;
  fee_amount: string | number | null;
  transaction_id: string | null;
  acquirer_amount: string;
}

/**
 * Charges: paid exactly when a `charge:<id>:paid` transaction took what was paid from the acquirer;
 * `fee_revenue` holds the fees of the paid ones. Returns how many charges it read.
 */
async function checkCharges(run: CheckRun, accounts: AccountRow[], accountOf: Map<string, number>): Promise<number> {
  const { trx, scope, violations } = run;
  const charges = (await scope(
    trx('charges as c')
      .leftJoin('ledger_transactions as t', 't.reference', trx.raw("'charge:' || c.id || ':paid'"))
      .leftJoin('ledger_postings as p', 'p.transaction_id', 't.id')
      .leftJoin('ledger_accounts as a', function joinAcquirer() {
        this.on('a.id', '=', 'p.account_id').andOnVal('a.kind', '=', 'acquirer');
      })
      .groupBy('c.id', 'c.merchant_id', 'c.amount', 'c.amount_paid', 'c.paid_at', 'c.fee_amount', 't.id')
      .select(
        'c.id',
        'c.merchant_id',
        // What the payment credited: a due-date charge's amount paid, else its amount.
        trx.raw('coalesce(c.amount_paid, c.amount) as amount'),
        'c.paid_at',
        'c.fee_amount',
        't.id as transaction_id',
        trx.raw('coalesce(sum(case when a.id is not null then p.amount end), 0) as acquirer_amount'),
      ),
    'c.merchant_id',
  )) as ChargeCheckRow[];
  const fees = new Map<string, number>();
  for (const c of charges) {
    const paid = c.paid_at !== null;
    if (paid !== (c.transaction_id !== null) || (paid && num(c.acquirer_amount) !== -num(c.amount))) {
      violations.push({
        check: 'charge_payment_mismatch',
        detail: {
          chargeId: c.id,
          merchantId: c.merchant_id,
          amount: num(c.amount),
          paid,
          credited: -num(c.acquirer_amount),
        },
      });
    }
    if (paid) fees.set(c.merchant_id, (fees.get(c.merchant_id) ?? 0) + num(c.fee_amount));
  }
  await checkFeeRevenue(run, fees, accounts, accountOf);
  return charges.length;
}

/** `fee_revenue` = the paid charges' fees less what MED devoluções took from the fee. */
async function checkFeeRevenue(
  { trx, scope, violations }: CheckRun,
  fees: Map<string, number>,
  accounts: AccountRow[],
  accountOf: Map<string, number>,
): Promise<void> {
  // A devolução in transit or confirmed keeps `fee_returned` on its infraction; a failed one gave it back.
  const feeBack = (await scope(
    trx('infractions')
      .where('fee_returned', '>', 0)
      .groupBy('merchant_id')
      .select('merchant_id', trx.raw('sum(fee_returned) as s')),
    'merchant_id',
  )) as Array<{ merchant_id: string; s: string }>;
  for (const f of feeBack) fees.set(f.merchant_id, (fees.get(f.merchant_id) ?? 0) - num(f.s));
  const merchantsWithFees = new Set([
    ...fees.keys(),
    ...accounts.filter((a) => a.kind === 'fee_revenue').map((a) => a.merchant_id),
  ]);
  for (const merchantId of merchantsWithFees) {
    const expected = fees.get(merchantId) ?? 0;
    const actual = accountOf.get(`${merchantId}:fee_revenue`) ?? 0;
    if (expected !== actual)
      violations.push({ check: 'fee_revenue_mismatch', detail: { merchantId, expected, actual } });
  }
}

interface Transit {
  /** Records a mismatch unless `entity` has exactly `expected` in transit. */
  expect(merchantId: string, entity: string, expected: number, detail: Record<string, unknown>): void;
  /** Records what is in transit for no entity `expect` was told of. */
  reportUnexplained(): void;
}

/** In transit, per business entity: what each withdrawal's and refund's own references left there. */
async function transitByEntity({ trx, scope, violations }: CheckRun): Promise<Transit> {
  const transit = (await scope(
    trx('ledger_postings as p')
      .join('ledger_accounts as a', 'a.id', 'p.account_id')
      .join('ledger_transactions as t', 't.id', 'p.transaction_id')
      .where('a.kind', 'in_transit')
      .groupBy('a.merchant_id', 'entity')
      .select(
        'a.merchant_id',
        trx.raw("split_part(t.reference, ':', 1) || ':' || split_part(t.reference, ':', 2) as entity"),
        trx.raw('sum(p.amount) as amount'),
      ),
    'a.merchant_id',
  )) as Array<{ merchant_id: string; entity: string; amount: string }>;
  const inTransit = new Map<string, number>();
  for (const t of transit) if (num(t.amount) !== 0) inTransit.set(t.entity, num(t.amount));
  const explained = new Set<string>();
  return {
    expect: (merchantId, entity, expected, detail) => {
      explained.add(entity);
      const actual = inTransit.get(entity) ?? 0;
      if (actual !== expected)
        violations.push({ check: 'in_transit_mismatch', detail: { merchantId, entity, expected, actual, ...detail } });
    },
    reportUnexplained: () => {
      const byMerchant = new Map(transit.map((t) => [t.entity, t.merchant_id]));
      for (const [entity, amount] of inTransit) {
        if (explained.has(entity)) continue;
        violations.push({
          check: 'in_transit_mismatch',
          detail: { merchantId: byMerchant.get(entity), entity, expected: 0, actual: amount, unexplained: true },
        });
      }
    },
  };
}

/**
 * Withdrawals: one debit of the amount; the resolution its status implies; in transit only while
 * PROCESSING. Returns how many it read.
 */
async function checkWithdrawals(run: CheckRun, transit: Transit): Promise<number> {
  const { trx, scope, violations } = run;
  const withdrawals = (await scope(
    trx('withdrawals').select('id', 'merchant_id', 'amount', 'status'),
    'merchant_id',
  )) as Array<{
    id: string;
    merchant_id: string;
    amount: string | number;
    status: string;
  }>;
  const { txByRef, returned } = withdrawals.length
    ? await withdrawalPostings(run)
    : { txByRef: new Map<string, WithdrawalPosting>(), returned: new Set<string>() };
  for (const w of withdrawals) {
    const amount = num(w.amount);
    const debit = txByRef.get(`withdrawal:${w.id}:debit`);
    const resolved = txByRef.get(`withdrawal:${w.id}:resolved`);
    const rule = WITHDRAWAL_RESOLUTION[w.status];
    const problems: string[] = [];
    if (!debit || num(debit.amount) !== amount) problems.push('no debit of its amount');
    if (!rule) problems.push(`unknown status ${w.status}`);
    else {
      if ((resolved?.kind ?? null) !== rule.resolved)
        problems.push(`resolution ${resolved?.kind ?? 'none'} for status ${w.status}`);
      if (returned.has(`withdrawal:${w.id}:returned`) !== rule.returned)
        problems.push(`return posting does not match status ${w.status}`);
    }
    if (problems.length)
      violations.push({
        check: 'withdrawal_mismatch',
        detail: { withdrawalId: w.id, merchantId: w.merchant_id, status: w.status, problems },
      });
    transit.expect(w.merchant_id, `withdrawal:${w.id}`, w.status === 'PROCESSING' ? amount : 0, { status: w.status });
  }
  return withdrawals.length;
}

interface WithdrawalPosting {
  reference: string;
  kind: string;
  amount: string | number;
}

/** The withdrawals' in-transit postings by reference, and which were returned. */
async function withdrawalPostings({ trx, scope }: CheckRun) {
  const postings = (await trx('ledger_transactions as t')
    .join('ledger_postings as p', 'p.transaction_id', 't.id')
    .join('ledger_accounts as a', 'a.id', 'p.account_id')
    .where('a.kind', 'in_transit')
    .where('t.reference', 'like', 'withdrawal:%')
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- knex ignores a where/modify callback's return; the builder is thenable, not a query in flight
    .modify((q) => scope(q, 't.merchant_id'))
    .select('t.reference', 't.kind', 'p.amount')) as WithdrawalPosting[];
  const returnedRows = (await scope(
    trx('ledger_transactions').where('reference', 'like', 'withdrawal:%:returned').select('reference'),
    'merchant_id',
  )) as Array<{ reference: string }>;
  return {
    txByRef: new Map(postings.map((t) => [t.reference, t])),
    returned: new Set(returnedRows.map((r) => r.reference)),
  };
}

/**
 * Refunds: in transit while REQUESTED; a failed return of an unpayable payment (the payer's money)
 * stays there for an operator (docs/architecture.md "Charges: how they work"); a failed MED
 * devolução went back to blocked and the fee (docs/operations.md "The money of an infraction").
 */
async function checkRefunds({ trx, scope }: CheckRun, transit: Transit): Promise<number> {
  const refunds = (await scope(
    trx('charge_refunds').select('id', 'merchant_id', 'amount', 'status', 'kind'),
    'merchant_id',
  )) as Array<{ id: string; merchant_id: string; amount: string | number; status: string; kind: string }>;
  for (const r of refunds) {
    const travelling = r.status === 'REQUESTED' || (r.status === 'FAILED' && r.kind === 'UNPAYABLE_PAYMENT');
    transit.expect(r.merchant_id, `refund:${r.id}`, travelling ? num(r.amount) : 0, { status: r.status, kind: r.kind });
  }
  return refunds.length;
}

/** Blocked funds: per merchant, what its infractions hold blocked (docs/operations.md "MED infractions"). */
async function checkBlocked(
  { trx, scope, violations }: CheckRun,
  accounts: AccountRow[],
  accountOf: Map<string, number>,
): Promise<void> {
  const infractionBlocks = (await scope(
    trx('infractions').groupBy('merchant_id').select('merchant_id', trx.raw('sum(blocked_amount) as blocked')),
    'merchant_id',
  )) as Array<{ merchant_id: string; blocked: string }>;
  const blockedByInfractions = new Map(infractionBlocks.map((r) => [r.merchant_id, num(r.blocked)]));
  const merchantsWithBlocks = new Set([
    ...blockedByInfractions.keys(),
    ...accounts.filter((a) => a.kind === 'blocked').map((a) => a.merchant_id),
  ]);
  for (const merchantId of merchantsWithBlocks) {
    const expected = blockedByInfractions.get(merchantId) ?? 0;
    const actual = accountOf.get(`${merchantId}:blocked`) ?? 0;
    if (expected !== actual) violations.push({ check: 'blocked_mismatch', detail: { merchantId, expected, actual } });
  }
}

/** How many transactions and postings the check covered. */
async function countEntries({ trx, scope }: CheckRun): Promise<{ transactions: number; postings: number }> {
  const [counts] = (await trx.select(
    scope(trx('ledger_transactions').count('*'), 'merchant_id').as('transactions'),
    scope(
      trx('ledger_postings as p').join('ledger_accounts as a', 'a.id', 'p.account_id').count('*'),
      'a.merchant_id',
    ).as('postings'),
  )) as Array<{ transactions: string; postings: string }>;
  return { transactions: num(counts?.transactions), postings: num(counts?.postings) };
}
