/**
 * What the sandbox endpoints ask of the acquirer simulator (docs/api.md "Sandbox"): pay a cob, finish a
 * transfer, raise and decide an infraction, and where to send callbacks. Asynchronous, so the
 * simulator can run on a thread of its own (`startSimulatorThread`, the default of `npm start`) or
 * in-process (`sandboxControlOf`, the test stacks); both answer the same and refuse the same way.
 */
import type { Party, PixKeyStatusAtAcquirer } from './types';
import type { SimulatorControl } from './simulator/control';
import type { SandboxSubscriptionAction } from '../contracts/subscriptions';

export type SandboxTransferOutcome = 'complete' | 'fail' | 'return';

export interface SandboxControl {
  /** `paidOn`: a cobv paid on that São Paulo day (the amount due then). */
  payCob(txid: string, opts?: { payer?: Party; paidOn?: string }): Promise<{ endToEndId: string }>;
  finishTransfer(transferId: string, outcome: SandboxTransferOutcome, reason?: string): Promise<void>;
  /** Opens an infraction on a payment; answers with what the acquirer recorded. */
  raiseInfraction(
    endToEndId: string,
    reason?: string,
    opts?: { details?: string; analysis?: 'AGREED' | 'DISAGREED' },
  ): Promise<{ infractionId: string; amount?: number; reason?: string; details?: string }>;
  decideInfraction(infractionId: string, decision: 'accept' | 'reject'): Promise<void>;
  /** Sets a registered key's status at the acquirer, which announces it by its signed callback. */
  setKeyStatus(acquirerKeyId: string, status: PixKeyStatusAtAcquirer): Promise<void>;
  setCallbackBaseUrl(url: string): Promise<void>;
  /** Pix Automático, the payer's side: approve, refuse or cancel a recorrência; fail its next debits. */
  recurrence(action: SandboxRecurrenceAction, idRec: string, opts?: { reason?: string; times?: number }): Promise<void>;
}

export type SandboxRecurrenceAction = SandboxSubscriptionAction;

/**
 * An action the simulator cannot take on what it holds (unknown id, impossible transition); the
 * sandbox answers 400. Told by name, so it is recognised when it crossed from the simulator's thread.
 */
export function isSimulatorRefusal(err: unknown): err is Error {
  return err instanceof Error && err.name === 'SimulatorStateError';
}

/** The sandbox control of a simulator running in this thread. */
export function sandboxControlOf(control: SimulatorControl): SandboxControl {
  return {
    payCob: (txid, opts) => control.payCob(txid, { payer: opts?.payer, paidOn: opts?.paidOn }),
    finishTransfer: async (transferId, outcome, reason) => {
      if (outcome === 'complete') control.completeTransfer(transferId);
      else if (outcome === 'fail') control.failTransfer(transferId, reason);
      else control.returnTransfer(transferId, reason);
    },
    raiseInfraction: async (endToEndId, reason, opts) => {
      const { infractionId } = control.raiseInfraction(endToEndId, reason, opts);
      const raised = control.getInfraction(infractionId);
      return { infractionId, amount: raised?.amount, reason: raised?.reason, details: raised?.details };
    },
    decideInfraction: async (infractionId, decision) => {
      if (decision === 'accept') control.acceptInfraction(infractionId);
      else control.rejectInfraction(infractionId);
    },
    setKeyStatus: async (acquirerKeyId, status) => control.setKeyStatus(acquirerKeyId, status),
    setCallbackBaseUrl: async (url) => control.setCallbackBaseUrl(url),
    recurrence: async (action, idRec, opts) => {
      const r = control.recurrences;
      if (action === 'approve') r.approveRec(idRec);
      else if (action === 'refuse') r.refuseRec(idRec, opts?.reason);
      else if (action === 'cancel') r.cancelRecByPayer(idRec, opts?.reason);
      else r.failNextDebits(idRec, opts?.times ?? 1);
    },
  };
}
