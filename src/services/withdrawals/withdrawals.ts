/**
 * Withdrawals, API side (docs/architecture.md "Withdrawals: the saga"): request one — prerequisites, idempotency,
 * and the guarded debit in the same transaction as the row — then start its saga; list and get.
 * What happens after the request (transfer, outcome, compensation) is the withdrawal workflow's,
 * in withdrawals/lifecycle.ts.
 */
import type { z } from 'zod';
import type {
  withdrawal as withdrawalContract,
  withdrawalListItem as withdrawalListItemContract,
} from '../../contracts/withdrawals';
import { recordWithdrawal } from '../../observability/metrics';
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { newId } from '../../lib/ids';
import { keyedGroupCommit } from '../../lib/group-commit';
import { conflict, invalid, notFound } from '../../lib/errors';
import { merchantsStore } from '../../stores/merchants';
import { bindContext } from '../../lib/bind-context';
import { withdrawalsStore, type WithdrawalRow } from '../../stores/withdrawals';
import type { WithdrawalWorkflows } from '../../temporal/clients/withdrawal';
import type { CreateWithdrawalBody, ListWithdrawalsQuery } from '../../contracts/withdrawals';
import { assertPageWithinDepth } from '../../contracts/validation';
import * as ledger from '../ledger/ledger';
import { assertSameRequest, requestFingerprint } from '../platform/idempotency';
import { errorMessage } from '../../lib/error-message';

/** The withdrawal as the creation answer shows it (the `withdraw` of the 201 body). */
export type WithdrawalView = z.infer<typeof withdrawalContract>;

/** The list item: the view plus the destination key. */
export type WithdrawalListItem = z.infer<typeof withdrawalListItemContract>;

export interface CreateWithdrawalResult {
  /** true: the idempotency key had already made this withdrawal; nothing new was debited. */
  replay: boolean;
  message: string;
  withdraw: WithdrawalView;
  balance: ledger.Balance;
}

const view = (r: WithdrawalRow): WithdrawalView => ({
  id: r.id,
  amount: r.amount,
  description: r.description,
  status: r.status,
  batchId: r.batch_id,
  createdAt: r.created_at.toISOString(),
});

const listItem = (r: WithdrawalRow): WithdrawalListItem => ({
  ...view(r),
  pixKey: r.pix_key,
  pixKeyType: r.pix_key_type,
});

/** How long a concurrent request with the same idempotency key waits for the first to commit. */
const IN_FLIGHT_WAIT_MS = 10_000;

interface DebitRequest {
  id: string;
  input: CreateWithdrawalBody;
  idempotencyKey: string | null;
  fingerprint: Buffer | null;
}

interface Debited {
  row: WithdrawalRow;
  balance: ledger.Balance;
  /** The ledger transaction of the debit. */
  debitTransactionId: string;
}

type WithdrawalsDeps = { knex: Knex; logger: Logger; workflows: WithdrawalWorkflows };
/** What every operation reads: the dependencies, the stores and the debits' group commit. */
type WithdrawalsCtx = WithdrawalsDeps & {
  store: ReturnType<typeof withdrawalsStore>;
  merchants: ReturnType<typeof merchantsStore>;
  debitTogether: ReturnType<typeof keyedGroupCommit<DebitRequest, Debited | null>>;
};

export function createWithdrawalsService(deps: WithdrawalsDeps) {
  const { knex } = deps;
  const ctx: WithdrawalsCtx = {
    ...deps,
    store: withdrawalsStore(knex),
    merchants: merchantsStore(knex),
    debitTogether: keyedGroupCommit<DebitRequest, Debited | null>((merchantId, requests) =>
      debitBatch(knex, merchantId, requests),
    ),
  };
  return bindContext(ctx, { create, list, get });
}

/** Each unmet prerequisite is named: KYC approved, merchant ACTIVE, acquirer account configured. */
async function prerequisites(trx: Knex.Transaction, merchantId: string): Promise<void> {
  const merchant = await merchantsStore(trx).findById(merchantId);
  if (!merchant) throw notFound('Merchant not found');
  const missing: string[] = [];
  if (merchant.kycStatus !== 'APPROVED') missing.push('KYC not approved');
  if (merchant.status !== 'ACTIVE') missing.push('merchant is not ACTIVE');
  if (!merchant.acquirerAccountId) missing.push('acquirer account not configured');
  if (missing.length > 0) throw invalid(`Cannot withdraw: ${missing.join('; ')}`);
}

/**
 * One group commit of a merchant's withdrawal requests (src/lib/group-commit.ts): the rows and
 * their guarded debits in one transaction; null for a request whose idempotency key was taken, an
 * error for one the balance refused.
 */
