/**
 * Withdrawals, workflow side (docs/architecture.md "Withdrawals: the saga"): every step of the saga after the
 * endpoint committed the withdrawal and its debit. Each step is idempotent — the transfer on the
 * withdrawal id at the acquirer, ledger postings on fixed references, guarded status updates,
 * events and notifications on unique references — so the workflow's activities can be retried
 * freely and a duplicate callback changes nothing.
 */
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import type { Logger } from '../../lib/logger';
import { withdrawalsStore, type Withdrawal } from '../../stores/withdrawals';
import { notificationsStore, type NewNotification } from '../../stores/notifications';
import { auditLogStore } from '../../stores/audit-log';
import type { Acquirer, Transfer } from '../../acquirer/types';
import { AcquirerError } from '../../acquirer/errors';
import type {
  ApplyOutcome,
  DebitConfirmation,
  TransferNotice,
  WithdrawalSnapshot,
} from '../../../workflows/withdrawal-types';
import { bindContext } from '../../lib/bind-context';
import * as ledger from '../ledger/ledger';
import { recordEvent, type RecordEventInput } from '../platform/events';
import { recordAudit, type Actor } from '../platform/audit';
import { openOperatorCase } from '../platform/operator-cases';
import { contradictsApplied } from '../../domain/transfer-outcomes';
import { callbackInboxStore } from '../../stores/callback-inbox';
import { transferCallback } from '../../acquirer/wire';
import { wireToCents } from '../../acquirer/money-wire';
import { recordUnconfirmedSignal } from '../platform/signal-checks';
import type { TransferStatus, WithdrawalStatus } from '../../contracts/statuses';

/** Final for the activity's retry policy: the withdrawal does not exist. */
export class WithdrawalNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/** Who writes the saga's operator alerts in the audit log. */
export const SAGA_ACTOR: Actor = { userId: null, email: 'system:withdrawal-saga' };

/** The withdrawal a contradicting outcome is about, as the saga and the callback handler read it. */
export interface ContradictedWithdrawal {
  id: string;
  merchantId: string;
  status: WithdrawalStatus;
  amount: number;
  transferId: string | null;
}

/**
 * A transfer outcome that contradicts the one the withdrawal applied
 * (docs/architecture.md "Withdrawals: the saga", Contradicting outcomes): a TRANSFER_CONTRADICTION operator case, once per withdrawal and
 * contradicting outcome. Nothing else moves: the first applied outcome stays (the ledger holds one
 * resolution per withdrawal). False when it does not contradict, or the case was already open.
 */
export async function openTransferContradiction(
  db: Db,
  logger: Logger,
  w: ContradictedWithdrawal,
  outcome: { status: TransferStatus; transferId: string | null; reason?: string },
): Promise<boolean> {
  if (!contradictsApplied(outcome.status, w.status)) return false;
  const transferId = outcome.transferId ?? w.transferId;
  return openOperatorCase(db, logger, {
    reference: `withdrawal:${w.id}:contradiction:${outcome.status}`,
    kind: 'TRANSFER_CONTRADICTION',
    merchantId: w.merchantId,
    subjectType: 'withdrawal',
    subjectId: w.id,
    reason: `transfer ${transferId ?? '(unknown)'} reported ${outcome.status} after the withdrawal was ${w.status}: the books keep ${w.status}; settle it with the acquirer`,
    details: {
      applied: w.status,
      contradicting: outcome.status,
      transferId,
      amount: w.amount,
      ...(outcome.reason ? { acquirerReason: outcome.reason } : {}),
    },
  });
}

/** A catalogue event without what `resolve` adds (its merchant and reference), one member per event type. */
type WithdrawalEvent = RecordEventInput extends infer E
  ? E extends unknown
    ? Omit<E, 'merchantId' | 'reference'>
    : never
  : never;

type WithdrawalPatch = Parameters<ReturnType<typeof withdrawalsStore>['patch']>[1];

