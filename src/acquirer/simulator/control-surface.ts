/**
 * The SimulatorControl (control.ts) of one simulator: its methods over the PSP, the recurrences,
 * the callback sender and the simulator's state. Built by server.ts; served over HTTP by
 * control-routes.ts.
 */
import type { CallbackSender } from './callbacks';
import type { SimulatorControl } from './control';
import type { SimulatorLogger } from './logger';
import type { SimState } from './protocol';
import type { SimulatedPsp } from './psp';
import { recurrenceControl } from './recurrence';
import type { SimulatedRecurrences } from './recurrence-state';

export interface ControlDeps {
  state: SimState;
  psp: SimulatedPsp;
  recurrences: SimulatedRecurrences;
  callbacks: CallbackSender;
  logger: SimulatorLogger;
}

/** The fault, callback URL and token switches. */
function settings({ state, psp, callbacks, logger }: ControlDeps) {
  return {
    setFaults(f) {
      const wasHolding = state.faults.outOfOrderCallbacks === true;
      state.faults = { ...f, ...(f.failNext ? { failNext: { ...f.failNext } } : {}) };
      if (wasHolding && !state.faults.outOfOrderCallbacks) callbacks.release();
      logger.info({ faults: state.faults }, 'acquirer simulator: faults set');
    },
    getFaults: () => ({ ...state.faults }),
    setCallbackBaseUrl(url) {
      state.callbackBaseUrl = url;
    },
    setAutoSettleRefunds(on) {
      psp.autoSettleRefunds = on;
    },
    revokeTokens: () => state.tokens.clear(),
  } satisfies Partial<SimulatorControl>;
}

/** What the PSP does on its own or the payer does: payments, settlements, infractions. */
function events(psp: SimulatedPsp) {
  return {
    payCob: async (txid, o) => psp.payCob(txid, o),
    expireCob: (txid) => psp.expireCob(txid),
    settleRefund: (id, outcome, reason) => psp.settleRefund(id, outcome, reason),
    completeTransfer: (id) => psp.finishTransfer(id, 'COMPLETED'),
    failTransfer: (id, reason) =>
      psp.finishTransfer(id, 'REJECTED', reason ?? 'Transferência rejeitada pelo PSP de destino'),
    returnTransfer: (id, reason) => psp.finishTransfer(id, 'RETURNED', reason ?? 'Devolvida pelo PSP de destino'),
    setKeyStatus: (id, status) => psp.setKeyStatus(id, status),
    raiseInfraction: (e2eId, reason, o) => psp.raiseInfraction(e2eId, reason, o),
    acceptInfraction: (id) => psp.decideInfraction(id, 'ACCEPTED'),
    rejectInfraction: (id) => psp.decideInfraction(id, 'REJECTED'),
    refundInfraction: (id) => psp.refundInfraction(id),
    updateInfraction: (id, status) => psp.decideInfraction(id, status),
  } satisfies Partial<SimulatorControl>;
}

export function simulatorControl(d: ControlDeps): SimulatorControl {
  const { psp } = d;
  return {
    calls: d.state.calls,
    recurrences: recurrenceControl(d.recurrences),
    callbacks: d.callbacks,
    ...events(psp),
    ...settings(d),
    getCob: (txid) => psp.cobs.get(txid),
    getRefund: (id) => psp.refunds.get(id),
    getTransfer: (id) => psp.transfers.get(id),
    getKey: (id) => psp.keys.get(id),
    getInfraction: (id) => psp.infractions.get(id),
  };
}
