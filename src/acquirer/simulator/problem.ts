/**
 * Error answers in the BCB API Pix style: RFC 7807 problem details with `violacoes` listing what
 * was wrong, e.g. `{type: ".../error/CobOperacaoInvalida", title, status: 400, detail, violacoes}`.
 * Transfers and keys are not BCB: same shape, their own type URIs.
 */
import type Koa from 'koa';

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
  const bcb = /^(Cob|LoteCobV|PixDevolucao|NaoEncontrado|AcessoNegado|ServicoIndisponivel|RequisicaoInvalida)/.test(
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