/** What one outcome changes, for `resolve` to apply (the steps are the same for every outcome). */
interface Resolution {
  /** The only status the outcome applies from. */
  from: WithdrawalStatus;
  /** Posts the ledger movement; false when the books already say otherwise, and nothing else changes. */
  post: (trx: Db, w: Withdrawal) => Promise<boolean>;
  /** The row's new fields, the event and the merchant's notification, from the locked row and the time of the change. */
  change: (
    w: Withdrawal,
    at: Date,
  ) => {
    patch: Omit<WithdrawalPatch, 'updatedAt'> & { status: WithdrawalStatus };
    event: WithdrawalEvent;
    notification?: Pick<NewNotification, 'title' | 'body' | 'data'>;
  };
}

/** The acquirer's description, ≤ 140 chars, of a transfer. */
const transferDescription = (w: Withdrawal): string => (w.description ?? `Saque ${w.id}`).slice(0, 140);

type WithdrawalLifecycleCtx = { knex: Knex; acquirer: Acquirer; logger: Logger };

export function createWithdrawalLifecycle(deps: { knex: Knex; acquirer: Acquirer; logger: Logger }) {
  return bindContext(deps, {
    loadSnapshot,
    confirmDebit,
    sendTransfer,
    checkTransfer,
    complete,
    fail,
    refund,
    raiseAlert,
    reportContradiction,
  });
}

async function find(db: Db, id: string, lock = false): Promise<Withdrawal> {
  const w = await withdrawalsStore(db).find(id, { lock });
  if (!w) throw new WithdrawalNotFoundError(`withdrawal ${id} not found`);
  return w;
}

const snapshotOf = (w: Withdrawal): WithdrawalSnapshot => ({
  id: w.id,
  merchantId: w.merchantId,
  status: w.status,
  amount: w.amount,
  transferId: w.transferId,
  batchId: w.batchId,
});

export async function loadSnapshot(ctx: WithdrawalLifecycleCtx, id: string): Promise<WithdrawalSnapshot> {
  const { knex } = ctx;
  return snapshotOf(await find(knex, id));
}

/**
 * The saga's first step: the debit (available → in transit) under its fixed reference. The
 * endpoint posts it in the withdrawal's own transaction, so here it is normally a replay that
 * names the ledger transaction; posting it is the fallback that keeps the saga correct on its own.
 */
export async function confirmDebit(ctx: WithdrawalLifecycleCtx, id: string): Promise<DebitConfirmation> {
  const { knex } = ctx;
  const w = await find(knex, id);
  const posted = await ledger.debitWithdrawal(knex, {
    withdrawalId: w.id,
    merchantId: w.merchantId,
    amount: w.amount,
  });
  return { snapshot: snapshotOf(w), ledgerTransactionId: posted.transactionId, postedNow: posted.created };
}

const noticeOf = (t: Transfer): TransferNotice => ({
  status: t.status,
  transferId: t.transferId,
  ...(t.reason ? { reason: t.reason } : {}),
});

async function storeTransfer(ctx: WithdrawalLifecycleCtx, id: string, t: Transfer): Promise<void> {
  const { knex } = ctx;
  await withdrawalsStore(knex).setTransferOnce(id, t);
}

/**
 * POST /transfers with the withdrawal id as idempotency key: a retry (or a new worker after a
 * crash) gets the same transfer back, never a second one. A request the acquirer refuses outright
 * (its 400: e.g. a key the DICT rejects), or that our own schemas refuse before sending, created
 * nothing at the acquirer, so it is a REJECTED outcome and the saga compensates.
 */
