/**
 * The protocol's JSON shapes, defined once: the client checks what it sends (a bad request is
 * refused before it leaves, as INVALID_REQUEST) and what it receives (INVALID_RESPONSE), and the
 * simulator validates requests with the same schemas (400 with BCB problem details). For cob,
 * pix and devolução they are the subset of the BCB API Pix v2.9.0 schemas this service uses;
 * tests check both sides against the published OpenAPI document itself.
 *
 * Response schemas are not strict: a PSP may add fields, and we ignore what we do not use.
 */
import { DEFENSE_FILE_TYPES, INFRACTION_STATUSES, TRANSFER_STATUSES } from '../contracts/statuses';
import { z } from 'zod';
import { PIX_KEY_TYPES } from '../pix/pix-key';
import { ACQUIRER_PIX_KEY_STATUSES, COB_STATUSES, DEVOLUCAO_STATUSES } from '../contracts/statuses';
import {
  COBR_ATTEMPT_STATUSES,
  COBR_STATUSES,
  REC_PERIODICITIES,
  REC_RETRY_POLICIES,
  REC_STATUSES,
  SOLICREC_STATUSES,
} from '../contracts/statuses';
import { centsToWire, wireToCents } from './money-wire';
import type { PixReceived } from './types';
import type { PaymentNotice } from '../../workflows/charge-types';

export const WIRE_AMOUNT = /^\d{1,10}\.\d{2}$/;
export const TXID = /^[a-zA-Z0-9]{26,35}$/;
export const END_TO_END_ID = /^[a-zA-Z0-9]{32}$/;
export const REFUND_ID = /^[a-zA-Z0-9]{1,35}$/;
/** Our ids in paths and the idempotency header: ours are `wd_<ulid>`-like; leave room, refuse oddities. */
export const OPAQUE_ID = /^[A-Za-z0-9_-]{1,64}$/;

const amount = z.string().regex(WIRE_AMOUNT, 'must be a decimal amount like 12.34');
const positiveAmount = amount.refine((v) => /[1-9]/.test(v), 'must be greater than 0.00');

/** BCB PessoaFisica | PessoaJuridica: a name and exactly one of cpf / cnpj. */
export const pessoa = z
  .object({
    cpf: z
      .string()
      .regex(/^\d{11}$/)
      .optional(),
    cnpj: z
      .string()
      .regex(/^[0-9A-Z]{14}$/)
      .optional(),
    nome: z.string().min(1).max(200),
  })
  .refine((p) => (p.cpf === undefined) !== (p.cnpj === undefined), 'exactly one of cpf or cnpj');

// ---- requests -------------------------------------------------------------------------------

/** PUT /cob/{txid} body (CobSolicitada). */
export const cobSolicitada = z.object({
  calendario: z.object({ expiracao: z.number().int().min(1).max(2_147_483_647).optional() }),
  valor: z.object({ original: positiveAmount }),
  chave: z.string().min(1).max(77),
  solicitacaoPagador: z.string().max(140).optional(),
  devedor: pessoa.optional(),
});
export type CobSolicitada = z.infer<typeof cobSolicitada>;

/** A calendar date `YYYY-MM-DD` that exists (BCB `format: date`). */
export const calendarDate = z.iso.date();

/** BCB CobVValor `multa`/`juros`/`abatimento`: a modality and a decimal value or percentage. */
const modalidade = (max: number) => z.int().min(1).max(max);
const valorPerc = z.object({ valorPerc: amount });

/**
 * BCB CobVValor: the subset this service sends (docs/api.md "Due-date charges"): fine fixed (1) or
 * percent (2); interest per day in value (1) or percent per month (3), calendar days; abatement
 * fixed (1) or percent (2); discount fixed (1) or percent (2) until up to three dates.
 */
