/**
 * Transfer callbacks (`/v1/acquirer/transfers`, protocol: src/acquirer/README.md "Callbacks"),
 * after the route verified the HMAC and parsed the body: kept in the `acquirer_callbacks` inbox
 * once per (transfer id, status), then handed to the withdrawal's saga by signal-with-start.
 *
 * The transfer names our withdrawal by its idempotency key (the withdrawal id). A duplicate
 * delivery is signalled again unless the withdrawal already shows that outcome: an earlier delivery
 * may have been stored but not signalled (Temporal down), and the PSP's retry must still get through.
 */
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import { newId } from '../lib/ids';
import type { TransferCallback } from '../acquirer/wire';
import { wireToCents } from '../acquirer/money-wire';
import type { WithdrawalWorkflows } from '../temporal/withdrawal-workflow-client';
import type { TransferOutcomeStatus, WithdrawalStatus } from '../../workflows/withdrawal-types';

/** The withdrawal status each transfer outcome leads to: once there, a signal has nothing to add. */
const APPLIED: Record<TransferOutcomeStatus, WithdrawalStatus | null> = {
  PROCESSING: null,
  COMPLETED: 'COMPLETED',
  REJECTED: 'FAILED',
  RETURNED: 'REFUNDED',
};

export function createWithdrawalCallbacks(deps: { knex: Knex; workflows: WithdrawalWorkflows; logger: Logger }) {
  const { knex, workflows, logger } = deps;

  async function transfer(body: TransferCallback): Promise<void> {
    const t = body.transfer;
    await knex('acquirer_callbacks')
      .insert({ id: newId('acb'), kind: 'transfers', external_id: `${t.id}:${t.status}`, payload: JSON.stringify(body) })
      .onConflict(['kind', 'external_id'])
      .ignore();
    const w = (await knex('withdrawals').where({ id: t.idempotencyKey }).first('id', 'merchant_id', 'status', 'transfer_id', 'amount')) as
      | { id: string; merchant_id: string; status: WithdrawalStatus; transfer_id: string | null; amount: number }
      | undefined;
    if (!w || (w.transfer_id !== null && w.transfer_id !== t.id) || wireToCents(t.valor) !== w.amount) {
      // Not a transfer we made (or not as we made it): an operator reads it from the inbox.
      logger.warn({ transferId: t.id, key: t.idempotencyKey }, 'transfer callback that matches no withdrawal: kept in the inbox');
      return;
    }
    if (t.status === 'PROCESSING' || w.status === APPLIED[t.status]) return;
    await workflows.transferUpdated(
      { id: w.id, merchantId: w.merchant_id },
      { status: t.status, transferId: t.id, ...(t.motivo ? { reason: t.motivo } : {}) },
    );
  }

  return { transfer };
}

export type WithdrawalCallbacks = ReturnType<typeof createWithdrawalCallbacks>;
