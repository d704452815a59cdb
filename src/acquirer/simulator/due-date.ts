/**
 * The simulator's due-date charges (BCB cobv) and their batches (lotecobv): PUT/GET/PATCH
 * /cobv/{txid}, PUT/GET /lotecobv/{id}. A cobv is kept with the cobs (one txid space, one payment
 * path: psp.ts pays it the amount due on the payment date). Registered by server.ts.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import { buildBrCode } from '../../pix/brcode';
import { cobvValorOf, rulesOfCobv } from '../cobv-wire';
import * as wire from '../wire';
import type { SimRoute } from './control';
import { problem, type Violation } from './problem';
import { newCob, type SimCob, type SimulatedPsp } from './psp';

export interface DueDateRouteDeps {
  psp: SimulatedPsp;
  route: (name: SimRoute) => Koa.Middleware;
  bearer: Koa.Middleware;
}

/** The simulated PSP's own data as the receiver of a cobv (BCB `recebedor`). */
const RECEBEDOR = {
  cnpj: '12345678000195',
  nome: 'PIXFLOW SANDBOX',
  logradouro: 'Avenida Paulista, 1000',
  cidade: 'SAO PAULO',
  uf: 'SP',
  cep: '01310100',
};

const locationOf = (c: SimCob): string => `pix.example.com/qr/v2/cobv/${c.txid.toLowerCase()}`;

/** CobVGerada (and CobVCompleta with `pix`). The BR Code is dynamic: its payload is at `location`. */
export function cobvView(c: SimCob, pix?: unknown[]) {
  const rules = c.dueDate;
  if (!rules) throw new Error(`cob ${c.txid} is not a cobv`);
  return {
    calendario: {
      criacao: c.createdAt,
      dataDeVencimento: rules.dueDate,
      validadeAposVencimento: rules.validityAfterDue,
    },
    txid: c.txid,
    revisao: c.revision,
    location: locationOf(c),
    status: c.status,
    devedor: c.debtor,
    recebedor: RECEBEDOR,
    // DadosRecebedor in the BCB document requires the address beside `recebedor` as well.
    logradouro: RECEBEDOR.logradouro,
    cidade: RECEBEDOR.cidade,
    uf: RECEBEDOR.uf,
    cep: RECEBEDOR.cep,
    valor: cobvValorOf(c.amount, rules),
    chave: c.key,
    ...(c.description ? { solicitacaoPagador: c.description } : {}),
    pixCopiaECola: buildBrCode({ url: locationOf(c), merchantName: RECEBEDOR.nome, merchantCity: RECEBEDOR.cidade }),
    ...(pix ? { pix } : {}),
  };
}

type Outcome = { txid: string; status: 'CRIADA' | 'NEGADA'; criacao: string; problema?: object };

/** A cobv from its request, or the violations that refuse it. */
function cobvFrom(txid: string, body: unknown): { cob: SimCob } | { violacoes: Violation[] } {
  if (!wire.TXID.test(txid))
    return { violacoes: [{ razao: 'O campo cobv.txid não respeita o schema.', propriedade: 'cobv.txid' }] };
  const r = wire.cobvSolicitada.safeParse(body);
  if (!r.success) return { violacoes: wire.violations('cobv', r.error) };
  const b = r.data;
  const rules = rulesOfCobv(b);
  const cob = newCob(txid, b, { expiresIn: 0, dueDate: rules });
  const taken = (rules.discount?.until.length ?? 0) > 0 && rules.discount?.until.some((d) => d.date > rules.dueDate);
  if (taken)
    return {
      violacoes: [
        { razao: 'A data de desconto deve ser anterior ou igual ao vencimento.', propriedade: 'cobv.valor.desconto' },
      ],
    };
  return { cob };
}

/** The same request again is a replay; another one under the txid reuses it. */
const sameCobv = (a: SimCob, b: SimCob): boolean =>
  a.amount === b.amount &&
  a.key === b.key &&
  a.description === b.description &&
  JSON.stringify(a.debtor) === JSON.stringify(b.debtor) &&
  JSON.stringify(a.dueDate) === JSON.stringify(b.dueDate);

const invalidCobv = (ctx: Koa.Context, violacoes: Violation[]): void =>
  problem(
    ctx,
    400,
    'CobVOperacaoInvalida',
    'Cobrança inválida.',
    'A requisição que busca criar uma cobrança com vencimento não respeita o schema ou está semanticamente errada.',
    violacoes,
  );