export async function sendTransfer(ctx: WithdrawalLifecycleCtx, id: string): Promise<TransferNotice> {
  const { knex, acquirer, logger } = ctx;
  const w = await find(knex, id);
  if (w.status !== 'PROCESSING') return { status: 'PROCESSING', transferId: w.transferId };
  let t: Transfer;
  try {
    t = await acquirer.sendTransfer(w.id, {
      amount: w.amount,
      pixKeyType: w.pixKeyType,
      pixKey: w.pixKey,
      description: transferDescription(w),
    });
  } catch (err) {
    const nothingCreated =
      err instanceof AcquirerError &&
      (err.code === 'INVALID_REQUEST' || (err.code === 'REJECTED' && err.status === 400));
    if (nothingCreated) {
      logger.warn({ withdrawalId: id, err: err.message }, 'transfer refused by the acquirer');
      const reason = `refused by the acquirer: ${err.problem?.detail ?? err.code}`;
      // Kept on the row: the acquirer's own answer, which failing the withdrawal then relies on.
      await withdrawalsStore(knex).patch(id, { failureReason: reason, updatedAt: new Date() });
      return { status: 'REJECTED', transferId: null, reason };
    }
    throw err;
  }
  await storeTransfer(ctx, id, t);
  return noticeOf(t);
}

/**
 * Asks the acquirer where the transfer stands (the polling fallback when no callback came).
 * Without a stored transfer id the idempotent send is the question: it answers with the transfer
 * the key already made, or makes the one the saga owes.
 */
export async function checkTransfer(ctx: WithdrawalLifecycleCtx, id: string): Promise<TransferNotice> {
  const { knex, acquirer } = ctx;
  const w = await find(knex, id);
  if (!w.transferId) return sendTransfer(ctx, id);
  return noticeOf(await acquirer.getTransfer(w.transferId));
}

/**
 * Where the transfer stands, from the signed callback of the claimed outcome or else the
 * acquirer (docs/architecture.md "Workflows carry intent; activities check facts"): an outcome
 * handed to the saga, by signal or poll, is applied only when this bears it out.
 */
async function transferFact(
  ctx: WithdrawalLifecycleCtx,
  w: Withdrawal,
  claimed: TransferNotice,
): Promise<TransferNotice> {
  const { knex } = ctx;
  // The send was refused with nothing created (sendTransfer kept the acquirer's refusal).
  if (!w.transferId && w.failureReason) return { status: 'REJECTED', transferId: null, reason: w.failureReason };
  const transferId = w.transferId ?? claimed.transferId;
  const row = transferId
    ? await callbackInboxStore(knex).findSigned('transfers', `${transferId}:${claimed.status}`)
    : undefined;
  const signed = row ? transferCallback.safeParse(row.payload) : undefined;
  if (signed?.success) {
    const t = signed.data.transfer;
    const ours = t.idempotencyKey === w.id && (w.transferId ?? t.id) === t.id && wireToCents(t.valor) === w.amount;
    if (ours) return { status: t.status, transferId: t.id, ...(t.motivo ? { reason: t.motivo } : {}) };
  }
  return checkTransfer(ctx, w.id);
}

/**
 * The outcome the source states, when it is one of `accepted`; otherwise null, with the claim
 * recorded (audit and metric) and nothing applied.
 */
async function confirmOutcome(
  ctx: WithdrawalLifecycleCtx,
  w: Withdrawal,
  claimed: TransferNotice,
  accepted: readonly TransferStatus[],
): Promise<TransferNotice | null> {
  const { knex, logger } = ctx;
  const fact = await transferFact(ctx, w, claimed);
  if (accepted.includes(fact.status)) return fact;
  await recordUnconfirmedSignal(knex, logger, {
    workflow: 'withdrawal',
    signal: 'transfer',
    verdict: 'disagrees',
    subjectType: 'withdrawal',
    subjectId: w.id,
    merchantId: w.merchantId,
    claimed,
    source: fact,
  });
  return null;
}

/** The ledger's resolution of the transfer; false when the books already hold the other one (the first wins, the row follows it). */
const postResolution =
  (ctx: WithdrawalLifecycleCtx, outcome: 'completed' | 'failed', late: string) =>
  async (trx: Db, w: Withdrawal): Promise<boolean> => {
    const posted = await ledger.resolveWithdrawal(trx, {
      withdrawalId: w.id,
      merchantId: w.merchantId,
      amount: w.amount,
      outcome,
    });
    if (posted.kind === `withdrawal_${outcome}`) return true;
    ctx.logger.error({ withdrawalId: w.id, ledgerKind: posted.kind }, late);
    return false;
  };

