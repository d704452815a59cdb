/**
 * The simulator's transfers and PIX key registrations (not BCB; the same style): POST /transfers,
 * GET /transfers/{id}, POST /keys, each idempotent on `x-idempotency-key`. Registered by server.ts.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { z } from 'zod';
import { validatePixKey, type PixKeyType } from '../../pix/pix-key';
import { wireToCents } from '../money-wire';
import * as wire from '../wire';
import { parsed, problem } from './problem';
import { violation, type ProtocolRouteDeps } from './protocol';
import { keyView, transferView, type SimulatedPsp } from './psp';

interface IdempotentCreate<B, T> {
  schema: z.ZodType<B>;
  prefix: string;
  type: string;
  title: string;
  seen(idempotencyKey: string): T | undefined;
  sameAs(seen: T, body: B): boolean;
  reused: string;
  create(idempotencyKey: string, body: B): T;
  view(t: T): unknown;
}

/** The idempotency key and a body that fits the schema and names a valid PIX key, or a 400 answered. */
function validRequest<B extends { chave: string; tipoChave: PixKeyType }, T>(
  ctx: Koa.Context,
  opts: IdempotentCreate<B, T>,
): { key: string; body: B } | undefined {
  const key = ctx.get('x-idempotency-key');
  if (!wire.OPAQUE_ID.test(key)) {
    const why = violation('x-idempotency-key', `deve seguir ${wire.OPAQUE_ID.source}`, key);
    problem(ctx, 400, opts.type, opts.title, 'x-idempotency-key é obrigatório', why);
    return undefined;
  }
  const body = parsed(ctx, opts.schema, opts.prefix, opts.type, opts.title);
  if (!body) return undefined;
  const keyCheck = validatePixKey(body.tipoChave, body.chave);
  if (keyCheck.ok) return { key, body };
  const why = violation(`${opts.prefix}.chave`, keyCheck.reason, body.chave);
  problem(ctx, 400, opts.type, opts.title, keyCheck.reason, why);
  return undefined;
}

/**
 * What transfers and key registrations share: an idempotency key (400 without one), a body that
 * fits the wire schema and names a valid PIX key (400), then the resource that key already made
 * (200; 422 when it made something else) or a new one (201).
 */
function idempotentCreate<B extends { chave: string; tipoChave: PixKeyType }, T>(opts: IdempotentCreate<B, T>) {
  return (ctx: Koa.Context): void => {
    const valid = validRequest(ctx, opts);
    if (!valid) return;
    const seen = opts.seen(valid.key);
    if (seen) {
      if (!opts.sameAs(seen, valid.body))
        return problem(ctx, 422, 'IdempotencyKeyReused', 'Chave de idempotência reutilizada.', opts.reused);
      ctx.status = 200; // a replay: the same resource, never a second one
      ctx.body = opts.view(seen);
      return;
    }
    ctx.status = 201;
    ctx.body = opts.view(opts.create(valid.key, valid.body));
  };
}

/** What an idempotency key already made: its id in `ids`, the resource in `items`. */
const seenIn =
  <T>(ids: Map<string, string>, items: Map<string, T>) =>
  (idempotencyKey: string): T | undefined => {
    const id = ids.get(idempotencyKey);
    return id ? items.get(id) : undefined;
  };

const createTransfer = (psp: SimulatedPsp) =>
  idempotentCreate({
    schema: wire.transferSolicitada,
    prefix: 'transferencia',
    type: 'TransferenciaInvalida',
    title: 'Transferência inválida.',
    seen: seenIn(psp.transferByKey, psp.transfers),
    sameAs: (t, body) =>
      t.amount === (wireToCents(body.valor) ?? 0) && t.pixKey === body.chave && t.pixKeyType === body.tipoChave,
    reused: 'Esta x-idempotency-key já criou uma transferência com outros dados.',
    create: (key, body) =>
      psp.createTransfer({
        idempotencyKey: key,
        amount: wireToCents(body.valor) ?? 0,
        pixKey: body.chave,
        pixKeyType: body.tipoChave,
        description: body.descricao,
      }),
    view: transferView,
  });

const registerKey = (psp: SimulatedPsp) =>
  idempotentCreate({
    schema: wire.chaveSolicitada,
    prefix: 'chave',
    type: 'ChaveInvalida',
    title: 'Chave inválida.',
    seen: seenIn(psp.keyByIdempotencyKey, psp.keys),
    sameAs: (k, body) => k.key === body.chave && k.keyType === body.tipoChave,
    reused: 'Esta x-idempotency-key já registrou outra chave.',
    create: (key, body) => psp.registerKey(key, body.tipoChave, body.chave),
    view: keyView,
  });

export function transferRoutes(router: Router, { psp, route, bearer }: ProtocolRouteDeps): void {
  router.post('/transfers', route('transfer'), bearer, createTransfer(psp));
  router.get('/transfers/:id', route('getTransfer'), bearer, (ctx) => {
    const t = psp.transfers.get(ctx.params.id ?? '');
    if (!t) return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Transferência não encontrada.');
    ctx.body = transferView(t);
  });
  router.post('/keys', route('registerKey'), bearer, registerKey(psp));
}
