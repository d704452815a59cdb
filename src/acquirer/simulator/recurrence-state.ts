/**
 * The simulated PSP's Pix Automático side: payload locations (`locrec`), recorrências (`rec`),
 * confirmation requests (`solicrec`) and recurring charges (`cobr`) with their debit attempts.
 * What happens "on the payer's side" — approval, refusal, cancellation, each debit paid or
 * rejected — is played here and announced by the signed `/v1/acquirer/rec` and `/v1/acquirer/cobr`
 * callbacks (src/acquirer/README.md "Recurrences").
 */
import { encodeField, encodeWithCrc } from '../../pix/brcode';
import type {
  CobRAttemptStatus,
  CobRStatus,
  RecPeriodicity,
  RecRetryPolicy,
  RecStatus,
  SolicRecStatus,
} from '../../contracts/statuses';
import { centsToWire } from '../money-wire';
import type { CobRCallback, RecCallback } from '../wire';
import type { CallbackSender } from './callbacks';
import { randomAlnum, SimulatorStateError, type SimulatedPsp } from './psp';

/** The simulator's ISPB (a made-up participant), as in psp.ts. */
const ISPB = '99999999';
const PIX_GUI = 'br.gov.bcb.pix';
const DAY_MS = 86_400_000;

type Pessoa = { cpf?: string; cnpj?: string; nome: string };
type Stamp<S> = { status: S; data: string };

export interface SimLocRec {
  id: number;
  location: string;
  createdAt: string;
  idRec?: string;
}

export interface SimRec {
  idRec: string;
  status: RecStatus;
  contract: string;
  object?: string;
  debtor: Pessoa;
  firstDate: string;
  endDate?: string;
  periodicity: RecPeriodicity;
  amount?: number;
  minimumAmount?: number;
  retryPolicy: RecRetryPolicy;
  locId?: number;
  history: Array<Stamp<RecStatus>>;
  journey?: 'JORNADA_1' | 'JORNADA_2';
  ending?: { rejeicao?: { codigo: string; descricao: string }; cancelamento?: CancelInfo };
  /** Debits still to reject (control `failNextDebits`). */
  debitsToFail: number;
  /** Due dates whose first (AGND) debit is rejected (control `failFirstDebitDue`). */
  failDueDates?: Set<string>;
  /** The request body, to tell a replay (same contrato, same body) from a reuse. */
  requestKey: string;
}

interface CancelInfo {
  solicitante: string;
  codigo: string;
  descricao: string;
}

export interface SimSolicRec {
  id: string;
  idRec: string;
  expiresAt: string;
  destination: Record<string, string>;
  status: SolicRecStatus;
  history: Array<Stamp<SolicRecStatus>>;
}

export interface SimAttempt {
  settlementDate: string;
  type: 'AGND' | 'NTAG';
  status: CobRAttemptStatus;
  e2eId: string;
  history: Array<Stamp<CobRAttemptStatus>>;
  rejection?: { codigo: string; descricao: string };
}

export interface SimCobR {
  txid: string;
  idRec: string;
  status: CobRStatus;
  amount: number;
  dueDate: string;
  createdAt: string;
  description?: string;
  receiver: Record<string, string>;
  attempts: SimAttempt[];
  history: Array<Stamp<CobRStatus>>;
  paid?: { e2eId: string; paidAt: string };
  requestKey: string;
}

export interface RecurrenceOptions {
  callbacks: CallbackSender;
  /** A debit attempt is played this long after it is scheduled, unless `autoDebit` is off. */
  debitDelayMs: number;
  autoDebit: boolean;
  /** BCB: a cobr is created from 2 to 10 days before its date; a skipped-time stack widens the bound. */
  cobrLeadDays: { min: number; max: number };
  /** Where a paid debit is registered, so devoluções and MED infractions find it as a cob's payment. */
  payments: Pick<SimulatedPsp, 'registerPayment'>;
}

const nowIso = (): string => new Date().toISOString();
const today = (): string => nowIso().slice(0, 10);
const dayDiff = (from: string, to: string): number => Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);
const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

