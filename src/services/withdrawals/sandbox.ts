/**
 * Sandbox for withdrawals (only while the acquirer is the embedded simulator): the merchant
 * tells the simulator how one of its own transfers ends — completed, rejected, or returned after
 * completion — and the outcome comes back through the real path: signed callback, inbox,
 * signal-with-start, the saga's activities.
 */
import { invalid } from '../../lib/errors';
import { isSimulatorRefusal, type SandboxControl, type SandboxTransferOutcome } from '../../acquirer/sandbox-control';
import type { WithdrawalsService } from './withdrawals';
import type { Knex } from 'knex';
import { withdrawalsStore } from '../../stores/withdrawals';

export type SandboxTransferAction = SandboxTransferOutcome;

/** How long to wait for the saga to have sent the transfer (it does so right after the 201). */
const SENT_WAIT_MS = 5_000;

export function createWithdrawalSandbox(deps: {
  knex: Knex;
  withdrawals: WithdrawalsService;
  simulator: SandboxControl;
}) {
  async function transferIdOf(merchantId: string, withdrawalId: string): Promise<string> {
    // Scoped to the caller: another merchant's withdrawal is 404 here as everywhere.
    await deps.withdrawals.get(merchantId, withdrawalId);
    const deadline = Date.now() + SENT_WAIT_MS;
    for (;;) {
      const transferId = await withdrawalsStore(deps.knex).transferIdOf(withdrawalId);
      if (transferId) return transferId;
      if (Date.now() > deadline)
        throw invalid('The transfer of this withdrawal has not reached the acquirer yet; try again shortly');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function act(
    merchantId: string,
    withdrawalId: string,
    action: SandboxTransferAction,
    reason?: string,
  ): Promise<{ transferId: string }> {
    const transferId = await transferIdOf(merchantId, withdrawalId);
    try {
      await deps.simulator.finishTransfer(transferId, action, reason);
    } catch (err) {
      if (isSimulatorRefusal(err)) throw invalid(`The sandbox acquirer cannot ${action} this transfer: ${err.message}`);
      throw err;
    }
    return { transferId };
  }

  return { act };
}

export type WithdrawalSandbox = ReturnType<typeof createWithdrawalSandbox>;