async function debitBatch(
  knex: Knex,
  merchantId: string,
  requests: readonly DebitRequest[],
): Promise<Array<Debited | null | Error>> {
  return knex.transaction(async (trx) => {
    await prerequisites(trx, merchantId);
    const rowsStore = withdrawalsStore(trx);
    const results = new Map<string, Debited | null | Error>();
    let round: readonly DebitRequest[] = requests;
    while (round.length > 0) {
      const rows = await rowsStore.insertManyUnlessKeyTaken(
        round.map((r) => ({
          id: r.id,
          merchantId,
          amount: r.input.amount,
          description: r.input.description ?? null,
          pixKeyType: r.input.pixKeyType,
          pixKey: r.input.pixKey,
          idempotencyKey: r.idempotencyKey,
          requestHash: r.fingerprint,
        })),
      );
      const inserted = new Map(rows.map((row) => [row.id, row]));
      for (const r of round) if (!inserted.has(r.id)) results.set(r.id, null);
      const debiting = round.filter((r) => inserted.has(r.id));
      // The guarded debits: available never goes below zero whatever the concurrency, each
      // posted once under `withdrawal:<id>:debit`.
      const outcomes = await ledger.postBatch(
        trx,
        merchantId,
        debiting.map((r) => ledger.withdrawalDebit({ withdrawalId: r.id, merchantId, amount: r.input.amount })),
      );
      const refused = debiting.filter((_, i) => {
        const o = outcomes[i];
        return o === undefined || 'refused' in o;
      });
      if (refused.length > 0) await rowsStore.deleteUncommitted(refused.map((r) => r.id));
      // Pending and blocked are not locked by the debits; read once, after them.
      const rest = debiting.length > refused.length ? await ledger.getBalance(trx, merchantId) : null;
      const refusedKeys = new Set<string>();
      debiting.forEach((r, i) => {
        const o = outcomes[i];
        if (o && 'posted' in o && rest) {
          const available = o.balancesAfter.get('available') ?? 0;
          const balance = { ...rest, available, total: available + rest.pending + rest.blocked };
          results.set(r.id, {
            row: inserted.get(r.id) as WithdrawalRow,
            balance,
            debitTransactionId: o.posted.transactionId,
          });
          return;
        }
        if (r.idempotencyKey) refusedKeys.add(r.idempotencyKey);
        results.set(r.id, invalid('Insufficient available balance for this withdrawal', 'insufficient_balance'));
      });
      // A twin that lost its key to a request of this round that was then refused takes the key
      // now, as it would once that request's own transaction had rolled back.
      round = round.filter(
        (r) => results.get(r.id) === null && r.idempotencyKey !== null && refusedKeys.has(r.idempotencyKey),
      );
    }
    return requests.map((r) => results.get(r.id) ?? null);
  });
}

/** The withdrawal a key made; 422 when it was made from another body. */
async function replayOf(
  ctx: WithdrawalsCtx,
  merchantId: string,
  key: string,
  fingerprint: Buffer,
): Promise<CreateWithdrawalResult | null> {
  const { store, knex } = ctx;
  const row = await store.findByIdempotencyKey(merchantId, key);
  if (!row) return null;
  assertSameRequest(key, row.request_hash, fingerprint);
  return {
    replay: true,
    message: 'Withdrawal already requested with this idempotency key',
    withdraw: view(row),
    balance: await ledger.getBalance(knex, merchantId),
  };
}

export async function create(
  ctx: WithdrawalsCtx,
  merchantId: string,
  input: CreateWithdrawalBody,
  idempotencyKey?: string,
): Promise<CreateWithdrawalResult> {
  const { debitTogether, workflows, logger } = ctx;
  const fingerprint = idempotencyKey ? requestFingerprint(input) : null;
  if (idempotencyKey && fingerprint) {
    const replay = await replayOf(ctx, merchantId, idempotencyKey, fingerprint);
    if (replay) return replay;
  }

  const created = await debitTogether(merchantId, {
    id: newId('wd'),
    input,
    idempotencyKey: idempotencyKey ?? null,
    fingerprint,
  });

  if (!created) {
    // Lost the race for this key to a request that committed: answer with its withdrawal.
    const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
    for (;;) {
      const replay = await replayOf(ctx, merchantId, idempotencyKey as string, fingerprint as Buffer);
      if (replay) return replay;
      if (Date.now() > deadline)
        throw conflict('A request with this idempotency key is still being processed', 'idempotency_key_in_use');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  recordWithdrawal('requested');
  // Committed: the money is in transit. If Temporal cannot take the start now the merchant still
  // gets the 201; the reconciler starts the saga of every PROCESSING withdrawal.
  try {
    await workflows.start({ id: created.row.id, merchantId, debitTransactionId: created.debitTransactionId });
  } catch (err) {
    logger.error({ withdrawalId: created.row.id, err: errorMessage(err) }, 'withdrawal workflow not started');
  }
  return { replay: false, message: 'Withdrawal requested', withdraw: view(created.row), balance: created.balance };
}

export async function list(ctx: WithdrawalsCtx, merchantId: string, q: ListWithdrawalsQuery) {
  const { merchants, store } = ctx;
  if (!(await merchants.findById(merchantId))) throw notFound('Merchant not found');
  const { rows, total } = await store.page(merchantId, { limit: q.limit, offset: (q.page - 1) * q.limit });
  assertPageWithinDepth(q.page, q.limit, total);
  return { page: q.page, limit: q.limit, total, withdrawals: rows.map(listItem) };
}

/** Another merchant's withdrawal is not found, like an unknown id. */
export async function get(ctx: WithdrawalsCtx, merchantId: string, id: string): Promise<WithdrawalListItem> {
  const { store } = ctx;
  const row = await store.findForMerchant(merchantId, id);
  if (!row) throw notFound('Withdrawal not found');
  return listItem(row);
}

export type WithdrawalsService = ReturnType<typeof createWithdrawalsService>;