function spiE2e(): string {
  return `E${ISPB}${nowIso().replace(/\D/g, '').slice(0, 12)}${randomAlnum(11)}`;
}

export class SimulatedRecurrences {
  readonly locations = new Map<number, SimLocRec>();
  readonly recs = new Map<string, SimRec>();
  readonly recByContract = new Map<string, string>();
  readonly solicRecs = new Map<string, SimSolicRec>();
  readonly cobrs = new Map<string, SimCobR>();
  private nextLocId = 1;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(readonly opts: RecurrenceOptions) {}

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  createLocation(host: string): SimLocRec {
    const id = this.nextLocId++;
    const loc = { id, location: `${host}/qr/v2/rec/${randomAlnum(32).toLowerCase()}`, createdAt: nowIso() };
    this.locations.set(id, loc);
    return loc;
  }

  /** A new rec, CRIADA; its id says whether it permits retries (`RR…`) or not (`RN…`). */
  createRec(r: Omit<SimRec, 'idRec' | 'status' | 'history' | 'debitsToFail'>): SimRec {
    const flag = r.retryPolicy === 'PERMITE_3R_7D' ? 'R' : 'N';
    const idRec = `R${flag}${ISPB}${today().replace(/-/g, '')}${randomAlnum(11)}`;
    const rec: SimRec = {
      ...r,
      idRec,
      status: 'CRIADA',
      history: [{ status: 'CRIADA', data: nowIso() }],
      debitsToFail: 0,
    };
    this.recs.set(idRec, rec);
    this.recByContract.set(r.contract, idRec);
    if (r.locId !== undefined) {
      const loc = this.locations.get(r.locId);
      if (loc) loc.idRec = idRec;
    }
    return rec;
  }

  rec(idRec: string): SimRec {
    const rec = this.recs.get(idRec);
    if (!rec) throw new SimulatorStateError(`unknown rec ${idRec}`, 'unknown');
    return rec;
  }

  cobr(txid: string): SimCobR {
    const c = this.cobrs.get(txid);
    if (!c) throw new SimulatorStateError(`unknown cobr ${txid}`, 'unknown');
    return c;
  }

  // ---- the payer's side -------------------------------------------------------------------------

  approve(idRec: string): void {
    const rec = this.pending(idRec);
    rec.journey = rec.locId !== undefined ? 'JORNADA_2' : 'JORNADA_1';
    this.setRec(rec, 'APROVADA');
  }

  refuse(idRec: string, reason = 'Recorrência recusada pelo usuário pagador'): void {
    const rec = this.pending(idRec);
    rec.ending = { rejeicao: { codigo: 'AP13', descricao: reason } };
    this.setRec(rec, 'REJEITADA');
  }

  /** The payer (USUARIO_PAGADOR) or we (USUARIO_RECEBEDOR) cancel; open cobrs go with it. */
  cancel(idRec: string, by: 'USUARIO_PAGADOR' | 'USUARIO_RECEBEDOR', reason?: string): SimRec {
    const rec = this.rec(idRec);
    if (rec.status === 'CANCELADA') return rec;
    if (rec.status !== 'CRIADA' && rec.status !== 'APROVADA')
      throw new SimulatorStateError(`rec ${idRec} is ${rec.status}`, 'conflict');
    const payer = by === 'USUARIO_PAGADOR';
    rec.ending = {
      cancelamento: {
        solicitante: by,
        codigo: payer ? 'SLDB' : 'SLCR',
        descricao: reason ?? (payer ? 'Cancelada pelo usuário pagador' : 'Cancelada pelo usuário recebedor'),
      },
    };
    this.setRec(rec, 'CANCELADA');
    for (const c of this.cobrs.values()) if (c.idRec === idRec && !this.closed(c)) this.cancelCobR(c);
    return rec;
  }

  failNextDebits(idRec: string, times: number): void {
    this.rec(idRec).debitsToFail = times;
  }

  failFirstDebitDue(idRec: string, dueDate: string): void {
    const rec = this.rec(idRec);
    (rec.failDueDates ??= new Set()).add(dueDate);
  }

  private pending(idRec: string): SimRec {
    const rec = this.rec(idRec);
    if (rec.status !== 'CRIADA') throw new SimulatorStateError(`rec ${idRec} is ${rec.status}`, 'conflict');
    return rec;
  }