export const cobvValor = z.object({
  original: positiveAmount,
  multa: valorPerc.extend({ modalidade: modalidade(2) }).optional(),
  juros: valorPerc.extend({ modalidade: z.union([z.literal(1), z.literal(3)]) }).optional(),
  abatimento: valorPerc.extend({ modalidade: modalidade(2) }).optional(),
  desconto: z
    .object({
      modalidade: z.union([z.literal(1), z.literal(2)]),
      descontoDataFixa: z
        .array(z.object({ data: calendarDate, valorPerc: amount }))
        .min(1)
        .max(3),
    })
    .optional(),
});
export type CobvValor = z.infer<typeof cobvValor>;

/** PUT /cobv/{txid} body (CobVSolicitada): the payer (`devedor`) is required. */
export const cobvSolicitada = z.object({
  calendario: z.object({
    dataDeVencimento: calendarDate,
    validadeAposVencimento: z.int().min(0).max(2_147_483_647).optional(),
  }),
  devedor: pessoa,
  valor: cobvValor,
  chave: z.string().min(1).max(77),
  solicitacaoPagador: z.string().max(140).optional(),
});
export type CobvSolicitada = z.infer<typeof cobvSolicitada>;

/** PUT /lotecobv/{id} body: a description and the cobvs, each with its txid. */
export const loteCobvSolicitado = z.object({
  descricao: z.string().min(1).max(140),
  cobsv: z
    .array(cobvSolicitada.extend({ txid: z.string().regex(TXID) }))
    .min(1)
    .max(1_000),
});
export type LoteCobvSolicitado = z.infer<typeof loteCobvSolicitado>;

/** PATCH /cob/{txid} body (CobRevisada): this protocol only uses the removal. */
export const cobRevisada = z.strictObject({ status: z.literal('REMOVIDA_PELO_USUARIO_RECEBEDOR') });

/** PUT /pix/{e2eid}/devolucao/{id} body (DevolucaoSolicitada). */
export const devolucaoSolicitada = z.object({
  valor: positiveAmount,
  natureza: z.literal('ORIGINAL').optional(),
  descricao: z.string().max(140).optional(),
});
export type DevolucaoSolicitada = z.infer<typeof devolucaoSolicitada>;

/** POST /transfers body (not BCB: our payout API in the same style). */
export const transferSolicitada = z.object({
  valor: positiveAmount,
  chave: z.string().min(1).max(77),
  tipoChave: z.enum(PIX_KEY_TYPES),
  descricao: z.string().max(140).optional(),
});
export type TransferSolicitada = z.infer<typeof transferSolicitada>;

/** POST /keys body. */
export const chaveSolicitada = z.object({ chave: z.string().min(1).max(77), tipoChave: z.enum(PIX_KEY_TYPES) });

// ---- responses ------------------------------------------------------------------------------

export const tokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string(),
  expires_in: z.number().positive(),
});

export const devolucao = z.object({
  id: z.string().regex(REFUND_ID),
  rtrId: z.string().regex(END_TO_END_ID),
  valor: amount,
  horario: z.object({ solicitacao: z.string().optional(), liquidacao: z.string().optional() }),
  status: z.enum(DEVOLUCAO_STATUSES),
  descricao: z.string().optional(),
  motivo: z.string().optional(),
});
export type DevolucaoWire = z.infer<typeof devolucao>;

/** BCB `Pix` (a payment received), plus `pagador`, which PSPs commonly add. */
export const pix = z.object({
  endToEndId: z.string().regex(END_TO_END_ID),
  txid: z.string().optional(),
  valor: amount,
  horario: z.string(),
  pagador: pessoa.optional(),
  infoPagador: z.string().optional(),
  devolucoes: z.array(devolucao).optional(),
});
export type PixWire = z.infer<typeof pix>;

/** What a cob and a cobv share; they differ only in `calendario`. */
const chargeBase = z.object({
  txid: z.string(),
  revisao: z.number().int().min(0),
  status: z.enum(COB_STATUSES),
  valor: z.object({ original: amount }),
  chave: z.string(),
  pixCopiaECola: z.string().min(1),
  location: z.string().optional(),
  pix: z.array(pix).optional(),
});