/** Creates (or replays) one cobv in the PSP; the violations when it cannot. */
function putCobv(psp: SimulatedPsp, txid: string, body: unknown): { cob: SimCob } | { violacoes: Violation[] } {
  const made = cobvFrom(txid, body);
  if (!('cob' in made)) return made;
  const existing = psp.cobs.get(txid);
  if (existing) {
    if (existing.dueDate && sameCobv(existing, made.cob)) return { cob: existing };
    return {
      violacoes: [{ razao: 'O txid informado já foi utilizado por outra cobrança.', propriedade: 'cobv.txid' }],
    };
  }
  psp.cobs.set(txid, made.cob);
  return made;
}

export function dueDateRoutes(router: Router, deps: DueDateRouteDeps): void {
  cobvRoutes(router, deps);
  loteCobvRoutes(router, deps);
}

function cobvRoutes(router: Router, deps: DueDateRouteDeps): void {
  const { psp, route, bearer } = deps;
  router.put('/cobv/:txid', route('createCobv'), bearer, (ctx) => {
    const made = putCobv(psp, ctx.params.txid ?? '', ctx.request.body);
    if (!('cob' in made)) return invalidCobv(ctx, made.violacoes);
    ctx.status = 201;
    ctx.body = cobvView(made.cob);
  });

  const found = (ctx: Koa.Context): SimCob | undefined => {
    const cob = psp.cobs.get(ctx.params.txid ?? '');
    if (cob?.dueDate) return cob;
    problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Cobrança não encontrada.');
    return undefined;
  };

  router.get('/cobv/:txid', route('getCobv'), bearer, (ctx) => {
    const cob = found(ctx);
    if (cob) ctx.body = cobvView(cob, psp.cobCompleta(cob).pix);
  });

  router.patch('/cobv/:txid', route('removeCobv'), bearer, (ctx) => {
    const cob = found(ctx);
    if (!cob) return;
    const r = wire.cobRevisada.safeParse(ctx.request.body as unknown);
    if (!r.success) return invalidCobv(ctx, wire.violations('cobv', r.error));
    if (cob.status === 'CONCLUIDA')
      return invalidCobv(ctx, [{ razao: 'cobrança CONCLUIDA', propriedade: 'cobv.status', valor: cob.status }]);
    if (cob.status === 'ATIVA') {
      cob.status = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
      cob.revision++;
    }
    ctx.body = cobvView(cob);
  });
}

/** One request of a lotecobv, decided on its own: a refused one (NEGADA) never sinks the others. */
function loteItem(psp: SimulatedPsp, item: { txid?: unknown }, criacao: string): Outcome {
  const { txid, ...cobvBody } = item;
  const id = typeof txid === 'string' ? txid : '';
  const made = putCobv(psp, id, cobvBody);
  if ('cob' in made) return { txid: id, status: 'CRIADA', criacao };
  const problema = {
    type: 'https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida',
    title: 'Cobrança inválida.',
    status: 400,
    violacoes: made.violacoes,
  };
  return { txid: id, status: 'NEGADA', criacao, problema };
}

function loteCobvRoutes(router: Router, deps: DueDateRouteDeps): void {
  const { psp, route, bearer } = deps;
  const lotes = new Map<number, { descricao: string; criacao: string; cobsv: Outcome[] }>();
  router.put('/lotecobv/:id', route('createLoteCobv'), bearer, (ctx) => {
    const id = Number(ctx.params.id);
    const body = ctx.request.body as { descricao?: unknown; cobsv?: unknown } | undefined;
    const items = Array.isArray(body?.cobsv) ? (body.cobsv as Array<{ txid?: unknown }>) : [];
    const refuse = (detail: string) => problem(ctx, 400, 'LoteCobVOperacaoInvalida', 'Lote inválido.', detail);
    if (!Number.isSafeInteger(id) || id < 0) return refuse('O id do lote não é um número.');
    if (typeof body?.descricao !== 'string' || items.length === 0 || items.length > 1_000)
      return refuse('O lote precisa de descricao e de 1 a 1.000 cobsv.');
    if (lotes.has(id)) return refuse('O lote já existe.');
    const criacao = new Date().toISOString();
    lotes.set(id, { descricao: body.descricao, criacao, cobsv: items.map((item) => loteItem(psp, item, criacao)) });
    ctx.status = 202;
  });

  router.get('/lotecobv/:id', route('getLoteCobv'), bearer, (ctx) => {
    const id = Number(ctx.params.id);
    const lote = lotes.get(id);
    if (!lote) return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Lote não encontrado.');
    ctx.body = { id, ...lote };
  });
}
