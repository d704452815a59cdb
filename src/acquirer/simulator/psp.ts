/**
 * The simulated PSP's state and the things that happen "on its side": payments arriving,
 * devoluções settling, transfers finishing, keys changing status, MED infractions. Each such event
 * is announced to the service by a signed callback (callbacks.ts). The HTTP protocol (the route
 * modules server.ts wires) and the control surface (control-surface.ts, /_sim routes) both act through this one object.
 */
import type { InfractionStatus } from '../../contracts/statuses';
import crypto from 'node:crypto';
import { buildBrCode } from '../../pix/brcode';
import { centsToWire, wireToCents } from '../money-wire';
import type { CobStatus, Party, PixKeyStatusAtAcquirer, PixKeyType, RefundStatus, TransferStatus } from '../types';
import type { InfractionCallback, PixCallback, PixKeyCallback, TransferCallback } from '../wire';
import type { CallbackSender } from './callbacks';
import type { DevolucaoOutcome } from '../../contracts/statuses';
import {
  amountDueOn,
  payableOn,
  saoPauloDate,
  startOfSaoPauloDay,
  type DueDateRules,
} from '../../domain/due-date-amount';

export interface SimPayment {
  e2eId: string;
  amount: number;
  paidAt: string;
  payer: Party;
}

export interface SimCob {
  txid: string;
  status: CobStatus;
  amount: number;
  key: string;
  description?: string;
  debtor?: { cpf?: string; cnpj?: string; nome: string };
  createdAt: string;
  expiresIn: number;
  revision: number;
  /** `NO_PAYMENTS` until the first payment (most cobs never see one; see `pixCopiaECola`). */
  payments: readonly SimPayment[];
  /** A cobv's rules (due date, fine, interest, discount, abatement): the payer pays what they say. */
  dueDate?: DueDateRules;
}

export const NO_PAYMENTS: readonly SimPayment[] = Object.freeze([]);

/** A payment received and the txid of what it paid (a cob, cobv or cobr). */
export interface PaidPix {
  txid: string;
  payment: SimPayment;
}

/** What a cob and a cobv request share (BCB CobSolicitada, CobVSolicitada). */
interface ChargeRequestWire {
  valor: { original: string };
  chave: string;
  solicitacaoPagador?: string;
  devedor?: SimCob['debtor'];
}

/** A new ATIVA cob, or cobv with `dueDate`, from its request; `expiresIn` is 0 for a cobv. */
export function newCob(
  txid: string,
  body: ChargeRequestWire,
  kind: { expiresIn: number; dueDate?: DueDateRules },
): SimCob {
  return {
    txid,
    status: 'ATIVA',
    amount: wireToCents(body.valor.original) ?? 0,
    key: body.chave,
    description: body.solicitacaoPagador,
    debtor: body.devedor,
    createdAt: new Date().toISOString(),
    expiresIn: kind.expiresIn,
    revision: 0,
    payments: NO_PAYMENTS,
    ...(kind.dueDate ? { dueDate: kind.dueDate } : {}),
  };
}

/**
 * A cob's copia-e-cola code, built from the cob whenever it is shown rather than kept: it is
 * a pure function of the key, amount and txid, and kept it was a fifth of every open cob's
 * memory in `npm start` (docs/performance.md "Memory per open charge").
 */
export function pixCopiaECola(c: SimCob): string {
  return buildBrCode({
    key: c.key,
    merchantName: 'PIXFLOW SANDBOX',
    merchantCity: 'SAO PAULO',
    amountCents: c.amount,
    txid: c.txid,
    initiationMethod: '12',
  });
}

export interface SimRefund {
  id: string;
  e2eId: string;
  rtrId: string;
  amount: number;
  status: RefundStatus;
  description?: string;
  reason?: string;
  requestedAt: string;
  settledAt?: string;
}

export interface SimTransfer {
  id: string;
  batchId: string;
  idempotencyKey: string;
  amount: number;
  pixKey: string;
  pixKeyType: PixKeyType;
  description?: string;
  status: TransferStatus;
  reason?: string;
  createdAt: string;
  updatedAt?: string;
}

export interface SimKey {
  id: string;
  idempotencyKey: string;
  key: string;
  keyType: PixKeyType;
  status: PixKeyStatusAtAcquirer;
}

export type { InfractionStatus };

/** A defense the receiving side sent (POST /infractions/{id}/defense), kept once per idempotency key. */
export interface SimDefense {
  id: string;
  idempotencyKey: string;
  text: string;
  files: Array<{ name: string; mimeType: string; size: number }>;
  receivedAt: string;
}

