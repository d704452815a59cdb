/**
 * The acquirer simulator: a small PSP speaking the protocol of src/acquirer/http-client.ts (BCB API
 * Pix paths for cob and devolução, OAuth2 client credentials, transfers and keys in the same
 * style), with its own in-memory state (psp.ts), signed callbacks to the service (callbacks.ts), a
 * control surface for tests and the sandbox (methods here, HTTP under /_sim in control-routes.ts),
 * and fault injection. Requests are validated with the same schemas the client uses (wire.ts).
 *
 * `npm start` runs it in-process when ACQUIRER_URL is unset. Protocol: src/acquirer/README.md.
 * State is kept in memory for the life of the process: it is a simulator, not a ledger.
 */
import http from 'node:http';
import https from 'node:https';
import Koa from 'koa';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import type { z } from 'zod';
import { validatePixKey, type PixKeyType } from '../../pix/pix-key';
import { wireToCents } from '../money-wire';
import * as wire from '../wire';
import { createCallbackSender } from './callbacks';
import { controlRoutes } from './control-routes';
import { dueDateRoutes } from './due-date';
import { recurrenceControl, recurrenceRoutes, simulatedRecurrences, type RecurrenceSimOptions } from './recurrence';
import type { Faults, SimCall, SimRoute, SimulatorControl } from './control';
import { silentLogger, type SimulatorLogger } from './logger';
import { parsed, problem, type Violation } from './problem';
import {
  SimulatedPsp,
  SimulatorStateError,
  cobView,
  keyView,
  NO_PAYMENTS,
  pixCopiaECola,
  randomAlnum,
  refundView,
  transferView,
  type SimCob,
} from './psp';

export type { SimCob, SimRefund, SimTransfer, SimKey, SimInfraction, SimDefense } from './psp';
export { SimulatorStateError } from './psp';

/** A defense request as the call log keeps it: the files' names and types, not their bytes. */
function withoutContent(body: unknown): unknown {
  const anexos = (body as { anexos?: unknown } | null)?.anexos;
  if (!Array.isArray(anexos)) return body;
  return {
    ...(body as object),
    anexos: anexos.map((a: { nome?: unknown; tipo?: unknown }) => ({ nome: a.nome, tipo: a.tipo })),
  };
}
export type { SimulatorLogger } from './logger';

export interface SimulatorOptions {
  /** 0 (default): any free port. */
  port?: number;
  host?: string;
  /** Where the service listens; callbacks go to `${callbackBaseUrl}/v1/acquirer/...`. May be set later. */
  callbackBaseUrl?: string;
  /** ACQUIRER_CALLBACK_SECRET: every callback is signed with it. */
  callbackSecret: string;
  clientId?: string;
  clientSecret?: string;
  /** SIMULATOR_TRANSFER_DELAY_MS: transfers complete (and keys activate) after this long. Default 2000. */
  transferDelayMs?: number;
  /** SIMULATOR_AUTO_COMPLETE: false leaves transfers PROCESSING and keys PENDENTE until told. Default true. */
  autoComplete?: boolean;
  /** SIMULATOR_KEY_ACTIVATION_DELAY_MS: a registered key turns ATIVA after this long. Default: transferDelayMs. */
  keyActivationDelayMs?: number;
  logger?: SimulatorLogger;
  /** Lifetime of issued access tokens. Default 3600. */
  tokenTtlSeconds?: number;
  /** Devoluções settle after this long, while auto-settlement is on. Default 10. */
  refundDelayMs?: number;
  /** A scripted analysis answers a defense this long after it arrived. Default 10. */
  defenseAnswerDelayMs?: number;
  /** Callback delivery: attempts (default 6), first backoff (default 200 ms, doubling), per-attempt timeout (5 s). */
  callbackMaxAttempts?: number;
  callbackRetryBaseMs?: number;
  callbackTimeoutMs?: number;
  /**
   * Serve HTTPS with this PEM certificate and key; with `clientCa`, require a client certificate
   * issued by it, as a PSP's API Pix does (docs/production.md "Acquirer mTLS"). Unset: plain HTTP.
   */
  tls?: { cert: Buffer | string; key: Buffer | string; clientCa?: Buffer | string };
  /**
   * Pix Automático: debits are played `debitDelayMs` (default 50) after they are scheduled unless
   * `autoDebit` is false (default: autoComplete); a cobr is accepted `cobrLeadDays` before its date
   * (BCB: 2 to 10). A stack on skipped time lifts the upper bound: its dates are the workflow's.
   */
  recurrence?: RecurrenceSimOptions;
}

