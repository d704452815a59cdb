/**
 * What every protocol route of the simulator shares (server.ts wires it): injected faults and the
 * call log around each route, the bearer check, body limits and the catch-all error answer.
 */
import type Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Faults, SimCall, SimRoute } from './control';
import type { SimulatorLogger } from './logger';
import { problem, type Violation } from './problem';
import type { SimulatedPsp } from './psp';

/** The simulator's state beside the PSP's: changed by the control surface, read by the routes. */
export interface SimState {
  faults: Faults;
  callbackBaseUrl: string | undefined;
  /** Issued access tokens and when each expires (ms since the epoch). */
  readonly tokens: Map<string, number>;
  readonly calls: SimCall[];
}

/** What a module of protocol routes (cob.ts, devolucao.ts, transfers.ts, defense.ts) is given. */
export interface ProtocolRouteDeps {
  psp: SimulatedPsp;
  route: (name: SimRoute) => Koa.Middleware;
  bearer: Koa.Middleware;
}

const MAX_CALLS_KEPT = 10_000;
/** A defense carries up to 10 MB of files, base64 inside its JSON; a lotecobv up to 1,000 cobvs. */
const LARGE_BODY_PATHS = /^\/(infractions\/[^/]+\/defense|lotecobv\/[^/]+)$/;

/** One BCB `violacoes` entry list. */
export const violation = (propriedade: string, razao: string, valor?: string): Violation[] => [
  { razao, propriedade, ...(valor !== undefined ? { valor } : {}) },
];

/** A defense request as the call log keeps it: the files' names and types, not their bytes. */
function withoutContent(body: unknown): unknown {
  const anexos = (body as { anexos?: unknown } | null)?.anexos;
  if (!Array.isArray(anexos)) return body;
  return {
    ...(body as object),
    anexos: anexos.map((a: { nome?: unknown; tipo?: unknown }) => ({ nome: a.nome, tipo: a.tipo })),
  };
}

function record(state: SimState, c: SimCall): void {
  const { calls } = state;
  calls.push({ ...c, at: new Date().toISOString() });
  if (calls.length > MAX_CALLS_KEPT) calls.splice(0, calls.length - MAX_CALLS_KEPT);
}

/** The status of an injected failure of route `name` on this call, if one is due. */
function injectedFailure(faults: Faults, name: SimRoute): { status: number; why: string } | undefined {
  const fail = faults.failNext;
  if (fail && fail.route === name && fail.times > 0) {
    fail.times--;
    return { status: fail.status, why: `failNext on ${name}` };
  }
  if (faults.errorRate && Math.random() < faults.errorRate)
    return { status: faults.errorStatus ?? 500, why: `errorRate on ${name}` };
  return undefined;
}

/** Per protocol route: injected latency and failures, then the call log. */
export const protocolRoute =
  (state: SimState) =>
  (name: SimRoute) =>
  async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    if (state.faults.latencyMs) await new Promise((r) => setTimeout(r, state.faults.latencyMs));
    const failure = injectedFailure(state.faults, name);
    if (failure) {
      problem(ctx, failure.status, 'ServicoIndisponivel', 'Falha simulada', failure.why);
      return record(state, { route: name, method: ctx.method, path: ctx.path, status: failure.status });
    }
    await next();
    // A defense's files are kept by the PSP, not in the call log (10 MB a call).
    const request: unknown = name === 'defense' ? withoutContent(ctx.request.body) : ctx.request.body;
    record(state, { route: name, method: ctx.method, path: ctx.path, status: ctx.status, request, response: ctx.body });
  };

/** A live access token issued by /oauth/token, or 401. */
export const bearerAuth =
  (tokens: Map<string, number>) =>
  async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    const token = /^Bearer (\S+)$/.exec(ctx.get('authorization'))?.[1];
    const expiresAt = token ? tokens.get(token) : undefined;
    if (!expiresAt || expiresAt <= Date.now()) {
      ctx.set('www-authenticate', 'Bearer error="invalid_token"');
      return problem(ctx, 401, 'AcessoNegado', 'Não autorizado', 'token ausente, inválido ou expirado');
    }
    await next();
  };

/** JSON bodies: 64 kB, or 16 MB on `LARGE_BODY_PATHS`. */
export function bodyParser(): Koa.Middleware {
  const smallBodies = koaBody({ jsonLimit: '64kb', formLimit: '8kb', text: false });
  const defenseBodies = koaBody({ jsonLimit: '16mb', formLimit: '8kb', text: false });
  return (ctx, next) => (LARGE_BODY_PATHS.test(ctx.path) ? defenseBodies : smallBodies)(ctx, next);
}

/** Outermost: any thrown error, and a path no route took, as a problem answer. */
export const problemAnswers =
  (logger: SimulatorLogger) =>
  async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    try {
      await next();
    } catch (err) {
      // Unparseable JSON and the like (koa-body throws); never a stack trace to the client.
      const status =
        typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 500;
      if (status >= 500) logger.warn({ err }, 'acquirer simulator: unexpected error');
      problem(
        ctx,
        status >= 500 ? 500 : 400,
        'RequisicaoInvalida',
        'Requisição inválida',
        err instanceof Error ? err.message : undefined,
      );
    }
    if (ctx.status === 404 && ctx.body === undefined)
      problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', `${ctx.method} ${ctx.path}`);
  };
