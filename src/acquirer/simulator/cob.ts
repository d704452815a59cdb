/**
 * The simulator's immediate charges (BCB cob): PUT/GET/PATCH /cob/{txid}. Registered by server.ts;
 * due-date charges are in due-date.ts.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import * as wire from '../wire';
import { parsed, problem } from './problem';
import { violation, type ProtocolRouteDeps } from './protocol';
import { cobView, newCob, pixCopiaECola, type SimCob, type SimulatedPsp } from './psp';

const invalidCob = (ctx: Koa.Context, propriedade: string, razao: string): void =>
  problem(
    ctx,
    400,
    'CobOperacaoInvalida',
    'Cobrança inválida.',
    'A requisição que busca criar uma cobrança não respeita o schema ou está semanticamente errada.',
    violation(propriedade, razao),
  );

/** The txid is ours and unique: the same request again is a replay (our retries), anything else reuses a txid. */
const sameCob = (a: SimCob, b: SimCob): boolean =>
  a.amount === b.amount &&
  a.key === b.key &&
  a.expiresIn === b.expiresIn &&
  a.description === b.description &&
  JSON.stringify(a.debtor) === JSON.stringify(b.debtor);

function createCob(ctx: Koa.Context, psp: SimulatedPsp): void {
  const txid = ctx.params.txid ?? '';
  if (!wire.TXID.test(txid)) return invalidCob(ctx, 'cob.txid', 'O campo cob.txid não respeita o schema.');
  const body = parsed(ctx, wire.cobSolicitada, 'cob', 'CobOperacaoInvalida', 'Cobrança inválida.');
  if (!body) return;
  const cob = newCob(txid, body, { expiresIn: body.calendario.expiracao ?? 86400 });
  const existing = psp.cobs.get(txid);
  if (existing) {
    if (!sameCob(existing, cob))
      return invalidCob(ctx, 'cob.txid', 'O txid informado já foi utilizado por outra cobrança.');
    ctx.status = 201;
    ctx.body = cobView(existing);
    return;
  }
  try {
    // Checks the key; the view builds the same code again from the cob (see `pixCopiaECola`).
    pixCopiaECola(cob);
  } catch (err) {
    return invalidCob(ctx, 'cob.chave', err instanceof Error ? err.message : 'chave inválida');
  }
  psp.cobs.set(txid, cob);
  ctx.status = 201;
  ctx.body = cobView(cob);
}

function removeCob(ctx: Koa.Context, cob: SimCob): void {
  if (!parsed(ctx, wire.cobRevisada, 'cob', 'CobOperacaoInvalida', 'Operação inválida.')) return;
  if (cob.status === 'CONCLUIDA') {
    return problem(
      ctx,
      400,
      'CobOperacaoInvalida',
      'Operação inválida.',
      'A cobrança já foi paga (CONCLUIDA) e não pode ser removida.',
      violation('cob.status', 'cobrança CONCLUIDA', cob.status),
    );
  }
  if (cob.status === 'ATIVA') {
    cob.status = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
    cob.revision++;
  }
  // Already removed (by us or the PSP): removal is idempotent.
  ctx.body = cobView(cob);
}

export function cobRoutes(router: Router, { psp, route, bearer }: ProtocolRouteDeps): void {
  const found = (ctx: Koa.Context): SimCob | undefined => {
    const cob = psp.cobs.get(ctx.params.txid ?? '');
    if (!cob) problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Cobrança não encontrada.');
    return cob;
  };
  router.put('/cob/:txid', route('createCob'), bearer, (ctx) => createCob(ctx, psp));
  router.get('/cob/:txid', route('getCob'), bearer, (ctx) => {
    const cob = found(ctx);
    if (cob) ctx.body = psp.cobCompleta(cob);
  });
  router.patch('/cob/:txid', route('removeCob'), bearer, (ctx) => {
    const cob = found(ctx);
    if (cob) removeCob(ctx, cob);
  });
}