  private setRec(rec: SimRec, status: RecStatus): void {
    rec.status = status;
    rec.history.push({ status, data: nowIso() });
    const body: RecCallback = {
      recs: [
        {
          idRec: rec.idRec,
          status,
          atualizacao: rec.history,
          ...(rec.ending ? { encerramento: rec.ending } : {}),
          ...(rec.journey ? { ativacao: { tipoJornada: rec.journey } } : {}),
        },
      ],
    };
    this.opts.callbacks.send('/v1/acquirer/rec', body);
  }

  // ---- cobr ---------------------------------------------------------------------------------------

  /** Why this cobr cannot be created for the rec, or undefined (BCB rules the simulator plays). */
  cobrRefusal(rec: SimRec, dueDate: string, amount: number): { propriedade: string; razao: string } | undefined {
    if (rec.status !== 'APROVADA')
      return { propriedade: 'cobr.idRec', razao: `A recorrência está ${rec.status}, não APROVADA.` };
    const lead = dayDiff(today(), dueDate);
    const { min, max } = this.opts.cobrLeadDays;
    if (lead < min || lead > max)
      return {
        propriedade: 'cobr.calendario.dataDeVencimento',
        razao: `A cobrança deve ser criada de ${min} a ${max} dias antes do vencimento.`,
      };
    if (dueDate < rec.firstDate || (rec.endDate !== undefined && dueDate > rec.endDate))
      return { propriedade: 'cobr.calendario.dataDeVencimento', razao: 'Fora da vigência da recorrência.' };
    if (rec.amount !== undefined && amount !== rec.amount)
      return { propriedade: 'cobr.valor.original', razao: 'Difere do valor fixo da recorrência.' };
    if (rec.minimumAmount !== undefined && amount < rec.minimumAmount)
      return { propriedade: 'cobr.valor.original', razao: 'Abaixo do valor mínimo da recorrência.' };
    return undefined;
  }

  createCobR(c: Omit<SimCobR, 'status' | 'attempts' | 'history' | 'createdAt'>): SimCobR {
    const cobr: SimCobR = {
      ...c,
      status: 'CRIADA',
      createdAt: today(),
      attempts: [],
      history: [{ status: 'CRIADA', data: nowIso() }],
    };
    this.cobrs.set(c.txid, cobr);
    // The PSP accepted it: ATIVA, its first debit scheduled for the due date.
    cobr.status = 'ATIVA';
    cobr.history.push({ status: 'ATIVA', data: nowIso() });
    this.schedule(cobr, c.dueDate, 'AGND');
    return cobr;
  }

  /** Why a retry on `date` is refused, or undefined: PERMITE_3R_7D, after a rejected attempt, ≤ 3, ≤ 7 days. */
  retryRefusal(cobr: SimCobR, date: string): string | undefined {
    const rec = this.rec(cobr.idRec);
    const last = cobr.attempts.at(-1);
    if (rec.retryPolicy !== 'PERMITE_3R_7D') return 'A recorrência não permite retentativas.';
    if (cobr.status !== 'ATIVA') return `A cobrança está ${cobr.status}.`;
    if (!last || last.status !== 'REJEITADA') return 'Não há tentativa rejeitada a repetir.';
    if (cobr.attempts.length > 3) return 'As 3 retentativas já foram usadas.';
    if (date <= last.settlementDate) return 'A data deve ser posterior à da última tentativa.';
    if (dayDiff(cobr.dueDate, date) > 7) return 'A retentativa deve ocorrer até 7 dias após o vencimento.';
    return undefined;
  }

  retry(cobr: SimCobR, date: string): void {
    this.schedule(cobr, date, 'NTAG');
  }