/** CobGerada / CobCompleta. `pixCopiaECola` is optional at the BCB; this service needs it. */
export const cob = chargeBase.extend({
  calendario: z.object({ criacao: z.string(), expiracao: z.number().int() }),
});
export type CobWire = z.infer<typeof cob>;

/** CobVGerada / CobVCompleta: what this service reads of a cobv. */
export const cobv = chargeBase.extend({
  calendario: z.object({
    criacao: z.string(),
    dataDeVencimento: calendarDate,
    validadeAposVencimento: z.int(),
  }),
});
export type CobvWire = z.infer<typeof cobv>;

/** GET /lotecobv/{id} (LoteCobVConsultado): each request's outcome. */
export const loteCobv = z.object({
  id: z.int(),
  descricao: z.string(),
  criacao: z.string(),
  cobsv: z.array(
    z.object({
      txid: z.string(),
      status: z.enum(['EM_PROCESSAMENTO', 'CRIADA', 'NEGADA']),
      problema: z
        .object({
          title: z.string().optional(),
          detail: z.string().optional(),
          violacoes: z.array(z.object({ razao: z.string().optional(), propriedade: z.string().optional() })).optional(),
        })
        .optional(),
    }),
  ),
});
export type LoteCobvWire = z.infer<typeof loteCobv>;

export const transfer = z.object({
  id: z.string().min(1),
  batchId: z.string().min(1),
  idempotencyKey: z.string().min(1),
  valor: amount,
  chave: z.string(),
  tipoChave: z.enum(PIX_KEY_TYPES),
  descricao: z.string().optional(),
  status: z.enum(TRANSFER_STATUSES),
  motivo: z.string().optional(),
  horario: z.object({ criacao: z.string(), atualizacao: z.string().optional() }),
});
export type TransferWire = z.infer<typeof transfer>;

export const chave = z.object({
  id: z.string().min(1),
  chave: z.string(),
  tipoChave: z.enum(PIX_KEY_TYPES),
  status: z.enum(ACQUIRER_PIX_KEY_STATUSES),
});
export type ChaveWire = z.infer<typeof chave>;

// ---- callbacks (acquirer → pixflow) ------------------------------------------------------------
//
// Stricter than the response shapes above: a callback is an instruction to move money, so every
// amount must be greater than zero and every `horario` a real RFC 3339 instant with an offset.
// Anything else is a 400 that changes nothing (the acquirer sees its mistake), rather than a
// payment that wedges a workflow retrying an impossible date.

/** RFC 3339 date-time with `Z` or an offset, whose calendar date exists (no 30 February). */
export const instant = z.iso.datetime({ offset: true }).refine((v) => {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  return d <= new Date(Date.UTC(y, m, 0)).getUTCDate() && !Number.isNaN(Date.parse(v));
}, 'must be a valid RFC 3339 date-time');

const devolucaoCallback = devolucao.extend({
  valor: positiveAmount,
  horario: z.object({ solicitacao: instant.optional(), liquidacao: instant.optional() }),
});

const pixCallbackItem = pix.extend({
  txid: z.string().regex(TXID, 'must be 26 to 35 letters or digits').optional(),
  valor: positiveAmount,
  horario: instant,
  devolucoes: z.array(devolucaoCallback).optional(),
});

/** POST {callbackBaseUrl}/v1/acquirer/pix: BCB WebhookPixBody. */
export const pixCallback = z.object({ pix: z.array(pixCallbackItem).min(1).max(1_000) });
export type PixCallback = z.infer<typeof pixCallback>;

/** POST {callbackBaseUrl}/v1/acquirer/transfers. */
export const transferCallback = z.object({
  transfer: transfer.extend({
    valor: positiveAmount,
    horario: z.object({ criacao: instant, atualizacao: instant.optional() }),
  }),
});
export type TransferCallback = z.infer<typeof transferCallback>;

