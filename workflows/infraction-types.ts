/**
 * Plain types shared by the infraction workflow, its activities and the code that signals it.
 * Pure types only: this file enters the workflow bundle.
 */

import type { DevolucaoStatus, InfractionOperatorAction, InfractionStatus } from '../src/contracts/statuses';

export type { InfractionStatus };

export interface InfractionWorkflowInput {
  infractionId: string;
}

/** What the acquirer announced (`/v1/acquirer/infractions`). */
export interface AcquirerInfractionUpdate {
  status: InfractionStatus;
}

/** The infraction as the workflow needs it; read from PostgreSQL, the system of record. */
export interface InfractionProgress {
  status: InfractionStatus;
  /** The furthest status the acquirer has announced (kept by the callback handler). */
  acquirerStatus: InfractionStatus;
  amount: number;
  blocked: number;
  /** The devolução chosen at acceptance, once chosen. */
  refundId: string | null;
  /** The workflow has nothing left to do. */
  closed: boolean;
  /** An operator case waits for a decision (`pending`), or its decision waits to be applied. */
  operatorAction: InfractionOperatorAction | null;
  /**
   * Time until the merchant's next pending money settles (≤ 0: due), or null when nothing is
   * pending. A duration, not an instant, so database time and workflow time are never compared.
   */
  nextSettlementInMs: number | null;
  /**
   * The merchant's defense waits to be sent to the acquirer (docs/api.md "Infractions"). Absent in
   * the results of runs recorded before defenses existed, so read as false there.
   */
  defensePending?: boolean;
}

/**
 * How the infraction's own devolução stands at the acquirer: settled (`DEVOLVIDO`), still travelling,
 * not completed (`NAO_REALIZADO`), refused outright (`REFUSED`), or not known (`UNKNOWN`: the
 * acquirer could not be asked, or does not know it; the money stays in transit).
 */
export interface MedRefundState {
  status: DevolucaoStatus | 'REFUSED' | 'UNKNOWN';
  rtrId?: string;
  reason?: string;
}

export interface InfractionWorkflowResult {
  status: InfractionStatus;
}