/**
 * One outcome applied in one transaction: lock the withdrawal, apply only from `from` (anything
 * else was resolved already), post to the ledger, patch the row, record the event (and the
 * merchant's notification) on the `<event>:<id>` reference.
 */
async function resolve(ctx: WithdrawalLifecycleCtx, id: string, r: Resolution): Promise<ApplyOutcome> {
  const { knex } = ctx;
  return knex.transaction(async (trx) => {
    const w = await find(trx, id, true);
    if (w.status !== r.from || !(await r.post(trx, w))) return { status: w.status, changed: false };
    const at = new Date();
    const { patch, event, notification } = r.change(w, at);
    const reference = `${event.type}:${id}`;
    await withdrawalsStore(trx).patch(id, { ...patch, updatedAt: at });
    await recordEvent(trx, { ...event, merchantId: w.merchantId, reference });
    if (notification) {
      await notificationsStore(trx).insertOnce({
        merchantId: w.merchantId,
        kind: event.type,
        reference,
        ...notification,
      });
    }
    return { status: patch.status, changed: true };
  });
}

/** COMPLETED: in transit → acquirer (the money left the merchant's books), `withdraw.completed`. */
export async function complete(ctx: WithdrawalLifecycleCtx, id: string, notice: TransferNotice): Promise<ApplyOutcome> {
  const { knex } = ctx;
  const w = await find(knex, id);
  if (w.status !== 'PROCESSING') return { status: w.status, changed: false };
  // A returned transfer was completed first.
  const fact = await confirmOutcome(ctx, w, { ...notice, status: 'COMPLETED' }, ['COMPLETED', 'RETURNED']);
  if (!fact) return { status: w.status, changed: false };
  return resolve(ctx, id, {
    from: 'PROCESSING',
    post: postResolution(ctx, 'completed', 'transfer COMPLETED after the withdrawal was resolved as failed'),
    change: (w, completedAt) => {
      const transferId = w.transferId ?? fact.transferId;
      return {
        patch: { status: 'COMPLETED', completedAt, transferId },
        event: {
          type: 'withdraw.completed',
          data: {
            withdrawId: id,
            amount: w.amount,
            status: 'COMPLETED',
            transferId: transferId ?? '',
            completedAt: completedAt.toISOString(),
          },
        },
      };
    },
  });
}

/**
 * The compensation of a rejected transfer: in transit → available (the balance is restored),
 * FAILED with the reason, `withdraw.failed` and a notification for the merchant. One ledger
 * reference for completion and failure, so a failure can never be posted twice nor after a
 * completion.
 */
export async function fail(ctx: WithdrawalLifecycleCtx, id: string, claimedReason: string): Promise<ApplyOutcome> {
  const { knex } = ctx;
  const current = await find(knex, id);
  if (current.status !== 'PROCESSING') return { status: current.status, changed: false };
  const claimed: TransferNotice = { status: 'REJECTED', transferId: current.transferId, reason: claimedReason };
  const fact = await confirmOutcome(ctx, current, claimed, ['REJECTED']);
  if (!fact) return { status: current.status, changed: false };
  const reason = fact.reason ?? claimedReason;
  return resolve(ctx, id, {
    from: 'PROCESSING',
    post: postResolution(ctx, 'failed', 'transfer REJECTED after the withdrawal was resolved as completed'),
    change: (w, failedAt) => ({
      patch: { status: 'FAILED', failureReason: reason, failedAt },
      event: { type: 'withdraw.failed', data: { withdrawId: id, amount: w.amount, status: 'FAILED', reason } },
      notification: {
        title: 'Withdrawal failed',
        body: `Your withdrawal of ${w.amount} cents could not be completed (${reason}). The amount is back in your available balance.`,
        data: { withdrawId: id, amount: w.amount, reason },
      },
    }),
  });
}

/**
 * The destination bank returned a completed transfer: acquirer → available (balance restored),
 * REFUNDED, `withdraw.refunded`. A return that overtook its completion completes first, so the
 * books always pass through the state the acquirer went through.
 */