export { INFRACTION_STATUSES };
export const infraction = z.object({
  id: z.string().min(1),
  endToEndId: z.string().regex(END_TO_END_ID),
  txid: z.string().optional(),
  valor: positiveAmount,
  motivo: z.string(),
  /** The report's free text (optional: not every PSP sends it). */
  detalhes: z.string().max(2_000).optional(),
  status: z.enum(INFRACTION_STATUSES),
  devolucao: devolucaoCallback.optional(),
  horario: instant,
});
/** POST {callbackBaseUrl}/v1/acquirer/infractions. */
export const infractionCallback = z.object({ infraction });
export type InfractionCallback = z.infer<typeof infractionCallback>;

/**
 * POST /infractions/{id}/defense with `x-idempotency-key: <our defense id>`: the receiving side's
 * defense of a MED infraction, its evidence inline (base64). Not BCB; same style as transfers.
 */
export const defesaSolicitada = z.object({
  defesa: z.string().min(1).max(1_000),
  anexos: z
    .array(z.object({ nome: z.string().min(1).max(200), tipo: z.enum(DEFENSE_FILE_TYPES), conteudo: z.base64() }))
    .max(5),
});
export type DefesaSolicitada = z.infer<typeof defesaSolicitada>;
export const defesa = z.object({
  id: z.string().min(1),
  infracao: z.string().min(1),
  idempotencyKey: z.string(),
  status: z.literal('RECEBIDA'),
  anexos: z.int().min(0),
  horario: z.object({ recebimento: z.string() }),
});

/** POST {callbackBaseUrl}/v1/acquirer/pix-keys. */
export const pixKeyCallback = z.object({ pixKey: chave.extend({ horario: instant }) });
export type PixKeyCallback = z.infer<typeof pixKeyCallback>;

/** `cob.valor.original` style paths for BCB `violacoes`. */
export function violations(prefix: string, error: z.ZodError): Array<{ razao: string; propriedade: string }> {
  return error.issues.map((i) => ({
    razao: i.message,
    propriedade: [prefix, ...i.path.map(String)].filter(Boolean).join('.'),
  }));
}

/**
 * Our refund ids are `rf_<ULID>`; a devolução id at the acquirer must be `[a-zA-Z0-9]{1,35}` (BCB),
 * so there it is `rf<ULID>`. The two mappings live together so they stay each other's inverse.
 */
export const acquirerRefundId = (refundId: string): string => refundId.replace(/[^a-zA-Z0-9]/g, '');

export const internalRefundId = (acquirerId: string): string => `rf_${acquirerId.replace(/^rf/, '')}`;

/**
 * A payment as the wire says it (BCB `Pix`) and as the charge workflow takes it (`PaymentNotice`,
 * integer cents). The inbox stores the wire form whatever the source (callback or `GET /cob`), so a
 * parked payment is re-driven the same way as a callback.
 */
export function noticeOf(p: PixWire, txid: string): PaymentNotice {
  const document = p.pagador?.cpf ?? p.pagador?.cnpj;
  return {
    endToEndId: p.endToEndId,
    txid,
    // The callback schema admits only positive `\d{1,10}\.\d{2}` amounts, which always convert.
    amount: wireToCents(p.valor) ?? 0,
    paidAt: p.horario,
    payer: p.pagador && document ? { name: p.pagador.nome, document } : null,
  };
}

export function pixWireOf(n: PaymentNotice): PixWire {
  const pagador = n.payer
    ? n.payer.document.length === 11
      ? { cpf: n.payer.document, nome: n.payer.name }
      : { cnpj: n.payer.document, nome: n.payer.name }
    : undefined;
  return {
    endToEndId: n.endToEndId,
    txid: n.txid,
    valor: centsToWire(n.amount),
    horario: n.paidAt,
    ...(pagador ? { pagador } : {}),
  };
}

/** A payment the acquirer reports on a cob (`GET /cob/{txid}`), as a notice. */
export function noticeOfReceived(p: PixReceived, txid: string): PaymentNotice {
  return { endToEndId: p.endToEndId, txid, amount: p.amount, paidAt: p.paidAt, payer: p.payer ?? null };
}

// ---- Pix Automático: locrec, rec, solicrec, cobr (BCB API Pix v2.9.0) ----------------------------
//
// The subset of the BCB schemas this service uses; src/acquirer/README.md "Recurrences" has the calls.