/** How the simulated PSP answers a defense on its own: its analysis, a little after it arrived. */
export type SimAnalysis = 'AGREED' | 'DISAGREED';

export interface SimInfraction {
  id: string;
  e2eId: string;
  txid: string;
  amount: number;
  reason: string;
  details?: string;
  status: InfractionStatus;
  refund?: SimRefund;
  defense?: SimDefense;
  /** Scripted by the sandbox: decided this way once the defense arrives; unset, it waits to be told. */
  analysis?: SimAnalysis;
}

/** Thrown by control actions on unknown ids or impossible transitions (the /_sim routes answer 404/409). */
export class SimulatorStateError extends Error {
  constructor(
    message: string,
    readonly kind: 'unknown' | 'conflict',
  ) {
    super(message);
    this.name = 'SimulatorStateError';
  }
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export function randomAlnum(n: number): string {
  // 248 = 4 × 62: rejecting the top byte values keeps every character equally likely.
  let out = '';
  while (out.length < n) {
    for (const b of crypto.randomBytes(n * 2)) if (b < 248 && out.length < n) out += ALNUM[b % 62];
  }
  return out;
}

/** The simulator's ISPB (a made-up participant). */
const ISPB = '99999999';
/** SPI ids: a letter + ISPB + yyyyMMddHHmm + 11 alphanumerics = 32 characters. */
function spiId(prefix: 'E' | 'D'): string {
  return `${prefix}${ISPB}${new Date().toISOString().replace(/\D/g, '').slice(0, 12)}${randomAlnum(11)}`;
}

export function toPessoa(p: Party): { cpf?: string; cnpj?: string; nome: string } {
  return p.document.length === 11 ? { cpf: p.document, nome: p.name } : { cnpj: p.document, nome: p.name };
}

export const refundView = (r: SimRefund) => ({
  id: r.id,
  rtrId: r.rtrId,
  valor: centsToWire(r.amount),
  horario: { solicitacao: r.requestedAt, ...(r.settledAt ? { liquidacao: r.settledAt } : {}) },
  status: r.status,
  ...(r.description ? { descricao: r.description } : {}),
  ...(r.reason ? { motivo: r.reason } : {}),
});

export const cobView = (c: SimCob) => ({
  calendario: { criacao: c.createdAt, expiracao: c.expiresIn },
  txid: c.txid,
  revisao: c.revision,
  status: c.status,
  valor: { original: centsToWire(c.amount) },
  chave: c.key,
  ...(c.description ? { solicitacaoPagador: c.description } : {}),
  ...(c.debtor ? { devedor: c.debtor } : {}),
  pixCopiaECola: pixCopiaECola(c),
});

export const transferView = (t: SimTransfer) => ({
  id: t.id,
  batchId: t.batchId,
  idempotencyKey: t.idempotencyKey,
  valor: centsToWire(t.amount),
  chave: t.pixKey,
  tipoChave: t.pixKeyType,
  ...(t.description ? { descricao: t.description } : {}),
  status: t.status,
  ...(t.reason ? { motivo: t.reason } : {}),
  horario: { criacao: t.createdAt, ...(t.updatedAt ? { atualizacao: t.updatedAt } : {}) },
});

export const keyView = (k: SimKey) => ({ id: k.id, chave: k.key, tipoChave: k.keyType, status: k.status });

export interface PspOptions {
  callbacks: CallbackSender;
  transferDelayMs: number;
  /** A registered key turns ATIVA after this long, while autoComplete is on. */
  keyActivationDelayMs: number;
  autoComplete: boolean;
  /** Delay before a scripted analysis answers a defense. */
  defenseAnswerDelayMs: number;
  /** Delay before a devolução settles, when automatic. */
  refundDelayMs: number;
}

export class SimulatedPsp {
  readonly cobs = new Map<string, SimCob>();
  readonly refunds = new Map<string, SimRefund>();
  readonly transfers = new Map<string, SimTransfer>();
  readonly transferByKey = new Map<string, string>();
  readonly keys = new Map<string, SimKey>();
  readonly keyByIdempotencyKey = new Map<string, string>();
  readonly infractions = new Map<string, SimInfraction>();
  /** Every payment received, by e2eId: a cob's or cobv's, and a cobr's debit (`registerPayment`). */
  private readonly paymentIndex = new Map<string, PaidPix>();
  private readonly timers = new Set<NodeJS.Timeout>();
  autoSettleRefunds = true;

  constructor(private readonly opts: PspOptions) {}

