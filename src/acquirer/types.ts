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
import type {
  CobRAttemptStatus,
  CobRStatus,
  RecPeriodicity,
  RecRetryPolicy,
  RecStatus,
  SolicRecStatus,
} from '../contracts/statuses';

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

/** A cobv as the acquirer answers it: a cob's fields with its due date in place of an expiry. */
export interface Cobv extends ChargeAtAcquirer {
  dueDate: string;
  validityAfterDue: number;
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

/** What a cob and a cobv share. */
export interface ChargeAtAcquirer {
  txid: string;
  status: CobStatus;
  amount: number;
  /** The EMV BR Code (copy-and-paste). */
  pixCopiaECola: string;
  /** The payload location, when the PSP serves dynamic QR payloads (optional in the protocol). */
  location?: string;
  revision: number;
  createdAt: string;
  /** Payments received (GET only; a fresh one has none). Lets a reconciler see a lost callback. */
  pix: PixReceived[];
}

export interface Cob extends ChargeAtAcquirer {
  expiresIn: number;
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
  /** Pix Automático (src/acquirer/README.md "Recurrences"): POST /locrec, the QR location of a rec. */
  createRecLocation(): Promise<RecLocation>;
  /** POST /rec: a recorrência CRIADA; idempotent on `contract` (vinculo.contrato, ours). */
  createRec(req: RecRequest): Promise<Rec>;
  /** GET /rec/{idRec}: with the authorisation QR (dadosQR) while a location is linked. */
  getRec(idRec: string): Promise<Rec>;
  /** PATCH /rec/{idRec} `{status: CANCELADA}`; an already cancelled rec is success. */
  cancelRec(idRec: string): Promise<Rec>;
  /** POST /solicrec: asks the payer's PSP to confirm the rec (JORNADA_1). */
  createSolicRec(req: SolicRecRequest): Promise<SolicRec>;
  /** PUT /cobr/{txid}: a cycle's charge, 2 to 10 days before its date; a replay returns the same cobr. */
  createCobR(req: CobRRequest): Promise<CobR>;
  /** GET /cobr/{txid}: status, debit attempts and the pix received. */
  getCobR(txid: string): Promise<CobR>;
  /** PATCH /cobr/{txid} `{status: CANCELADA}`; an already cancelled cobr is success, a paid one REJECTED. */
  cancelCobR(txid: string): Promise<CobR>;
  /** POST /cobr/{txid}/retentativa/{date}: a new debit attempt on `date` (YYYY-MM-DD), by the rec's policy. */
  retryCobR(txid: string, date: string): Promise<CobR>;
}

export type { RecStatus, RecPeriodicity, RecRetryPolicy, CobRStatus, CobRAttemptStatus, SolicRecStatus };

/** A payload location for a recorrência's QR (BCB PayloadLocationRec). */
export interface RecLocation {
  id: number;
  /** Without scheme, ≤ 77 chars, as BR Codes carry it. */
  location: string;
  createdAt: string;
  idRec?: string;
}

export interface RecRequest {
  /** vinculo.contrato: our subscription id (≤ 35); the simulator treats it as the creation's key. */
  contract: string;
  /** vinculo.objeto: what the payer sees (≤ 35). */
  object?: string;
  debtor: Party;
  /** YYYY-MM-DD. */
  firstDate: string;
  endDate?: string;
  periodicity: RecPeriodicity;
  /** valorRec: a fixed amount in cents; absent for variable amounts. */
  amount?: number;
  retryPolicy: RecRetryPolicy;
  /** The `locrec` id to link (its QR becomes the authorisation QR, JORNADA_2). */
  locationId?: number;
}

export interface Rec {
  idRec: string;
  status: RecStatus;
  contract: string;
  debtor: Party;
  firstDate: string;
  endDate?: string;
  periodicity: RecPeriodicity;
  amount?: number;
  retryPolicy?: RecRetryPolicy;
  location?: string;
  /** The authorisation BR Code (GET only, while a location is linked). */
  pixCopiaECola?: string;
  /** How the payer confirmed it (ativacao.tipoJornada). */
  journey?: string;
  history: Array<{ status: RecStatus; at: string }>;
  /** Why it ended: refused (rejeicao) or cancelled by whom (cancelamento). */
  ending?: { kind: 'REFUSED' | 'CANCELED'; code: string; description: string; requestedBy?: string };
}

export interface SolicRecRequest {
  idRec: string;
  /** RFC 3339: the payer's PSP drops the request after this. */
  expiresAt: string;
  /** The payer's account: PSP ISPB (8), account number, branch; document as in the rec. */
  destination: { ispb: string; account: string; branch?: string; document: string };
}

export interface SolicRec {
  id: string;
  idRec: string;
  status: SolicRecStatus;
  expiresAt: string;
}

export interface CobRRequest {
  /** Ours, 26–35 alphanumerics; the PUT is idempotent on it. */
  txid: string;
  idRec: string;
  /** YYYY-MM-DD: the debit date (calendario.dataDeVencimento). */
  dueDate: string;
  /** Integer cents, ≥ 1. */
  amount: number;
  /** infoAdicional, cut to 140. */
  description?: string;
  /** The merchant's receiving account at the acquirer. */
  receiver: { account: string; accountType: 'CORRENTE' | 'POUPANCA' | 'PAGAMENTO'; branch?: string };
}

export interface CobRAttempt {
  settlementDate: string;
  type: 'AGND' | 'NTAG' | 'RIFL';
  status: CobRAttemptStatus;
  endToEndId: string;
  rejection?: { code: string; description: string };
}

export interface CobR {
  txid: string;
  idRec: string;
  status: CobRStatus;
  amount: number;
  dueDate: string;
  /** YYYY-MM-DD. */
  createdAt: string;
  retryPolicy?: RecRetryPolicy;
  attempts: CobRAttempt[];
  /** The debits received (PixAutomatico). */
  pix: PixReceived[];
}