/** BCB RecId / SolicRecId: 29 letters or digits (`RR`/`RN`/`SC` + ISPB + yyyyMMdd + 11). */
export const REC_ID = /^[a-zA-Z0-9]{29}$/;
const isoDate = z.iso.date();
const recHistory = z.array(z.object({ status: z.enum(REC_STATUSES), data: z.string() }));
const pessoaRec = pessoa.and(z.object({ nome: z.string().min(1).max(140) }));

/** POST /rec body (RecSolicitada). */
export const recSolicitada = z.object({
  vinculo: z.object({
    objeto: z.string().min(1).max(35).optional(),
    contrato: z.string().min(1).max(35),
    devedor: pessoaRec,
  }),
  calendario: z.object({
    dataInicial: isoDate,
    dataFinal: isoDate.optional(),
    periodicidade: z.enum(REC_PERIODICITIES),
  }),
  valor: z.object({ valorRec: positiveAmount.optional(), valorMinimoRecebedor: positiveAmount.optional() }).optional(),
  politicaRetentativa: z.enum(REC_RETRY_POLICIES),
  loc: z.number().int().positive().optional(),
});
export type RecSolicitada = z.infer<typeof recSolicitada>;

/** PATCH /rec/{idRec} body (RecRevisada): this service only cancels. */
export const recRevisada = z.strictObject({ status: z.literal('CANCELADA') });

/** POST /solicrec body (SolicRecSolicitada). */
export const solicRecSolicitada = z.object({
  idRec: z.string().regex(REC_ID),
  calendario: z.object({ dataExpiracaoSolicitacao: instant }),
  destinatario: z
    .object({
      conta: z.string().min(1).max(20),
      ispbParticipante: z.string().regex(/^[0-9A-Z]{8}$/),
      agencia: z.string().min(1).max(4).optional(),
      cpf: z
        .string()
        .regex(/^\d{11}$/)
        .optional(),
      cnpj: z
        .string()
        .regex(/^[0-9A-Z]{14}$/)
        .optional(),
    })
    .refine((p) => (p.cpf === undefined) !== (p.cnpj === undefined), 'exactly one of cpf or cnpj'),
});
export type SolicRecSolicitada = z.infer<typeof solicRecSolicitada>;

const receiverAccount = z.object({
  conta: z.string().min(1).max(20),
  tipoConta: z.enum(['CORRENTE', 'POUPANCA', 'PAGAMENTO']),
  agencia: z.string().min(1).max(4).optional(),
});

/** PUT /cobr/{txid} body (CobRSolicitada). */
export const cobRSolicitada = z.object({
  idRec: z.string().regex(REC_ID),
  infoAdicional: z.string().max(140).optional(),
  calendario: z.object({ dataDeVencimento: isoDate }),
  valor: z.object({ original: positiveAmount }),
  ajusteDiaUtil: z.boolean(),
  recebedor: receiverAccount,
});
export type CobRSolicitada = z.infer<typeof cobRSolicitada>;

/** PATCH /cobr/{txid} body (CobRRevisada). */
export const cobRRevisada = z.strictObject({ status: z.literal('CANCELADA') });

export const locRec = z.object({
  id: z.number().int(),
  location: z.string().min(1).max(77),
  criacao: z.string(),
  idRec: z.string().regex(REC_ID).optional(),
});
export type LocRecWire = z.infer<typeof locRec>;

const recEnding = z.object({
  rejeicao: z.object({ codigo: z.string(), descricao: z.string() }).optional(),
  cancelamento: z.object({ solicitante: z.string(), codigo: z.string(), descricao: z.string() }).optional(),
});

