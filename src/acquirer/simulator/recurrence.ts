/**
 * The simulator's Pix Automático routes (BCB API Pix v2.9.0): `/locrec`, `/rec`, `/rec/{idRec}`,
 * `/solicrec`, `/cobr/{txid}`, `/cobr/{txid}/retentativa/{data}`, and the `/_sim/rec…` and
 * `/_sim/cobr…` control routes that play the payer's side. State: recurrence-state.ts.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import { z } from 'zod';
import { wireToCents } from '../money-wire';
import * as wire from '../wire';
import type { CallbackSender } from './callbacks';
import { answerControl, parsed, problem } from './problem';
import {
  cobRView,
  locRecView,
  recView,
  solicRecView,
  SimulatedRecurrences,
  type RecurrenceOptions,
} from './recurrence-state';

type Middleware = (ctx: Koa.Context, next: Koa.Next) => Promise<void>;

/** The protocol routes of this module, as faults and the call log name them. */
export type RecurrenceRoute =
  | 'createRecLocation'
  | 'createRec'
  | 'getRec'
  | 'cancelRec'
  | 'createSolicRec'
  | 'createCobR'
  | 'getCobR'
  | 'cancelCobR'
  | 'retryCobR';

export interface RecurrenceRouteDeps {
  router: Router;
  state: SimulatedRecurrences;
  /** Per protocol route: faults and the call log (protocol.ts). */
  route(name: RecurrenceRoute): Middleware;
  bearer: Middleware;
}

/** SimulatorOptions.recurrence (server.ts). */
export interface RecurrenceSimOptions {
  debitDelayMs?: number;
  autoDebit?: boolean;
  cobrLeadDays?: { min: number; max: number };
}

/** The recurrence state of a simulator started with `opts` (server.ts). */
export function simulatedRecurrences(
  callbacks: CallbackSender,
  payments: RecurrenceOptions['payments'],
  opts: { recurrence?: RecurrenceSimOptions; autoComplete?: boolean },
): SimulatedRecurrences {
  return new SimulatedRecurrences({
    callbacks,
    payments,
    debitDelayMs: opts.recurrence?.debitDelayMs ?? 50,
    autoDebit: opts.recurrence?.autoDebit ?? opts.autoComplete ?? true,
    cobrLeadDays: opts.recurrence?.cobrLeadDays ?? { min: 2, max: 10 },
  });
}

/** What the sandbox and tests may ask of the payer's side (control routes below, SimulatorControl). */
export interface RecurrenceControl {
  approveRec(idRec: string): void;
  refuseRec(idRec: string, reason?: string): void;
  /** The payer cancels (USUARIO_PAGADOR): rec and open cobrs CANCELADA, callbacks sent. */
  cancelRecByPayer(idRec: string, reason?: string): void;
  /** The next `times` debit attempts of the rec are rejected (insufficient funds). */
  failNextDebits(idRec: string, times: number): void;
  /** The first debit of the rec's cobr due on `dueDate` (YYYY-MM-DD) is rejected; its retries are not. */
  failFirstDebitDue(idRec: string, dueDate: string): void;
  /** Plays the open attempt of a cobr now (with `autoDebit` off, the only way it settles). */
  settleCobR(txid: string, outcome: 'PAGA' | 'REJEITADA'): void;
  recByContract(contract: string): string | undefined;
}

export function recurrenceControl(state: SimulatedRecurrences): RecurrenceControl {
  return {
    approveRec: (id) => state.approve(id),
    refuseRec: (id, reason) => state.refuse(id, reason),
    cancelRecByPayer: (id, reason) => void state.cancel(id, 'USUARIO_PAGADOR', reason),
    failNextDebits: (id, times) => state.failNextDebits(id, times),
    failFirstDebitDue: (id, dueDate) => state.failFirstDebitDue(id, dueDate),
    settleCobR: (txid, outcome) => state.settleAttempt(txid, outcome),
    recByContract: (contract) => state.recByContract.get(contract),
  };
}

const invalid = (ctx: Koa.Context, type: string, title: string, propriedade: string, razao: string): void =>
  problem(ctx, 400, type, title, 'A requisição não respeita o schema ou está semanticamente errada.', [
    { razao, propriedade },
  ]);

const notFound = (ctx: Koa.Context, what: string): void =>
  problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', `${what} não encontrada.`);

/** Registers the protocol routes (server.ts calls this once). */
export function recurrenceRoutes(d: RecurrenceRouteDeps): void {
  locAndRecRoutes(d);
  recChangeRoutes(d);
  cobRRoutes(d);
  recurrenceControlRoutes(d.router, d.state);
}

