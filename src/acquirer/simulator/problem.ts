/**
 * Error answers in the BCB API Pix style: RFC 7807 problem details with `violacoes` listing what
 * was wrong, e.g. `{type: ".../error/CobOperacaoInvalida", title, status: 400, detail, violacoes}`.
 * Transfers and keys are not BCB: same shape, their own type URIs.
 */
import type Koa from 'koa';
import type { z } from 'zod';
import { violations } from '../wire';
import { SimulatorStateError } from './psp';

const BCB_ERRORS = 'https://pix.bcb.gov.br/api/v2/error/';
const OWN_ERRORS = 'urn:pixflow:acquirer-simulator:error:';

export interface Violation {
  razao: string;
  propriedade: string;
  valor?: string;
}

export function problem(
  ctx: Koa.Context,
  status: number,
  type: string,
  title: string,
  detail?: string,
  violacoes?: Violation[],
): void {
  const bcb =
    /^(Cob|LoteCobV|Rec|SolicRec|PixDevolucao|NaoEncontrado|AcessoNegado|ServicoIndisponivel|RequisicaoInvalida)/.test(
      type,
    );
  ctx.status = status;
  ctx.type = 'application/problem+json';
  ctx.body = {
    type: `${bcb ? BCB_ERRORS : OWN_ERRORS}${type}`,
    title,
    status,
    ...(detail ? { detail } : {}),
    ...(violacoes?.length ? { violacoes } : {}),
  };
}

/** Parses a body with a wire schema, answering 400 with `violacoes` when it does not fit. */
export function parsed<S extends z.ZodType>(
  ctx: Koa.Context,
  schema: S,
  prefix: string,
  type: string,
  title: string,
): z.infer<S> | undefined {
  const r = schema.safeParse(ctx.request.body as unknown);
  if (r.success) return r.data;
  problem(
    ctx,
    400,
    type,
    title,
    'A requisição não respeita o schema ou está semanticamente errada.',
    violations(prefix, r.error),
  );
  return undefined;
}

/**
 * Answers a control action (/_sim): 200 on a GET, 202 otherwise, with its result (or `{ok: true}`);
 * a simulator state error as 404 for an unknown id, 409 for an impossible transition.
 */
export async function answerControl(ctx: Koa.Context, action: () => unknown): Promise<void> {
  try {
    const result = await action();
    ctx.status = ctx.method === 'GET' ? 200 : 202;
    ctx.body = result ?? { ok: true };
  } catch (err) {
    if (!(err instanceof SimulatorStateError)) throw err;
    problem(ctx, err.kind === 'unknown' ? 404 : 409, 'EstadoInvalido', err.message);
  }
}
