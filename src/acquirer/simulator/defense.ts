/**
 * The simulator's MED defenses (not BCB; the same style as transfers): POST
 * /infractions/{id}/defense, idempotent on `x-idempotency-key`. Registered by server.ts.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import * as wire from '../wire';
import { parsed, problem } from './problem';
import type { ProtocolRouteDeps } from './protocol';
import { SimulatorStateError, type SimulatedPsp } from './psp';

function receiveDefense(ctx: Koa.Context, psp: SimulatedPsp): void {
  const key = ctx.get('x-idempotency-key');
  if (!wire.OPAQUE_ID.test(key))
    return problem(ctx, 400, 'DefesaInvalida', 'Defesa inválida.', 'x-idempotency-key é obrigatório');
  const body = parsed(ctx, wire.defesaSolicitada, 'defesa', 'DefesaInvalida', 'Defesa inválida.');
  if (!body) return;
  const id = ctx.params.id ?? '';
  if (!psp.infractions.get(id)) return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Infração não encontrada.');
  try {
    const { defense, replay } = psp.receiveDefense(id, {
      idempotencyKey: key,
      text: body.defesa,
      files: body.anexos.map((a) => ({
        name: a.nome,
        mimeType: a.tipo,
        size: Buffer.from(a.conteudo, 'base64').length,
      })),
    });
    ctx.status = replay ? 200 : 201;
    ctx.body = {
      id: defense.id,
      infracao: id,
      idempotencyKey: defense.idempotencyKey,
      status: 'RECEBIDA',
      anexos: defense.files.length,
      horario: { recebimento: defense.receivedAt },
    };
  } catch (err) {
    if (!(err instanceof SimulatorStateError)) throw err;
    problem(ctx, 409, 'DefesaRecusada', 'Defesa recusada.', err.message);
  }
}

export function defenseRoutes(router: Router, { psp, route, bearer }: ProtocolRouteDeps): void {
  router.post('/infractions/:id/defense', route('defense'), bearer, (ctx) => receiveDefense(ctx, psp));
}