/** RecGerada / RecCompleta. */
export const rec = z.object({
  idRec: z.string().regex(REC_ID),
  vinculo: z.object({ objeto: z.string().optional(), contrato: z.string(), devedor: pessoa }),
  calendario: z.object({
    dataInicial: isoDate,
    dataFinal: isoDate.optional(),
    periodicidade: z.enum(REC_PERIODICITIES),
  }),
  valor: z.object({ valorRec: amount.optional(), valorMinimoRecebedor: amount.optional() }).optional(),
  politicaRetentativa: z.enum(REC_RETRY_POLICIES).optional(),
  status: z.enum(REC_STATUSES),
  loc: locRec.optional(),
  atualizacao: recHistory,
  encerramento: recEnding.optional(),
  ativacao: z.object({ tipoJornada: z.string() }).optional(),
  dadosQR: z.object({ jornada: z.string().optional(), pixCopiaECola: z.string().min(1).optional() }).optional(),
});
export type RecWire = z.infer<typeof rec>;

/** SolicRecCompleta. */
export const solicRec = z.object({
  idSolicRec: z.string().regex(REC_ID),
  idRec: z.string().regex(REC_ID),
  calendario: z.object({ dataExpiracaoSolicitacao: z.string() }),
  status: z.enum(SOLICREC_STATUSES),
  atualizacao: z.array(z.object({ status: z.enum(SOLICREC_STATUSES), data: z.string() })),
});
export type SolicRecWire = z.infer<typeof solicRec>;

const cobRAttempt = z.object({
  dataLiquidacao: isoDate,
  tipo: z.enum(['AGND', 'NTAG', 'RIFL']),
  status: z.enum(COBR_ATTEMPT_STATUSES),
  endToEndId: z.string().regex(END_TO_END_ID),
  atualizacao: z.array(z.object({ status: z.enum(COBR_ATTEMPT_STATUSES), data: z.string() })),
  rejeicao: z.object({ codigo: z.string(), descricao: z.string() }).optional(),
});

/** BCB PixAutomatico: a debit received on a cobr. */
export const pixAutomatico = z.object({
  endToEndId: z.string().regex(END_TO_END_ID),
  txid: z.string(),
  valor: amount,
  horario: z.string(),
});

/** CobRGerada / CobRCompleta. */
export const cobR = z.object({
  idRec: z.string().regex(REC_ID),
  txid: z.string(),
  infoAdicional: z.string().optional(),
  calendario: z.object({ criacao: isoDate, dataDeVencimento: isoDate }),
  valor: z.object({ original: amount }),
  status: z.enum(COBR_STATUSES),
  politicaRetentativa: z.enum(REC_RETRY_POLICIES).optional(),
  ajusteDiaUtil: z.boolean(),
  recebedor: z.looseObject({}),
  atualizacao: z.array(z.object({ status: z.enum(COBR_STATUSES), data: z.string() })).optional(),
  tentativas: z.array(cobRAttempt).optional(),
  pix: z.array(pixAutomatico).optional(),
});
export type CobRWire = z.infer<typeof cobR>;

/** POST {callbackBaseUrl}/v1/acquirer/rec: BCB WebhookRecBody, one or more RecNotification. */
export const recCallback = z.object({
  recs: z
    .array(
      z.object({
        idRec: z.string().regex(REC_ID),
        status: z.enum(REC_STATUSES),
        atualizacao: z.array(z.object({ status: z.enum(REC_STATUSES), data: instant })).min(1),
        encerramento: recEnding.optional(),
        ativacao: z.object({ tipoJornada: z.string() }).optional(),
      }),
    )
    .min(1)
    .max(1_000),
});
export type RecCallback = z.infer<typeof recCallback>;

/** POST {callbackBaseUrl}/v1/acquirer/cobr: BCB WebhookCobRBody, one or more CobRNotification. */
export const cobRCallback = z.object({
  cobsr: z
    .array(
      z.object({
        idRec: z.string().regex(REC_ID),
        txid: z.string().regex(TXID),
        status: z.enum(COBR_STATUSES),
        atualizacao: z.array(z.object({ status: z.enum(COBR_STATUSES), data: instant })).min(1),
        tentativas: z.array(cobRAttempt).optional(),
        pix: z.array(pixAutomatico.extend({ valor: positiveAmount, horario: instant })).optional(),
      }),
    )
    .min(1)
    .max(1_000),
});
export type CobRCallback = z.infer<typeof cobRCallback>;
