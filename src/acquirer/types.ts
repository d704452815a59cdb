/**
 * The acquirer seam: what pixflow needs from the PSP that holds the merchants' receiving accounts.
 * One HTTP implementation (http-client.ts) speaks a BCB API Pix style protocol; the simulator
 * (simulator/) serves the same protocol for development, tests and the sandbox.
 * Amounts are integer cents here; only the wire uses BCB decimal strings (money-wire.ts).
 */

export type CobStatus = 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';

export interface CobRequest {
  txid: string;
  amount: number;
  /** Seconds from creation. */
  expiresIn: number;
  /** The receiving PIX key. */
  key: string;
  /** Shown to the payer (solicitacaoPagador, ≤ 140 chars at the PSP). */
  description?: string;
  debtor?: { name: string; document: string };
}

export interface Cob {
  txid: string;
  status: CobStatus;
  amount: number;
  /** The EMV BR Code (copy-and-paste). */
  pixCopiaECola: string;
  createdAt: string;
  expiresIn: number;
}

export type RefundStatus = 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';

export interface Refund {
  id: string;
  rtrId: string;
  amount: number;
  status: RefundStatus;
  reason?: string;
}

export interface TransferRequest {
  amount: number;
  pixKeyType: 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'CHAVE_ALEATORIA';
  pixKey: string;
  description?: string;
}

export type TransferStatus = 'PROCESSING' | 'COMPLETED' | 'REJECTED' | 'RETURNED';

export interface Transfer {
  id: string;
  batchId: string;
  amount: number;
  status: TransferStatus;
  reason?: string;
}

export type PixKeyStatusAtAcquirer = 'PENDENTE' | 'ATIVA' | 'INATIVA';

export interface PixKeyRegistration {
  id: string;
  key: string;
  keyType: TransferRequest['pixKeyType'];
  status: PixKeyStatusAtAcquirer;
}

export interface Acquirer {
  /** PUT /cob/{txid}: creates the immediate charge. Idempotent on txid. */
  createCob(req: CobRequest): Promise<Cob>;
  getCob(txid: string): Promise<Cob>;
  /** PATCH /cob/{txid} status REMOVIDA_PELO_USUARIO_RECEBEDOR; an already removed cob is success. */
  removeCob(txid: string): Promise<Cob>;
  /** PUT /pix/{e2eid}/devolucao/{id}: idempotent on the refund id. */
  requestRefund(e2eId: string, refundId: string, amount: number, reason?: string): Promise<Refund>;
  getRefund(e2eId: string, refundId: string): Promise<Refund>;
  /** POST /transfers with x-idempotency-key: a replay returns the same transfer. */
  sendTransfer(idempotencyKey: string, req: TransferRequest): Promise<Transfer>;
  getTransfer(id: string): Promise<Transfer>;
  /** POST /keys: registers a receiving key (idempotent on our key id); activation comes by callback. */
  registerPixKey(idempotencyKey: string, keyType: TransferRequest['pixKeyType'], key: string): Promise<PixKeyRegistration>;
}
