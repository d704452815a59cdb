/**
 * Transfer callbacks (`/v1/acquirer/transfers`, protocol: src/acquirer/README.md "Callbacks"): the
 * `transfers` handler of the callback inbox (docs/operations.md "The callback inbox and reconciliation"). The
 * route keeps each callback once per (transfer id, status); this handler hands it to the
 * withdrawal's saga by signal-with-start, and the inbox's reconciler calls it again until it is
 * applied or parked, so a callback that arrived while Temporal was down still reaches the saga.
 *
 * The transfer names our withdrawal by its idempotency key (the withdrawal id). Once the signal is
 * accepted the saga's history holds it, and a saga lost with its signal still resolves the
 * withdrawal by asking the acquirer (docs/architecture.md "Withdrawals: the saga"), so a signalled callback is
 * done as far as the inbox goes.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { withdrawalsStore } from '../../stores/withdrawals';
import { transferCallback } from '../../acquirer/wire';
import { wireToCents } from '../../acquirer/money-wire';
import type { AcquirerCallback } from '../../models/acquirer-callback';
import type { WithdrawalWorkflows } from '../../temporal/clients/withdrawal';
import { PermanentCallbackError, type HandlerOutcome } from '../inbox/callback-inbox';
import { contradictsApplied, WITHDRAWAL_STATUS_AFTER } from '../../domain/transfer-outcomes';
import { openTransferContradiction } from './lifecycle';

export function createWithdrawalCallbackHandler(deps: { knex: Knex; logger: Logger; workflows: WithdrawalWorkflows }) {
  const { knex, logger, workflows } = deps;

  return async function handleTransfer(entry: AcquirerCallback): Promise<HandlerOutcome> {
    const parsed = transferCallback.safeParse(entry.payload);
    if (!parsed.success) throw new PermanentCallbackError('stored transfer callback does not match the protocol');
    const t = parsed.data.transfer;
    const w = await withdrawalsStore(knex).forTransferCallback(t.idempotencyKey);
    // Not a transfer we made (or not as we made it): parked, so an operator looks at it.
    if (!w) return { kind: 'park', reason: `transfer ${t.id} names no withdrawal (${t.idempotencyKey})` };
    if (w.transfer_id !== null && w.transfer_id !== t.id)
      return { kind: 'park', reason: `transfer ${t.id} is not withdrawal ${w.id}'s (${w.transfer_id})` };
    if (wireToCents(t.valor) !== w.amount)
      return {
        kind: 'park',
        reason: `transfer ${t.id} amount ${t.valor} differs from withdrawal ${w.id}'s ${w.amount} cents`,
      };
    if (t.status === 'PROCESSING') return { kind: 'applied', resolution: 'in progress: nothing to apply' };
    if (w.status === WITHDRAWAL_STATUS_AFTER[t.status])
      return { kind: 'applied', resolution: `withdrawal already ${w.status}` };
    // An outcome contradicting the applied one (docs/architecture.md "Withdrawals: the saga", Contradicting
    // outcomes) changes nothing and goes to an operator: a case, and the callback is done.
    if (contradictsApplied(t.status, w.status)) {
      const opened = await knex.transaction((trx) =>
        openTransferContradiction(
          trx,
          logger,
          { id: w.id, merchantId: w.merchant_id, status: w.status, amount: w.amount, transferId: w.transfer_id },
          { status: t.status, transferId: t.id, ...(t.motivo ? { reason: t.motivo } : {}) },
        ),
      );
      return {
        kind: 'applied',
        resolution: `contradicts the applied ${w.status}: nothing changed, operator case TRANSFER_CONTRADICTION ${opened ? 'opened' : 'already open'}`,
      };
    }
    await workflows.transferUpdated(
      { id: w.id, merchantId: w.merchant_id },
      { status: t.status, transferId: t.id, ...(t.motivo ? { reason: t.motivo } : {}) },
    );
    return { kind: 'applied', resolution: `handed to withdrawal-${w.id}` };
  };
}