  /** The payer's PSP debits (or fails to debit) the open attempt: control or the automatic delay. */
  settleAttempt(txid: string, outcome: 'PAGA' | 'REJEITADA'): void {
    const cobr = this.cobr(txid);
    const attempt = cobr.attempts.at(-1);
    if (cobr.status !== 'ATIVA' || !attempt || attempt.status !== 'AGENDADA')
      throw new SimulatorStateError(`cobr ${txid} has no scheduled attempt`, 'conflict');
    attempt.status = outcome;
    attempt.history.push({ status: outcome, data: nowIso() });
    if (outcome === 'PAGA') {
      this.paid(cobr, attempt);
      return;
    }
    attempt.rejection = { codigo: 'AM02', descricao: 'Saldo insuficiente na conta do usuário pagador (simulado)' };
    const rec = this.rec(cobr.idRec);
    if (rec.retryPolicy === 'PERMITE_3R_7D' && cobr.attempts.length <= 3) this.notifyCobR(cobr);
    else this.setCobR(cobr, 'REJEITADA');
  }

  /** The debit settled: the cobr CONCLUIDA, its pix in the PSP's index (devoluções, MED find it). */
  private paid(cobr: SimCobR, attempt: SimAttempt): void {
    cobr.paid = { e2eId: attempt.e2eId, paidAt: nowIso() };
    const { nome, cpf, cnpj } = this.rec(cobr.idRec).debtor;
    this.opts.payments.registerPayment(cobr.txid, {
      e2eId: attempt.e2eId,
      amount: cobr.amount,
      paidAt: cobr.paid.paidAt,
      payer: { name: nome, document: cpf ?? cnpj ?? '' },
    });
    this.setCobR(cobr, 'CONCLUIDA');
  }

  cancelCobR(cobr: SimCobR): void {
    if (cobr.status === 'CANCELADA') return;
    for (const a of cobr.attempts)
      if (a.status === 'AGENDADA' || a.status === 'SOLICITADA') {
        a.status = 'CANCELADA';
        a.history.push({ status: 'CANCELADA', data: nowIso() });
      }
    this.setCobR(cobr, 'CANCELADA');
  }

  closed(c: SimCobR): boolean {
    return c.status === 'CONCLUIDA' || c.status === 'CANCELADA' || c.status === 'REJEITADA' || c.status === 'EXPIRADA';
  }

  private schedule(cobr: SimCobR, date: string, type: 'AGND' | 'NTAG'): void {
    const at = nowIso();
    cobr.attempts.push({
      settlementDate: date,
      type,
      status: 'AGENDADA',
      e2eId: spiE2e(),
      history: [
        { status: 'SOLICITADA', data: at },
        { status: 'AGENDADA', data: at },
      ],
    });
    if (!this.opts.autoDebit) return;
    this.later(this.opts.debitDelayMs, () => {
      const rec = this.recs.get(cobr.idRec);
      if (!rec || cobr.status !== 'ATIVA' || cobr.attempts.at(-1)?.status !== 'AGENDADA') return;
      const onDate = type === 'AGND' && rec.failDueDates?.has(cobr.dueDate) === true;
      const fail = onDate || rec.debitsToFail > 0;
      if (fail && !onDate) rec.debitsToFail--;
      this.settleAttempt(cobr.txid, fail ? 'REJEITADA' : 'PAGA');
    });
  }

  private setCobR(cobr: SimCobR, status: CobRStatus): void {
    cobr.status = status;
    cobr.history.push({ status, data: nowIso() });
    this.notifyCobR(cobr);
  }

  private notifyCobR(cobr: SimCobR): void {
    const v = cobRView(cobr, this.rec(cobr.idRec));
    const body: CobRCallback = {
      cobsr: [
        {
          idRec: v.idRec,
          txid: v.txid,
          status: v.status,
          atualizacao: v.atualizacao,
          tentativas: v.tentativas,
          ...(v.pix ? { pix: v.pix } : {}),
        },
      ],
    };
    this.opts.callbacks.send('/v1/acquirer/cobr', body);
  }
}

// ---- views (BCB shapes) -------------------------------------------------------------------------

const RECEIVER = { cnpj: '11222333000181', nome: 'PIXFLOW SANDBOX' };

export function locRecView(l: SimLocRec) {
  return { id: l.id, location: l.location, criacao: l.createdAt, ...(l.idRec ? { idRec: l.idRec } : {}) };
}