export type { Faults, SimCall, SimRoute, SimulatorControl } from './control';

export interface RunningSimulator {
  url: string;
  control: SimulatorControl;
  close(): Promise<void>;
}

const MAX_CALLS_KEPT = 10_000;
/** A defense carries up to 10 MB of files, base64 inside its JSON; a lotecobv up to 1,000 cobvs. */
const LARGE_BODY_PATHS = /^\/(infractions\/[^/]+\/defense|lotecobv\/[^/]+)$/;

/** JSON bodies: 64 kB, or 16 MB on `LARGE_BODY_PATHS`. */
function bodyParser(): Koa.Middleware {
  const smallBodies = koaBody({ jsonLimit: '64kb', formLimit: '8kb', text: false });
  const defenseBodies = koaBody({ jsonLimit: '16mb', formLimit: '8kb', text: false });
  return (ctx, next) => (LARGE_BODY_PATHS.test(ctx.path) ? defenseBodies : smallBodies)(ctx, next);
}

export async function startAcquirerSimulator(opts: SimulatorOptions): Promise<RunningSimulator> {
  const clientId = opts.clientId ?? 'pixflow';
  const clientSecret = opts.clientSecret ?? 'pixflow-sandbox-secret';
  const logger = opts.logger ?? silentLogger;
  const tokenTtl = opts.tokenTtlSeconds ?? 3600;
  let callbackBaseUrl = opts.callbackBaseUrl;
  let faults: Faults = {};
  const tokens = new Map<string, number>();
  const calls: SimCall[] = [];

  const callbacks = createCallbackSender({
    baseUrl: () => callbackBaseUrl,
    secret: opts.callbackSecret,
    logger,
    maxAttempts: opts.callbackMaxAttempts,
    retryBaseMs: opts.callbackRetryBaseMs,
    timeoutMs: opts.callbackTimeoutMs,
    duplicate: () => faults.duplicateCallbacks === true,
    hold: () => faults.outOfOrderCallbacks === true,
    jitterMs: () => (faults.outOfOrderCallbacksMs ? Math.floor(Math.random() * faults.outOfOrderCallbacksMs) : 0),
  });
  const psp = new SimulatedPsp({
    callbacks,
    transferDelayMs: opts.transferDelayMs ?? 2000,
    keyActivationDelayMs: opts.keyActivationDelayMs ?? opts.transferDelayMs ?? 2000,
    autoComplete: opts.autoComplete ?? true,
    refundDelayMs: opts.refundDelayMs ?? 10,
    defenseAnswerDelayMs: opts.defenseAnswerDelayMs ?? 10,
  });

  const recurrences = simulatedRecurrences(callbacks, opts);

  const control: SimulatorControl = {
    calls,
    recurrences: recurrenceControl(recurrences),
    callbacks,
    payCob: async (txid, o) => psp.payCob(txid, o),
    expireCob: (txid) => psp.expireCob(txid),
    settleRefund: (id, outcome, reason) => psp.settleRefund(id, outcome, reason),
    completeTransfer: (id) => psp.finishTransfer(id, 'COMPLETED'),
    failTransfer: (id, reason) =>
      psp.finishTransfer(id, 'REJECTED', reason ?? 'Transferência rejeitada pelo PSP de destino'),
    returnTransfer: (id, reason) => psp.finishTransfer(id, 'RETURNED', reason ?? 'Devolvida pelo PSP de destino'),
    setKeyStatus: (id, status) => psp.setKeyStatus(id, status),
    raiseInfraction: (e2eId, reason, o) => psp.raiseInfraction(e2eId, reason, o),
    acceptInfraction: (id) => psp.decideInfraction(id, 'ACCEPTED'),
    rejectInfraction: (id) => psp.decideInfraction(id, 'REJECTED'),
    refundInfraction: (id) => psp.refundInfraction(id),
    updateInfraction: (id, status) => psp.decideInfraction(id, status),
    setFaults(f) {
      const wasHolding = faults.outOfOrderCallbacks === true;
      faults = { ...f, ...(f.failNext ? { failNext: { ...f.failNext } } : {}) };
      if (wasHolding && !faults.outOfOrderCallbacks) callbacks.release();
      logger.info({ faults }, 'acquirer simulator: faults set');
    },
    getFaults: () => ({ ...faults }),
    setCallbackBaseUrl(url) {
      callbackBaseUrl = url;
    },
    setAutoSettleRefunds(on) {
      psp.autoSettleRefunds = on;
    },
    revokeTokens: () => tokens.clear(),
    getCob: (txid) => psp.cobs.get(txid),
    getRefund: (id) => psp.refunds.get(id),
    getTransfer: (id) => psp.transfers.get(id),
    getKey: (id) => psp.keys.get(id),
    getInfraction: (id) => psp.infractions.get(id),
  };

  const app = new Koa();
  const router = new Router();

  const record = (c: SimCall): void => {
    calls.push({ ...c, at: new Date().toISOString() });
    if (calls.length > MAX_CALLS_KEPT) calls.splice(0, calls.length - MAX_CALLS_KEPT);
  };

  /** Per protocol route: injected latency and failures, then the call log. */
  const route =
    (name: SimRoute) =>
    async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
      if (faults.latencyMs) await new Promise((r) => setTimeout(r, faults.latencyMs));
      const fail = faults.failNext;
      if (fail && fail.route === name && fail.times > 0) {
        fail.times--;
        problem(ctx, fail.status, 'ServicoIndisponivel', 'Falha simulada', `failNext on ${name}`);
        return record({ route: name, method: ctx.method, path: ctx.path, status: fail.status });
      }
      if (faults.errorRate && Math.random() < faults.errorRate) {
        const status = faults.errorStatus ?? 500;
        problem(ctx, status, 'ServicoIndisponivel', 'Falha simulada', `errorRate on ${name}`);
        return record({ route: name, method: ctx.method, path: ctx.path, status });
      }
      await next();
      // A defense's files are kept by the PSP, not in the call log (10 MB a call).
      const request: unknown = name === 'defense' ? withoutContent(ctx.request.body) : ctx.request.body;
      record({ route: name, method: ctx.method, path: ctx.path, status: ctx.status, request, response: ctx.body });
    };

  const bearer = async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    const token = /^Bearer (\S+)$/.exec(ctx.get('authorization'))?.[1];
    const expiresAt = token ? tokens.get(token) : undefined;
    if (!expiresAt || expiresAt <= Date.now()) {
      ctx.set('www-authenticate', 'Bearer error="invalid_token"');
      return problem(ctx, 401, 'AcessoNegado', 'Não autorizado', 'token ausente, inválido ou expirado');
    }
    await next();
  };

  const violation = (propriedade: string, razao: string, valor?: string): Violation[] => [
    { razao, propriedade, ...(valor !== undefined ? { valor } : {}) },
  ];

  // ---- OAuth2 (RFC 6749 client credentials; its own error format) ----
  router.post('/oauth/token', route('token'), (ctx) => {
    const basic = /^Basic (\S+)$/.exec(ctx.get('authorization'))?.[1];
    const decoded = Buffer.from(basic ?? '', 'base64').toString();
    const sep = decoded.indexOf(':');
    if (sep < 0 || decoded.slice(0, sep) !== clientId || decoded.slice(sep + 1) !== clientSecret) {
      ctx.status = 401;
      ctx.set('www-authenticate', 'Basic');
      ctx.body = { error: 'invalid_client' };
      return;
    }
    if ((ctx.request.body as { grant_type?: unknown } | undefined)?.grant_type !== 'client_credentials') {
      ctx.status = 400;
      ctx.body = { error: 'unsupported_grant_type' };
      return;
    }
    const token = randomAlnum(40);
    tokens.set(token, Date.now() + tokenTtl * 1000);
    ctx.set('cache-control', 'no-store');
    ctx.body = {
      access_token: token,
      token_type: 'Bearer',
      expires_in: tokenTtl,
      scope: 'cob.write cob.read pix.write pix.read',
    };
  });

  // ---- cob (BCB) ----
  router.put('/cob/:txid', route('createCob'), bearer, (ctx) => {
    const txid = ctx.params.txid ?? '';
    const invalid = (p: string, razao: string): void =>
      problem(
        ctx,
        400,
        'CobOperacaoInvalida',
        'Cobrança inválida.',
        'A requisição que busca criar uma cobrança não respeita o schema ou está semanticamente errada.',
        violation(p, razao),
      );
    if (!wire.TXID.test(txid)) return invalid('cob.txid', 'O campo cob.txid não respeita o schema.');
    const body = parsed(ctx, wire.cobSolicitada, 'cob', 'CobOperacaoInvalida', 'Cobrança inválida.');
    if (!body) return;
    const amount = wireToCents(body.valor.original) ?? 0;
    const expiresIn = body.calendario.expiracao ?? 86400;
    const existing = psp.cobs.get(txid);
    if (existing) {
      // The txid is ours and unique: the same request again is a replay (our retries), anything
      // else reuses a txid.
      const same =
        existing.amount === amount &&
        existing.key === body.chave &&
        existing.expiresIn === expiresIn &&
        existing.description === body.solicitacaoPagador &&
        JSON.stringify(existing.debtor) === JSON.stringify(body.devedor);
      if (!same) return invalid('cob.txid', 'O txid informado já foi utilizado por outra cobrança.');
      ctx.status = 201;
      ctx.body = cobView(existing);
      return;
    }
    const cob: SimCob = {
      txid,
      status: 'ATIVA',
      amount,
      key: body.chave,
      description: body.solicitacaoPagador,
      debtor: body.devedor,
      createdAt: new Date().toISOString(),
      expiresIn,
      revision: 0,
      payments: NO_PAYMENTS,
    };
    try {
      // Checks the key; the view builds the same code again from the cob (see `pixCopiaECola`).
      pixCopiaECola(cob);
    } catch (err) {
      return invalid('cob.chave', err instanceof Error ? err.message : 'chave inválida');
    }
    psp.cobs.set(txid, cob);
    ctx.status = 201;
    ctx.body = cobView(cob);
  });

  router.get('/cob/:txid', route('getCob'), bearer, (ctx) => {
    const cob = psp.cobs.get(ctx.params.txid ?? '');
    if (!cob) return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Cobrança não encontrada.');
    ctx.body = psp.cobCompleta(cob);
  });

  router.patch('/cob/:txid', route('removeCob'), bearer, (ctx) => {
    const cob = psp.cobs.get(ctx.params.txid ?? '');
    if (!cob) return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Cobrança não encontrada.');
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
  });

  // ---- devolução (BCB) ----
  router.put('/pix/:e2eid/devolucao/:id', route('refund'), bearer, (ctx) => {
    const e2eid = ctx.params.e2eid ?? '';
    const id = ctx.params.id ?? '';
    const invalid = (p: string, razao: string): void =>
      problem(
        ctx,
        400,
        'PixDevolucaoInvalida',
        'Devolução inválida.',
        'A requisição de devolução não respeita o schema ou não faz sentido semanticamente.',
        violation(p, razao),
      );
    if (!wire.END_TO_END_ID.test(e2eid)) return invalid('e2eid', 'O e2eid não respeita o schema.');
    if (!wire.REFUND_ID.test(id)) return invalid('id', 'O id da devolução não respeita o schema.');
    const body = parsed(ctx, wire.devolucaoSolicitada, 'devolucao', 'PixDevolucaoInvalida', 'Devolução inválida.');
    if (!body) return;
    const amount = wireToCents(body.valor) ?? 0;
    const existing = psp.refunds.get(id);
    if (existing) {
      if (existing.e2eId !== e2eid || existing.amount !== amount)
        return invalid('id', 'O id informado já foi utilizado por outra devolução.');
      ctx.status = 201;
      ctx.body = refundView(existing);
      return;
    }
    if (!psp.payment(e2eid)) return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Pix não encontrado.');
    const available = psp.refundable(e2eid);
    if (amount > available)
      return invalid('devolucao.valor', `O valor excede o disponível para devolução (${available} centavos).`);
    ctx.status = 201;
    ctx.body = refundView(psp.createRefund(e2eid, id, amount, body.descricao));
  });

  router.get('/pix/:e2eid/devolucao/:id', route('getRefund'), bearer, (ctx) => {
    const r = psp.refunds.get(ctx.params.id ?? '');
    if (!r || r.e2eId !== ctx.params.e2eid)
      return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Devolução não encontrada.');
    ctx.body = refundView(r);
  });

  /**
   * What transfers and key registrations share: an idempotency key (400 without one), a body that
   * fits the wire schema and names a valid PIX key (400), then the resource that key already made
   * (200; 422 when it made something else) or a new one (201).
   */
  function idempotentCreate<B extends { chave: string; tipoChave: PixKeyType }, T>(opts: {
    schema: z.ZodType<B>;
    prefix: string;
    type: string;
    title: string;
    seen(idempotencyKey: string): T | undefined;
    sameAs(seen: T, body: B): boolean;
    reused: string;
    create(idempotencyKey: string, body: B): T;
    view(t: T): unknown;
  }) {
    return (ctx: Koa.Context): void => {
      const key = ctx.get('x-idempotency-key');
      if (!wire.OPAQUE_ID.test(key)) {
        return problem(
          ctx,
          400,
          opts.type,
          opts.title,
          'x-idempotency-key é obrigatório',
          violation('x-idempotency-key', `deve seguir ${wire.OPAQUE_ID.source}`, key),
        );
      }
      const body = parsed(ctx, opts.schema, opts.prefix, opts.type, opts.title);
      if (!body) return;
      const keyCheck = validatePixKey(body.tipoChave, body.chave);
      if (!keyCheck.ok)
        return problem(
          ctx,
          400,
          opts.type,
          opts.title,
          keyCheck.reason,
          violation(`${opts.prefix}.chave`, keyCheck.reason, body.chave),
        );
      const seen = opts.seen(key);
      if (seen) {
        if (!opts.sameAs(seen, body))
          return problem(ctx, 422, 'IdempotencyKeyReused', 'Chave de idempotência reutilizada.', opts.reused);
        ctx.status = 200; // a replay: the same resource, never a second one
        ctx.body = opts.view(seen);
        return;
      }
      ctx.status = 201;
      ctx.body = opts.view(opts.create(key, body));
    };
  }

  // ---- transfers (not BCB; same style) ----
  router.post(
    '/transfers',
    route('transfer'),
    bearer,
    idempotentCreate({
      schema: wire.transferSolicitada,
      prefix: 'transferencia',
      type: 'TransferenciaInvalida',
      title: 'Transferência inválida.',
      seen: (key) => {
        const id = psp.transferByKey.get(key);
        return id ? psp.transfers.get(id) : undefined;
      },
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
    }),
  );

  router.get('/transfers/:id', route('getTransfer'), bearer, (ctx) => {
    const t = psp.transfers.get(ctx.params.id ?? '');
    if (!t) return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Transferência não encontrada.');
    ctx.body = transferView(t);
  });

  // ---- PIX key registration (not BCB; same style) ----
  router.post(
    '/keys',
    route('registerKey'),
    bearer,
    idempotentCreate({
      schema: wire.chaveSolicitada,
      prefix: 'chave',
      type: 'ChaveInvalida',
      title: 'Chave inválida.',
      seen: (key) => {
        const id = psp.keyByIdempotencyKey.get(key);
        return id ? psp.keys.get(id) : undefined;
      },
      sameAs: (k, body) => k.key === body.chave && k.keyType === body.tipoChave,
      reused: 'Esta x-idempotency-key já registrou outra chave.',
      create: (key, body) => psp.registerKey(key, body.tipoChave, body.chave),
      view: keyView,
    }),
  );

  // ---- MED defense (not BCB; same style as transfers) ----
  router.post('/infractions/:id/defense', route('defense'), bearer, (ctx) => {
    const key = ctx.get('x-idempotency-key');
    if (!wire.OPAQUE_ID.test(key))
      return problem(ctx, 400, 'DefesaInvalida', 'Defesa inválida.', 'x-idempotency-key é obrigatório');
    const body = parsed(ctx, wire.defesaSolicitada, 'defesa', 'DefesaInvalida', 'Defesa inválida.');
    if (!body) return;
    const id = ctx.params.id ?? '';
    if (!psp.infractions.get(id))
      return problem(ctx, 404, 'NaoEncontrado', 'Não Encontrado', 'Infração não encontrada.');
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
  });

  recurrenceRoutes({ router, state: recurrences, route, bearer });
  controlRoutes(router, control);
  dueDateRoutes(router, { psp, route, bearer });

  app.use(async (ctx, next) => {
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
  });
  app.use(bodyParser());
  app.use(router.routes());
  app.use(router.allowedMethods());

  const t = opts.tls;
  // Koa's handler answers its own failures (ctx.onerror) and never rejects: no request is awaited.
  const handle = app.callback();
  const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => void handle(req, res);
  const server = t
    ? https.createServer(
        {
          cert: t.cert,
          key: t.key,
          // A client without a certificate from clientCa fails the handshake: no request is read.
          ...(t.clientCa ? { ca: t.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
        },
        listener,
      )
    : http.createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const url = `${t ? 'https' : 'http'}://${opts.host ?? '127.0.0.1'}:${port}`;
  logger.info({ url, callbackBaseUrl }, 'acquirer simulator listening');
  return {
    url,
    control,
    async close() {
      psp.stop();
      recurrences.stop();
      callbacks.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
