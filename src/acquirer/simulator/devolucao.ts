/**
 * The simulator's devoluções (BCB): PUT/GET /pix/{e2eid}/devolucao/{id}, idempotent on the id.
 * Registered by server.ts; settlement is psp.ts's.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import { wireToCents } from '../money-wire';
import * as wire from '../wire';
import { parsed, problem } from './problem';
import { violation, type ProtocolRouteDeps } from './protocol';
import { refundView, type SimulatedPsp } from './psp';

const invalidRefund = (ctx: Koa.Context, propriedade: string, razao: string): void =>
  problem(
    ctx,
    400,
    'PixDevolucaoInvalida',
    'Devolução inválida.',
    'A requisição de devolução não respeita o schema ou não faz sentido semanticamente.',
    violation(propriedade, razao),
  );

function requestRefund(ctx: Koa.Context, psp: SimulatedPsp): void {
  const e2eid = ctx.params.e2eid ?? '';
  const id = ctx.params.id ?? '';
  if (!wire.END_TO_END_ID.test(e2eid)) return invalidRefund(ctx, 'e2eid', 'O e2eid não respeita o schema.');
  if (!wire.REFUND_ID.test(id)) return invalidRefund(ctx, 'id', 'O id da devolução não respeita o schema.');
  const body = parsed(ctx, wire.devolucaoSolicitada, 'devolucao', 'PixDevolucaoInvalida', 'Devolução inválida.');
  if (!body) return;
  const amount = wireToCents(body.valor) ?? 0;
  const existing = psp.refunds.get(id);
  if (existing) {
    if (existing.e2eId !== e2eid || existing.amount !== amount)
      return invalidRefund(ctx, 'id', 'O id informado já foi utilizado por outra devolução.');
    ctx.status = 201;
    ctx.body = refundView(existing);
    return;
  }
  if (!psp.payment(e2eid)) return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Pix não encontrado.');
  const available = psp.refundable(e2eid);
  if (amount > available)
    return invalidRefund(ctx, 'devolucao.valor', `O valor excede o disponível para devolução (${available} centavos).`);
  ctx.status = 201;
  ctx.body = refundView(psp.createRefund(e2eid, id, amount, body.descricao));
}

export function devolucaoRoutes(router: Router, { psp, route, bearer }: ProtocolRouteDeps): void {
  router.put('/pix/:e2eid/devolucao/:id', route('refund'), bearer, (ctx) => requestRefund(ctx, psp));
  router.get('/pix/:e2eid/devolucao/:id', route('getRefund'), bearer, (ctx) => {
    const r = psp.refunds.get(ctx.params.id ?? '');
    if (!r || r.e2eId !== ctx.params.e2eid)
      return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Devolução não encontrada.');
    ctx.body = refundView(r);
  });
}