/** The authorisation QR of JORNADA_2: a BR Code whose field 80 carries the rec's location. */
export function recQr(location: string): string {
  return encodeWithCrc([
    { id: '00', value: '01' },
    { id: '26', value: encodeField('00', PIX_GUI) },
    { id: '52', value: '0000' },
    { id: '53', value: '986' },
    { id: '58', value: 'BR' },
    { id: '59', value: 'PIXFLOW SANDBOX' },
    { id: '60', value: 'SAO PAULO' },
    { id: '62', value: encodeField('05', '***') },
    { id: '80', value: encodeField('00', PIX_GUI) + encodeField('25', location) },
  ]);
}

export function recView(r: SimRec, loc: SimLocRec | undefined, complete: boolean) {
  const valor =
    r.amount !== undefined
      ? { valorRec: centsToWire(r.amount) }
      : r.minimumAmount !== undefined
        ? { valorMinimoRecebedor: centsToWire(r.minimumAmount) }
        : undefined;
  const open = r.status === 'CRIADA' || r.status === 'APROVADA';
  return {
    idRec: r.idRec,
    vinculo: { contrato: r.contract, devedor: r.debtor, ...(r.object ? { objeto: r.object } : {}) },
    calendario: {
      dataInicial: r.firstDate,
      periodicidade: r.periodicity,
      ...(r.endDate ? { dataFinal: r.endDate } : {}),
    },
    ...(valor ? { valor } : {}),
    politicaRetentativa: r.retryPolicy,
    recebedor: RECEIVER,
    status: r.status,
    ...(loc ? { loc: locRecView(loc) } : {}),
    atualizacao: r.history,
    ...(r.ending ? { encerramento: r.ending } : {}),
    ativacao: r.journey ? { tipoJornada: r.journey } : { tipoJornada: 'AGUARDANDO_DEFINICAO' },
    ...(complete ? { pagador: { ispbParticipante: ISPB, ...cpfOrCnpj(r.debtor) } } : {}),
    ...(complete && loc && open ? { dadosQR: { jornada: 'JORNADA_2', pixCopiaECola: recQr(loc.location) } } : {}),
  };
}

function cpfOrCnpj(p: Pessoa): { cpf: string } | { cnpj: string } {
  return p.cpf ? { cpf: p.cpf } : { cnpj: p.cnpj ?? '' };
}

export function solicRecView(s: SimSolicRec, rec: SimRec) {
  return {
    idSolicRec: s.id,
    idRec: s.idRec,
    calendario: { dataExpiracaoSolicitacao: s.expiresAt },
    destinatario: s.destination,
    status: s.status,
    atualizacao: s.history,
    recPayload: {
      idRec: rec.idRec,
      vinculo: { contrato: rec.contract, devedor: rec.debtor, ...(rec.object ? { objeto: rec.object } : {}) },
      calendario: { dataInicial: rec.firstDate, periodicidade: rec.periodicity },
      recebedor: { ...RECEIVER, ispbParticipante: ISPB },
      politicaRetentativa: rec.retryPolicy,
      atualizacao: rec.history,
    },
  };
}

export function cobRView(c: SimCobR, rec: SimRec) {
  return {
    idRec: c.idRec,
    txid: c.txid,
    ...(c.description ? { infoAdicional: c.description } : {}),
    calendario: { criacao: c.createdAt, dataDeVencimento: c.dueDate },
    valor: { original: centsToWire(c.amount) },
    status: c.status,
    politicaRetentativa: rec.retryPolicy,
    ajusteDiaUtil: false,
    recebedor: { ...c.receiver, cnpj: RECEIVER.cnpj, nome: RECEIVER.nome },
    atualizacao: c.history,
    tentativas: c.attempts.map((a) => ({
      dataLiquidacao: a.settlementDate,
      tipo: a.type,
      status: a.status,
      endToEndId: a.e2eId,
      atualizacao: a.history,
      ...(a.rejection ? { rejeicao: a.rejection } : {}),
    })),
    ...(c.paid
      ? { pix: [{ endToEndId: c.paid.e2eId, txid: c.txid, valor: centsToWire(c.amount), horario: c.paid.paidAt }] }
      : {}),
  };
}

export { addDays };