function locAndRecRoutes({ router, state, route, bearer }: RecurrenceRouteDeps): void {
  router.post('/locrec', route('createRecLocation'), bearer, (ctx) => {
    ctx.status = 201;
    ctx.body = locRecView(state.createLocation(ctx.host || 'pix.example.com'));
  });

  router.post('/rec', route('createRec'), bearer, (ctx) => {
    const T = ['RecOperacaoInvalida', 'Recorrência inválida.'] as const;
    const body = parsed(ctx, wire.recSolicitada, 'rec', ...T);
    if (!body) return;
    const { dataInicial, dataFinal } = body.calendario;
    if (dataFinal !== undefined && dataFinal < dataInicial)
      return invalid(ctx, ...T, 'rec.calendario.dataFinal', 'Anterior à data inicial.');
    if (body.valor?.valorRec && body.valor.valorMinimoRecebedor)
      return invalid(ctx, ...T, 'rec.valor', 'valorRec e valorMinimoRecebedor são exclusivos.');
    const loc = body.loc === undefined ? undefined : state.locations.get(body.loc);
    if (body.loc !== undefined && (!loc || loc.idRec))
      return invalid(ctx, ...T, 'rec.loc', 'Location inexistente ou já vinculada.');
    const requestKey = JSON.stringify(body);
    const seen = state.recs.get(state.recByContract.get(body.vinculo.contrato) ?? '');
    if (seen) {
      // vinculo.contrato is the creator's key: the same request again is a replay (our retries).
      if (seen.requestKey !== requestKey)
        return invalid(ctx, ...T, 'rec.vinculo.contrato', 'Contrato já utilizado por outra recorrência.');
      ctx.status = 201;
      ctx.body = recView(seen, state.locations.get(seen.locId ?? -1), false);
      return;
    }
    const rec = state.createRec({
      contract: body.vinculo.contrato,
      object: body.vinculo.objeto,
      debtor: body.vinculo.devedor,
      firstDate: dataInicial,
      endDate: dataFinal,
      periodicity: body.calendario.periodicidade,
      amount: body.valor?.valorRec ? (wireToCents(body.valor.valorRec) ?? undefined) : undefined,
      minimumAmount: body.valor?.valorMinimoRecebedor
        ? (wireToCents(body.valor.valorMinimoRecebedor) ?? undefined)
        : undefined,
      retryPolicy: body.politicaRetentativa,
      locId: body.loc,
      requestKey,
    });
    ctx.status = 201;
    ctx.body = recView(rec, loc, false);
  });
}

function recChangeRoutes({ router, state, route, bearer }: RecurrenceRouteDeps): void {
  router.get('/rec/:idRec', route('getRec'), bearer, (ctx) => {
    const rec = state.recs.get(ctx.params.idRec ?? '');
    if (!rec) return notFound(ctx, 'Recorrência');
    ctx.body = recView(rec, state.locations.get(rec.locId ?? -1), true);
  });

  router.patch('/rec/:idRec', route('cancelRec'), bearer, (ctx) => {
    const rec = state.recs.get(ctx.params.idRec ?? '');
    if (!rec) return notFound(ctx, 'Recorrência');
    if (!parsed(ctx, wire.recRevisada, 'rec', 'RecOperacaoInvalida', 'Operação inválida.')) return;
    if (rec.status !== 'CANCELADA' && rec.status !== 'CRIADA' && rec.status !== 'APROVADA')
      return invalid(ctx, 'RecOperacaoInvalida', 'Operação inválida.', 'rec.status', `Recorrência ${rec.status}.`);
    ctx.body = recView(state.cancel(rec.idRec, 'USUARIO_RECEBEDOR'), state.locations.get(rec.locId ?? -1), false);
  });

  router.post('/solicrec', route('createSolicRec'), bearer, (ctx) => {
    const T = ['SolicRecOperacaoInvalida', 'Solicitação inválida.'] as const;
    const body = parsed(ctx, wire.solicRecSolicitada, 'solicrec', ...T);
    if (!body) return;
    const rec = state.recs.get(body.idRec);
    if (!rec || rec.status !== 'CRIADA')
      return invalid(ctx, ...T, 'solicrec.idRec', 'Recorrência inexistente ou não mais CRIADA.');
    const { cpf, cnpj } = body.destinatario;
    if ((cpf ?? cnpj) !== (rec.debtor.cpf ?? rec.debtor.cnpj))
      return invalid(ctx, ...T, 'solicrec.destinatario', 'O destinatário não é o devedor da recorrência.');
    const at = new Date().toISOString();
    const s = {
      id: `SC99999999${at.slice(0, 10).replace(/-/g, '')}${rec.idRec.slice(-11)}`,
      idRec: rec.idRec,
      expiresAt: body.calendario.dataExpiracaoSolicitacao,
      destination: body.destinatario as Record<string, string>,
      status: 'CRIADA' as const,
      history: [{ status: 'CRIADA' as const, data: at }],
    };
    state.solicRecs.set(s.id, s);
    ctx.status = 201;
    ctx.body = solicRecView(s, rec);
  });
}