  /** The payment of an end-to-end id, with the txid of the cob, cobv or cobr it paid. */
  payment(e2eId: string): PaidPix | undefined {
    return this.paymentIndex.get(e2eId);
  }

  /**
   * A payment made outside the cob routes (a cobr debited by the payer's PSP), so that devoluções
   * and MED infractions find it as they find a cob's (docs/api.md "Subscriptions").
   */
  registerPayment(txid: string, payment: SimPayment): void {
    this.paymentIndex.set(payment.e2eId, { txid, payment });
  }

  /** Full cob view (CobCompleta): the cob plus the pix received, each with its devoluções. */
  cobCompleta(c: SimCob) {
    return { ...cobView(c), pix: c.payments.map((p) => this.pixView(c.txid, p)) };
  }

  private pixView(txid: string, p: SimPayment) {
    const devolucoes = [...this.refunds.values()].filter((r) => r.e2eId === p.e2eId).map(refundView);
    return {
      endToEndId: p.e2eId,
      txid,
      valor: centsToWire(p.amount),
      horario: p.paidAt,
      pagador: toPessoa(p.payer),
      ...(devolucoes.length ? { devolucoes } : {}),
    };
  }

  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  // ---- payments --------------------------------------------------------------------------------

  /**
   * A payer pays the cob. Allowed on a removed or already paid cob on purpose: a payer racing the
   * removal, or paying twice, is what the service's late-payment refund path must handle.
   */
  payCob(txid: string, o: { payer?: Party; amount?: number; paidOn?: string } = {}): { endToEndId: string } {
    const cob = this.cobs.get(txid);
    if (!cob) throw new SimulatorStateError(`unknown cob ${txid}`, 'unknown');
    const { amount, paidAt } = this.paymentTerms(cob, o);
    const payment: SimPayment = {
      e2eId: spiId('E'),
      amount,
      paidAt,
      payer: o.payer ?? { name: 'Pagador Sandbox', document: '12345678909' },
    };
    cob.payments = [...cob.payments, payment];
    this.registerPayment(txid, payment);
    if (cob.status === 'ATIVA') cob.status = 'CONCLUIDA';
    const body: PixCallback = { pix: [this.pixView(txid, payment)] };
    this.opts.callbacks.send('/v1/acquirer/pix', body);
    return { endToEndId: payment.e2eId };
  }

  /**
   * What the payer pays and when: a cob's amount now; a cobv's amount due on `paidOn` (a São Paulo
   * date, default today; the payment is at noon that day), computed as the payer's bank would.
   */
  private paymentTerms(cob: SimCob, o: { amount?: number; paidOn?: string }): { amount: number; paidAt: string } {
    if (!cob.dueDate) return { amount: o.amount ?? cob.amount, paidAt: new Date().toISOString() };
    const day = o.paidOn ?? saoPauloDate(new Date());
    if (!payableOn(cob.dueDate, day))
      throw new SimulatorStateError(`cobv ${cob.txid} is past its validity`, 'conflict');
    const paidAt = o.paidOn ? new Date(startOfSaoPauloDay(day).getTime() + 12 * 3_600_000) : new Date();
    return { amount: o.amount ?? amountDueOn(cob.amount, cob.dueDate, day).total, paidAt: paidAt.toISOString() };
  }

  /** The PSP removes an unpaid cob itself (e.g. long expired). No callback: the BCB has none for it. */
  expireCob(txid: string): void {
    const cob = this.cobs.get(txid);
    if (!cob) throw new SimulatorStateError(`unknown cob ${txid}`, 'unknown');
    if (cob.status !== 'ATIVA') throw new SimulatorStateError(`cob ${txid} is ${cob.status}`, 'conflict');
    cob.status = 'REMOVIDA_PELO_PSP';
    cob.revision++;
  }

  // ---- devoluções ------------------------------------------------------------------------------

  /** Amount of a payment not yet refunded or being refunded. */
  refundable(e2eId: string): number {
    const p = this.paymentIndex.get(e2eId)?.payment;
    if (!p) return 0;
    const taken = [...this.refunds.values()]
      .filter((r) => r.e2eId === e2eId && r.status !== 'NAO_REALIZADO')
      .reduce((s, r) => s + r.amount, 0);
    return p.amount - taken;
  }

