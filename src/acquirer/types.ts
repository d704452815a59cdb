/**
 * The acquirer seam: what pixflow needs from the PSP that holds the merchants' receiving accounts.
 * One HTTP implementation (http-client.ts) speaks a BCB API Pix style protocol; the simulator
 * (simulator/) serves the same protocol for development, tests and the sandbox.
 * Amounts are integer cents here; only the wire uses BCB decimal strings (money-wire.ts).
 * Protocol: README.md beside this file.
 */

export type { CobStatus };

import type { TransferStatus } from '../contracts/statuses';
import type { PixKeyType } from '../pix/pix-key';
import type { CobStatus, DefenseFileType, DevolucaoStatus, PixKeyStatusAtAcquirer } from '../contracts/statuses';
import type { DueDateRules } from '../domain/due-date-amount';

export type { PixKeyType };

/** A person or company by document: 11 digits (CPF) or 14 characters (CNPJ). */
export interface Party {
  name: string;
  document: string;
}

export interface CobRequest {
  /** Ours, 26–35 alphanumerics (BCB TxId); the PUT is idempotent on it. */
  txid: string;
  /** Integer cents, ≥ 1. */
  amount: number;
  /** Seconds from creation (calendario.expiracao). */
  expiresIn: number;
  /** The receiving PIX key (chave, ≤ 77 chars). */
  key: string;
  /** Shown to the payer (solicitacaoPagador); cut to 140 chars. */
  description?: string;
  /**
   * Who the charge is addressed to (BCB `devedor`). Not necessarily who pays: the payer arrives
   * with the payment (`PixReceived.payer`).
   */
  debtor?: Party;
}

/** A due-date charge (BCB cobv): a due date, a payer, and what changes the amount by date. */
export interface CobvRequest {
  /** Ours (BCB TxId); the PUT is idempotent on it. */
  txid: string;
  /** The nominal amount (valor.original), integer cents. */
  amount: number;
  key: string;
  description?: string;
  /** Required for a cobv (BCB `devedor`). */
  debtor: Party;
  /** Due date, validity after it, fine, interest, discount, abatement (src/domain/due-date-amount.ts). */
  rules: DueDateRules;
}

export interface Cobv {
  txid: string;
  status: CobStatus;
  amount: number;
  pixCopiaECola: string;
  location?: string;
  revision: number;
  createdAt: string;
  dueDate: string;
  validityAfterDue: number;
  pix: PixReceived[];
}

/** One request of a cobv batch (BCB lotecobv) and what became of it. */
export interface CobvBatchOutcome {
  txid: string;
  status: 'EM_PROCESSAMENTO' | 'CRIADA' | 'NEGADA';
  /** Why it was refused (NEGADA), from the acquirer's problem. */
  reason?: string;
}

/** A payment received on a cob (BCB `Pix`). */
export interface PixReceived {
  endToEndId: string;
  amount: number;
  /** RFC 3339 instant the PSP processed it. */
  paidAt: string;
  payer?: Party;
}

export interface Cob {
  txid: string;
  status: CobStatus;
  amount: number;
  /** The EMV BR Code (copy-and-paste). */
  pixCopiaECola: string;
  /** The payload location, when the PSP serves dynamic QR payloads (optional in the protocol). */
  location?: string;
  revision: number;
  createdAt: string;
  expiresIn: number;
  /** Payments received (GET only; a fresh cob has none). Lets a reconciler see a lost callback. */
  pix: PixReceived[];
}

export type RefundStatus = DevolucaoStatus;

/** A devolução: the refund of (part of) a received pix. */
export interface Refund {
  id: string;
  /** The return's end-to-end id (pacs.004), 32 chars. */
  rtrId: string;
  amount: number;
  status: RefundStatus;
  /** Why it is in this status (e.g. why it was NAO_REALIZADO). */
  reason?: string;
}

export interface TransferRequest {
  /** Integer cents, ≥ 1. */
  amount: number;
  pixKeyType: PixKeyType;
  pixKey: string;
  /** ≤ 140 chars. */
  description?: string;
}

export type { TransferStatus };

export interface Transfer {
  transferId: string;
  batchId: string;
  /** The key it was created with (our withdrawal id). */
  idempotencyKey: string;
  amount: number;
  status: TransferStatus;
  reason?: string;
}

export type { PixKeyStatusAtAcquirer };

export interface PixKeyRegistration {
  id: string;
  key: string;
  keyType: PixKeyType;
  status: PixKeyStatusAtAcquirer;
}

/** A merchant's defense of a MED infraction, as sent to the acquirer. */
export interface InfractionDefense {
  text: string;
  files: Array<{ name: string; mimeType: DefenseFileType; content: Buffer }>;
}

export interface Acquirer {
  /** PUT /cob/{txid}: creates the immediate charge. Replaying the same request returns the same cob. */
  createCob(req: CobRequest): Promise<Cob>;
  /** GET /cob/{txid}. */
  getCob(txid: string): Promise<Cob>;
  /**
   * PATCH /cob/{txid} `{status: REMOVIDA_PELO_USUARIO_RECEBEDOR}`; an already removed cob is success.
   * A paid cob (CONCLUIDA) cannot be removed: REJECTED (400).
   */
  removeCob(txid: string): Promise<Cob>;
  /** PUT /cobv/{txid}: creates the due-date charge; the same request again returns the same cobv. */
  createCobv(req: CobvRequest): Promise<Cobv>;
  /** GET /cobv/{txid}. */
  getCobv(txid: string): Promise<Cobv>;
  /** PATCH /cobv/{txid} `{status: REMOVIDA_PELO_USUARIO_RECEBEDOR}`; as `removeCob`. */
  removeCobv(txid: string): Promise<Cobv>;
  /** PUT /lotecobv/{id} (202): the acquirer creates each cobv or refuses it on its own. */
  createCobvBatch(batchId: number, description: string, items: CobvRequest[]): Promise<void>;
  /** GET /lotecobv/{id}: each request's outcome. */
  getCobvBatch(batchId: number): Promise<CobvBatchOutcome[]>;
  /** PUT /pix/{e2eId}/devolucao/{refundId}: idempotent on refundId (`[a-zA-Z0-9]{1,35}`). */
  requestRefund(e2eId: string, refundId: string, amount: number, reason?: string): Promise<Refund>;
  /** GET /pix/{e2eId}/devolucao/{refundId}. */
  getRefund(e2eId: string, refundId: string): Promise<Refund>;
  /** POST /transfers with `x-idempotency-key`: a replay returns the same transfer, never a second one. */
  sendTransfer(idempotencyKey: string, req: TransferRequest): Promise<Transfer>;
  /** GET /transfers/{transferId}. */
  getTransfer(transferId: string): Promise<Transfer>;
  /** POST /keys (idempotent on our key id); the status change (ATIVA/INATIVA) comes by callback. */
  registerPixKey(idempotencyKey: string, keyType: PixKeyType, key: string): Promise<PixKeyRegistration>;
  /**
   * POST /infractions/{id}/defense with `x-idempotency-key` (our defense id): a replay is the same
   * defense, never a second one. The analysis follows by the infraction callback.
   */
  submitInfractionDefense(
    acquirerInfractionId: string,
    idempotencyKey: string,
    defense: InfractionDefense,
  ): Promise<{ defenseId: string }>;
}