function cobRRoutes({ router, state, route, bearer }: RecurrenceRouteDeps): void {
  const T = ['CobROperacaoInvalida', 'Cobrança recorrente inválida.'] as const;
  router.put('/cobr/:txid', route('createCobR'), bearer, (ctx) => {
    const txid = ctx.params.txid ?? '';
    if (!wire.TXID.test(txid)) return invalid(ctx, ...T, 'cobr.txid', 'O campo cobr.txid não respeita o schema.');
    const body = parsed(ctx, wire.cobRSolicitada, 'cobr', ...T);
    if (!body) return;
    const requestKey = JSON.stringify(body);
    const seen = state.cobrs.get(txid);
    if (seen) {
      if (seen.requestKey !== requestKey)
        return invalid(ctx, ...T, 'cobr.txid', 'O txid informado já foi utilizado por outra cobrança.');
      ctx.status = 201;
      ctx.body = cobRView(seen, state.rec(seen.idRec));
      return;
    }
    const rec = state.recs.get(body.idRec);
    if (!rec) return invalid(ctx, ...T, 'cobr.idRec', 'Recorrência inexistente.');
    const amount = wireToCents(body.valor.original) ?? 0;
    const refusal = state.cobrRefusal(rec, body.calendario.dataDeVencimento, amount);
    if (refusal) return invalid(ctx, ...T, refusal.propriedade, refusal.razao);
    const cobr = state.createCobR({
      txid,
      idRec: rec.idRec,
      amount,
      dueDate: body.calendario.dataDeVencimento,
      description: body.infoAdicional,
      receiver: body.recebedor as Record<string, string>,
      requestKey,
    });
    ctx.status = 201;
    ctx.body = cobRView(cobr, rec);
  });

  router.get('/cobr/:txid', route('getCobR'), bearer, (ctx) => {
    const cobr = state.cobrs.get(ctx.params.txid ?? '');
    if (!cobr) return notFound(ctx, 'Cobrança recorrente');
    ctx.body = cobRView(cobr, state.rec(cobr.idRec));
  });

  router.patch('/cobr/:txid', route('cancelCobR'), bearer, (ctx) => {
    const cobr = state.cobrs.get(ctx.params.txid ?? '');
    if (!cobr) return notFound(ctx, 'Cobrança recorrente');
    if (!parsed(ctx, wire.cobRRevisada, 'cobr', ...T)) return;
    if (cobr.status === 'CONCLUIDA') return invalid(ctx, ...T, 'cobr.status', 'A cobrança já foi paga (CONCLUIDA).');
    if (cobr.status !== 'CANCELADA') state.cancelCobR(cobr);
    ctx.body = cobRView(cobr, state.rec(cobr.idRec));
  });

  router.post('/cobr/:txid/retentativa/:data', route('retryCobR'), bearer, (ctx) => {
    const cobr = state.cobrs.get(ctx.params.txid ?? '');
    if (!cobr) return notFound(ctx, 'Cobrança recorrente');
    const date = ctx.params.data ?? '';
    if (!z.iso.date().safeParse(date).success)
      return invalid(ctx, 'CobRTentativaInvalida', 'Retentativa inválida.', 'data', 'Data no formato YYYY-MM-DD.');
    const refusal = state.retryRefusal(cobr, date);
    if (refusal) return invalid(ctx, 'CobRTentativaInvalida', 'Retentativa inválida.', 'data', refusal);
    state.retry(cobr, date);
    ctx.status = 201;
    ctx.body = cobRView(cobr, state.rec(cobr.idRec));
  });
}

const reasonBody = z.object({ reason: z.string().max(400).optional() });
const failBody = z.object({ times: z.number().int().min(0).max(100) });
const settleBody = z.object({ outcome: z.enum(['PAGA', 'REJEITADA']) });

/** `/_sim/rec/:idRec/{approve,refuse,cancel,fail-debits}`, `/_sim/cobr/:txid/settle` and reads. */
function recurrenceControlRoutes(router: Router, state: SimulatedRecurrences): void {
  const control = recurrenceControl(state);
  const act =
    <S extends z.ZodType>(schema: S, fn: (id: string, body: z.infer<S>) => unknown) =>
    async (ctx: Koa.Context): Promise<void> => {
      const r = schema.safeParse(ctx.request.body ?? {});
      if (!r.success) return problem(ctx, 400, 'ControleInvalido', 'Requisição de controle inválida', r.error.message);
      const id = String((ctx.params as Record<string, string>).id ?? '');
      await answerControl(ctx, () => fn(id, r.data));
    };
  const any = z.looseObject({});
  router.post(
    '/_sim/rec/:id/approve',
    act(any, (id) => control.approveRec(id)),
  );
  router.post(
    '/_sim/rec/:id/refuse',
    act(reasonBody, (id, b) => control.refuseRec(id, b.reason)),
  );
  router.post(
    '/_sim/rec/:id/cancel',
    act(reasonBody, (id, b) => control.cancelRecByPayer(id, b.reason)),
  );
  router.post(
    '/_sim/rec/:id/fail-debits',
    act(failBody, (id, b) => control.failNextDebits(id, b.times)),
  );
  router.post(
    '/_sim/cobr/:id/settle',
    act(settleBody, (id, b) => control.settleCobR(id, b.outcome)),
  );
  router.get(
    '/_sim/rec/:id',
    act(any, (id) => state.rec(id)),
  );
  router.get(
    '/_sim/cobr/:id',
    act(any, (id) => state.cobr(id)),
  );
}