  createRefund(e2eId: string, id: string, amount: number, description?: string): SimRefund {
    const r: SimRefund = {
      id,
      e2eId,
      rtrId: spiId('D'),
      amount,
      status: 'EM_PROCESSAMENTO',
      description,
      requestedAt: new Date().toISOString(),
    };
    this.refunds.set(id, r);
    if (this.autoSettleRefunds) this.later(this.opts.refundDelayMs, () => this.settleRefund(id, 'DEVOLVIDO'));
    return r;
  }

  /**
   * A devolução settles. Announced through the pix callback (BCB style): the original pix with
   * this devolução in `devolucoes`.
   */
  settleRefund(id: string, outcome: DevolucaoOutcome, reason?: string): void {
    const r = this.refunds.get(id);
    if (!r) throw new SimulatorStateError(`unknown refund ${id}`, 'unknown');
    if (r.status !== 'EM_PROCESSAMENTO') return; // settling twice is a no-op, like a late duplicate
    r.status = outcome;
    r.settledAt = new Date().toISOString();
    if (outcome === 'NAO_REALIZADO') r.reason = reason ?? 'Devolução não realizada pelo PSP do pagador';
    const found = this.paymentIndex.get(r.e2eId);
    if (!found) return;
    const body: PixCallback = {
      pix: [{ ...this.pixView(found.txid, found.payment), devolucoes: [refundView(r)] }],
    };
    this.opts.callbacks.send('/v1/acquirer/pix', body);
    // MED: the receiving side returns an accepted infraction's funds by a devolução of the payment;
    // once one settles, the infraction is REFUNDED with it.
    if (outcome !== 'DEVOLVIDO') return;
    for (const inf of this.infractions.values()) {
      if (inf.e2eId !== r.e2eId || inf.status !== 'ACCEPTED') continue;
      inf.refund = r;
      inf.status = 'REFUNDED';
      this.announceInfraction(inf);
    }
  }

  // ---- transfers -------------------------------------------------------------------------------

  createTransfer(t: Omit<SimTransfer, 'id' | 'batchId' | 'status' | 'createdAt'>): SimTransfer {
    const transfer: SimTransfer = {
      ...t,
      id: `tr${randomAlnum(24)}`,
      batchId: `bt${randomAlnum(16)}`,
      status: 'PROCESSING',
      createdAt: new Date().toISOString(),
    };
    this.transfers.set(transfer.id, transfer);
    this.transferByKey.set(t.idempotencyKey, transfer.id);
    if (this.opts.autoComplete) {
      this.later(this.opts.transferDelayMs, () => {
        if (this.transfers.get(transfer.id)?.status === 'PROCESSING') this.finishTransfer(transfer.id, 'COMPLETED');
      });
    }
    return transfer;
  }

  /** PROCESSING → COMPLETED | REJECTED; COMPLETED → RETURNED (the destination bank sent it back). */
  finishTransfer(id: string, status: Exclude<TransferStatus, 'PROCESSING'>, reason?: string): void {
    const t = this.transfers.get(id);
    if (!t) throw new SimulatorStateError(`unknown transfer ${id}`, 'unknown');
    const from: TransferStatus = status === 'RETURNED' ? 'COMPLETED' : 'PROCESSING';
    if (t.status !== from) throw new SimulatorStateError(`transfer ${id} is ${t.status}, not ${from}`, 'conflict');
    t.status = status;
    t.updatedAt = new Date().toISOString();
    if (reason) t.reason = reason;
    const body: TransferCallback = { transfer: transferView(t) };
    this.opts.callbacks.send('/v1/acquirer/transfers', body);
  }

  // ---- keys ------------------------------------------------------------------------------------

  registerKey(idempotencyKey: string, keyType: PixKeyType, key: string): SimKey {
    const k: SimKey = { id: `key${randomAlnum(24)}`, idempotencyKey, key, keyType, status: 'PENDENTE' };
    this.keys.set(k.id, k);
    this.keyByIdempotencyKey.set(idempotencyKey, k.id);
    // A real PSP activates the key once the DICT confirms it; the simulator after a short delay.
    if (this.opts.autoComplete) {
      this.later(this.opts.keyActivationDelayMs, () => {
        if (this.keys.get(k.id)?.status === 'PENDENTE') this.setKeyStatus(k.id, 'ATIVA');
      });
    }
    return k;
  }

  setKeyStatus(keyId: string, status: PixKeyStatusAtAcquirer): void {
    const k = this.keys.get(keyId);
    if (!k) throw new SimulatorStateError(`unknown key ${keyId}`, 'unknown');
    k.status = status;
    const body: PixKeyCallback = { pixKey: { ...keyView(k), horario: new Date().toISOString() } };
    this.opts.callbacks.send('/v1/acquirer/pix-keys', body);
  }

