/**
 * What the simulator's control surface offers (tests, the sandbox, the /control routes): the types
 * shared by control-surface.ts, which implements it, and control-routes.ts, which serves it over HTTP.
 */
import type { PixKeyStatusAtAcquirer, Party } from '../types';
import type { CallbackSender } from './callbacks';
import type { SimAnalysis, SimCob, SimInfraction, SimKey, SimRefund, SimTransfer } from './psp';
import type { DevolucaoOutcome } from '../../contracts/statuses';
import type { RecurrenceControl, RecurrenceRoute } from './recurrence';

/** The protocol routes, as named in faults and the call log. */
export type SimRoute =
  | 'token'
  | 'createCob'
  | 'getCob'
  | 'removeCob'
  | 'refund'
  | 'getRefund'
  | 'transfer'
  | 'getTransfer'
  | 'registerKey'
  | 'defense'
  | 'createCobv'
  | 'getCobv'
  | 'removeCobv'
  | 'createLoteCobv'
  | 'getLoteCobv'
  | RecurrenceRoute;

export interface Faults {
  /** Answer `errorStatus` (default 500) on this fraction (0..1) of protocol calls. */
  errorRate?: number;
  errorStatus?: number;
  /** Delay every protocol call by this much (longer than the client's timeout → its TIMEOUT). */
  latencyMs?: number;
  /** Answer `status` to the next `times` calls of `route` (e.g. 500 at cob creation 3 times). */
  failNext?: { route: SimRoute; times: number; status: number };
  /** Deliver every callback twice (same body, same callback id). */
  duplicateCallbacks?: boolean;
  /** Hold callbacks; they go out newest first when this fault is lifted or on callbacks.release(). */
  outOfOrderCallbacks?: boolean;
  /** Random delay of 0..ms before each callback, so arrival order is not guaranteed. */
  outOfOrderCallbacksMs?: number;
}

export interface SimCall {
  route: SimRoute;
  method?: string;
  path?: string;
  status: number;
  /** The JSON received and answered (for schema checks in tests); absent for injected failures. */
  request?: unknown;
  response?: unknown;
  at?: string;
}

export interface SimulatorControl {
  /** A payer pays the cob: new end-to-end id, cob CONCLUIDA, signed pix callback. */
  payCob(txid: string, opts?: { payer?: Party; amount?: number; paidOn?: string }): Promise<{ endToEndId: string }>;
  /** The PSP removes an ATIVA cob itself (REMOVIDA_PELO_PSP). */
  expireCob(txid: string): void;
  /** A devolução settles (automatic after refundDelayMs unless setAutoSettleRefunds(false)). */
  settleRefund(refundId: string, outcome: DevolucaoOutcome, reason?: string): void;
  completeTransfer(id: string): void;
  failTransfer(id: string, reason?: string): void;
  returnTransfer(id: string, reason?: string): void;
  /** Sets a registered key's status and tells the service (`/v1/acquirer/pix-keys`). */
  setKeyStatus(keyId: string, status: PixKeyStatusAtAcquirer): void;
  /**
   * Opens a MED infraction on a payment and tells the service (`/v1/acquirer/infractions`).
   * `analysis`: how it answers the receiver's defense, shortly after it arrives; unset, it waits
   * to be told (accept/reject).
   */
  raiseInfraction(
    endToEndId: string,
    reason?: string,
    opts?: { details?: string; analysis?: SimAnalysis },
  ): { infractionId: string };
  /** OPEN → ACCEPTED; REFUNDED once a devolução of the payment settles (or refundInfraction). */
  acceptInfraction(infractionId: string): void;
  /** OPEN → REJECTED. */
  rejectInfraction(infractionId: string): void;
  /** ACCEPTED → REFUNDED by the PSP itself: it returns what is still refundable of the payment. */
  refundInfraction(infractionId: string): void;
  /** Same as accept/reject. */
  updateInfraction(infractionId: string, status: 'ACCEPTED' | 'REJECTED'): void;
  setFaults(f: Faults): void;
  getFaults(): Faults;
  setCallbackBaseUrl(url: string): void;
  /** Automatic settlement of devoluções (default on). */
  setAutoSettleRefunds(on: boolean): void;
  /** Invalidates every issued access token (the client's next call gets 401 and fetches a new one). */
  revokeTokens(): void;
  getCob(txid: string): SimCob | undefined;
  getRefund(id: string): SimRefund | undefined;
  getTransfer(id: string): SimTransfer | undefined;
  getKey(id: string): SimKey | undefined;
  getInfraction(id: string): SimInfraction | undefined;
  /** Pix Automático: the payer's side of recorrências and their debits (recurrence.ts). */
  readonly recurrences: RecurrenceControl;
  /** Protocol calls, oldest first (the last 10,000). */
  readonly calls: SimCall[];
  readonly callbacks: CallbackSender;
}