export async function refund(ctx: WithdrawalLifecycleCtx, id: string, notice: TransferNotice): Promise<ApplyOutcome> {
  const { knex } = ctx;
  let w = await find(knex, id);
  if (w.status !== 'PROCESSING' && w.status !== 'COMPLETED') return { status: w.status, changed: false };
  const fact = await confirmOutcome(ctx, w, { ...notice, status: 'RETURNED' }, ['RETURNED']);
  if (!fact) return { status: w.status, changed: false };
  const reason = fact.reason ?? notice.reason ?? 'returned by the destination bank';
  if (w.status === 'PROCESSING') {
    await complete(ctx, id, fact);
    w = await find(knex, id);
  }
  if (w.status !== 'COMPLETED') return { status: w.status, changed: false };
  return resolve(ctx, id, {
    from: 'COMPLETED',
    post: async (trx, locked) => {
      await ledger.creditReturnedTransfer(trx, {
        withdrawalId: id,
        merchantId: locked.merchantId,
        amount: locked.amount,
      });
      return true;
    },
    change: (locked, refundedAt) => ({
      patch: { status: 'REFUNDED', failureReason: reason, refundedAt },
      event: {
        type: 'withdraw.refunded',
        data: {
          withdrawId: id,
          amount: locked.amount,
          status: 'REFUNDED',
          reason,
          refundedAt: refundedAt.toISOString(),
        },
      },
      notification: {
        title: 'Withdrawal returned',
        body: `Your withdrawal of ${locked.amount} cents was returned by the destination bank (${reason}). The amount is back in your available balance.`,
        data: { withdrawId: id, amount: locked.amount, reason },
      },
    }),
  });
}

/**
 * The overall deadline passed and the acquirer still does not say how the transfer ended: an
 * operator decides, never a guess (completing could lose the merchant's money, failing could pay
 * it twice). An audit entry for operators and a notification for the merchant, once each.
 */
export async function raiseAlert(
  ctx: WithdrawalLifecycleCtx,
  id: string,
  lastKnown: TransferNotice,
): Promise<{ raised: boolean }> {
  const { knex, logger } = ctx;
  return knex.transaction(async (trx) => {
    const w = await find(trx, id, true);
    const already = await auditLogStore(trx).exists({
      action: 'withdrawal.transfer_unresolved',
      targetType: 'withdrawal',
      targetId: id,
    });
    if (already) return { raised: false };
    await recordAudit(trx, SAGA_ACTOR, {
      action: 'withdrawal.transfer_unresolved',
      targetType: 'withdrawal',
      targetId: id,
      details: {
        merchantId: w.merchantId,
        amount: w.amount,
        transferId: w.transferId,
        lastKnownStatus: lastKnown.status,
      },
    });
    await notificationsStore(trx).insertOnce({
      merchantId: w.merchantId,
      kind: 'withdrawal.delayed',
      reference: `withdrawal.delayed:${id}`,
      title: 'Withdrawal delayed',
      body: `Your withdrawal of ${w.amount} cents is taking longer than usual at the bank. Our operators are checking it; the amount stays reserved.`,
      data: { withdrawId: id, amount: w.amount },
    });
    logger.error(
      { withdrawalId: id, transferId: w.transferId, status: lastKnown.status },
      'withdrawal transfer unresolved past its deadline: operator alert raised',
    );
    return { raised: true };
  });
}

/** The saga met an outcome contradicting the applied one: the case (the withdrawal is read again). */
export async function reportContradiction(
  ctx: WithdrawalLifecycleCtx,
  id: string,
  notice: TransferNotice,
): Promise<{ opened: boolean }> {
  const { knex, logger } = ctx;
  const w = await find(knex, id);
  const opened = await knex.transaction((trx) => openTransferContradiction(trx, logger, w, notice));
  return { opened };
}

export type WithdrawalLifecycle = ReturnType<typeof createWithdrawalLifecycle>;