  // ---- MED infractions -------------------------------------------------------------------------

  raiseInfraction(
    e2eId: string,
    reason?: string,
    opts: { details?: string; analysis?: SimAnalysis } = {},
  ): { infractionId: string } {
    const found = this.paymentIndex.get(e2eId);
    if (!found) throw new SimulatorStateError(`unknown payment ${e2eId}`, 'unknown');
    const inf: SimInfraction = {
      id: `inf${randomAlnum(24)}`,
      e2eId,
      txid: found.txid,
      amount: found.payment.amount,
      reason: reason ?? 'Suspeita de fraude',
      ...(opts.details ? { details: opts.details } : {}),
      ...(opts.analysis ? { analysis: opts.analysis } : {}),
      status: 'OPEN',
    };
    this.infractions.set(inf.id, inf);
    this.announceInfraction(inf);
    return { infractionId: inf.id };
  }

  /**
   * OPEN → ACCEPTED (the payer is to be refunded: the receiver asks for a devolução of the payment,
   * and when it settles the infraction is REFUNDED — see settleRefund; `refundInfraction` is the PSP
   * returning the funds itself) or OPEN → REJECTED.
   */
  decideInfraction(id: string, status: 'ACCEPTED' | 'REJECTED'): void {
    const inf = this.infractions.get(id);
    if (!inf) throw new SimulatorStateError(`unknown infraction ${id}`, 'unknown');
    if (inf.status !== 'OPEN') throw new SimulatorStateError(`infraction ${id} is ${inf.status}`, 'conflict');
    inf.status = status;
    this.announceInfraction(inf);
  }

  /**
   * The receiving side's defense, once per idempotency key (a replay is the same defense). Taken
   * while the infraction is OPEN; a scripted analysis then decides it shortly after.
   */
  receiveDefense(id: string, d: Omit<SimDefense, 'id' | 'receivedAt'>): { defense: SimDefense; replay: boolean } {
    const inf = this.infractions.get(id);
    if (!inf) throw new SimulatorStateError(`unknown infraction ${id}`, 'unknown');
    if (inf.defense) {
      if (inf.defense.idempotencyKey !== d.idempotencyKey || inf.defense.text !== d.text)
        throw new SimulatorStateError(`infraction ${id} already has a defense`, 'conflict');
      return { defense: inf.defense, replay: true };
    }
    if (inf.status !== 'OPEN') throw new SimulatorStateError(`infraction ${id} is ${inf.status}`, 'conflict');
    inf.defense = { ...d, id: `def${randomAlnum(24)}`, receivedAt: new Date().toISOString() };
    const analysis = inf.analysis;
    if (analysis) {
      this.later(this.opts.defenseAnswerDelayMs, () => {
        if (inf.status === 'OPEN') this.decideInfraction(id, analysis === 'AGREED' ? 'ACCEPTED' : 'REJECTED');
      });
    }
    return { defense: inf.defense, replay: false };
  }

  /** ACCEPTED → REFUNDED: the MED devolução to the payer settled. */
  refundInfraction(id: string): void {
    const inf = this.infractions.get(id);
    if (!inf) throw new SimulatorStateError(`unknown infraction ${id}`, 'unknown');
    if (inf.status !== 'ACCEPTED') throw new SimulatorStateError(`infraction ${id} is ${inf.status}`, 'conflict');
    const amount = Math.min(inf.amount, this.refundable(inf.e2eId));
    const now = new Date().toISOString();
    const refund: SimRefund = {
      id: `med${randomAlnum(20)}`,
      e2eId: inf.e2eId,
      rtrId: spiId('D'),
      amount,
      status: 'DEVOLVIDO',
      reason: 'MED',
      requestedAt: now,
      settledAt: now,
    };
    if (amount > 0) this.refunds.set(refund.id, refund);
    inf.refund = refund;
    inf.status = 'REFUNDED';
    this.announceInfraction(inf);
  }

  private announceInfraction(inf: SimInfraction): void {
    const body: InfractionCallback = {
      infraction: {
        id: inf.id,
        endToEndId: inf.e2eId,
        txid: inf.txid,
        valor: centsToWire(inf.amount),
        motivo: inf.reason,
        ...(inf.details ? { detalhes: inf.details } : {}),
        status: inf.status,
        ...(inf.refund ? { devolucao: refundView(inf.refund) } : {}),
        horario: new Date().toISOString(),
      },
    };
    this.opts.callbacks.send('/v1/acquirer/infractions', body);
  }
}
