/**
 * The acquirer simulator: a small PSP speaking the same protocol as src/acquirer/http-client.ts
 * (BCB API Pix paths for cob and devolução, OAuth2 client credentials, a transfers API in the same
 * style), with its own in-memory state, signed callbacks to the service, a control surface for
 * tests and the sandbox (methods and `/_sim/*` routes), and fault injection.
 *
 * `npm start` runs it in-process when ACQUIRER_URL is unset. Protocol: src/acquirer/README.md.
 */
import crypto from 'node:crypto';
import type { Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { buildBrCode, isValidTxid } from '../../pix';
import { centsToWire, wireToCents } from '../money-wire';
import type { CobStatus, RefundStatus, TransferStatus } from '../types';
import { createCallbackSender, type CallbackSender } from './callbacks';

export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** Where the service listens; callbacks go to `${callbackBaseUrl}/v1/acquirer/...`. May be set later. */
  callbackBaseUrl?: string;
  callbackSecret: string;
  clientId?: string;
  clientSecret?: string;
  transferDelayMs?: number;
  autoComplete?: boolean;
}

export type SimRoute =
  | 'token'
  | 'createCob'
  | 'getCob'
  | 'removeCob'
  | 'refund'
  | 'getRefund'
  | 'transfer'
  | 'getTransfer'
  | 'registerKey';

export interface Faults {
  /** Answer `errorStatus` on this fraction of BCB calls (0..1). */
  errorRate?: number;
  errorStatus?: number;
  latencyMs?: number;
  /** Fail the next `times` calls of `route` with `status`. */
  failNext?: { route: SimRoute; times: number; status: number };
  duplicateCallbacks?: boolean;
  /** Random extra delay (0..ms) before each callback, so they can arrive out of order. */
  outOfOrderCallbacksMs?: number;
}

interface SimCob {
  txid: string;
  status: CobStatus;
  amount: number;
  key: string;
  description?: string;
  createdAt: string;
  expiresIn: number;
  pixCopiaECola: string;
  revision: number;
  payments: Array<{ e2eId: string; amount: number; paidAt: string; payer: { name: string; document: string } }>;
}

interface SimRefund {
  id: string;
  e2eId: string;
  rtrId: string;
  amount: number;
  status: RefundStatus;
  reason?: string;
  requestedAt: string;
}

interface SimTransfer {
  id: string;
  batchId: string;
  idempotencyKey: string;
  amount: number;
  pixKey: string;
  pixKeyType: string;
  status: TransferStatus;
  reason?: string;
}

export interface SimulatorControl {
  payCob(txid: string, opts?: { payer?: { name: string; document: string }; amount?: number }): Promise<{ endToEndId: string }>;
  settleRefund(refundId: string, outcome: 'DEVOLVIDO' | 'NAO_REALIZADO'): void;
  completeTransfer(id: string): void;
  failTransfer(id: string, reason?: string): void;
  returnTransfer(id: string, reason?: string): void;
  /** Sets a registered key's status and tells the service (`/v1/acquirer/pix-keys`). */
  setKeyStatus(keyId: string, status: 'PENDENTE' | 'ATIVA' | 'INATIVA'): void;
  /** Opens a MED infraction on a payment and tells the service (`/v1/acquirer/infractions`). */
  raiseInfraction(endToEndId: string, reason?: string): { infractionId: string };
  /** Moves an infraction to ACCEPTED (refund to the payer) or REJECTED and tells the service. */
  updateInfraction(infractionId: string, status: 'ACCEPTED' | 'REJECTED'): void;
  setFaults(f: Faults): void;
  setCallbackBaseUrl(url: string): void;
  /** Automatic refund confirmation (default on). */
  setAutoSettleRefunds(on: boolean): void;
  getCob(txid: string): SimCob | undefined;
  getRefund(id: string): SimRefund | undefined;
  getTransfer(id: string): SimTransfer | undefined;
  /** Every BCB-style call: route, status, and the JSON exchanged (for schema checks in tests). */
  readonly calls: Array<{ route: SimRoute; status: number; request?: unknown; response?: unknown }>;
  readonly callbacks: CallbackSender;
}

export interface RunningSimulator {
  url: string;
  control: SimulatorControl;
  close(): Promise<void>;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomAlnum = (n: number): string =>
  Array.from(crypto.randomBytes(n), (b) => ALNUM[b % ALNUM.length]).join('');
/** An end-to-end id shaped like SPI's: `E` + ISPB (8) + yyyyMMddHHmm (12) + 11 alphanumerics = 32. */
const newE2eId = (): string =>
  `E99999999${new Date().toISOString().replace(/\D/g, '').slice(0, 12)}${randomAlnum(11)}`;

function problem(ctx: Koa.Context, status: number, title: string, detail?: string): void {
  ctx.status = status;
  ctx.type = 'application/problem+json';
  ctx.body = { type: `https://pix.bcb.gov.br/api/v2/error/${title.replace(/\s+/g, '')}`, title, status, detail };
}

export async function startAcquirerSimulator(opts: SimulatorOptions): Promise<RunningSimulator> {
  const clientId = opts.clientId ?? 'pixflow';
  const clientSecret = opts.clientSecret ?? 'pixflow-sandbox-secret';
  let callbackBaseUrl = opts.callbackBaseUrl;
  let faults: Faults = {};
  let autoSettleRefunds = true;
  const tokens = new Map<string, number>();
  const cobs = new Map<string, SimCob>();
  const refunds = new Map<string, SimRefund>();
  const transfers = new Map<string, SimTransfer>();
  const transferByKey = new Map<string, string>();
  const keys = new Map<string, { id: string; idempotencyKey: string; chave: string; tipoChave: string; status: 'PENDENTE' | 'ATIVA' | 'INATIVA' }>();
  const infractions = new Map<string, { id: string; endToEndId: string; txid: string; valor: string; reason: string; status: string }>();
  const timers = new Set<NodeJS.Timeout>();
  const calls: SimulatorControl['calls'] = [];

  const callbacks = createCallbackSender({
    baseUrl: () => callbackBaseUrl,
    secret: opts.callbackSecret,
    duplicate: () => faults.duplicateCallbacks === true,
    delayMs: () => (faults.outOfOrderCallbacksMs ? Math.floor(Math.random() * faults.outOfOrderCallbacksMs) : 0),
  });

  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const cobView = (c: SimCob) => ({
    calendario: { criacao: c.createdAt, expiracao: c.expiresIn },
    txid: c.txid,
    revisao: c.revision,
    status: c.status,
    valor: { original: centsToWire(c.amount) },
    chave: c.key,
    ...(c.description ? { solicitacaoPagador: c.description } : {}),
    pixCopiaECola: c.pixCopiaECola,
    pix: c.payments.map((p) => ({ endToEndId: p.e2eId, txid: c.txid, valor: centsToWire(p.amount), horario: p.paidAt })),
  });
  const refundView = (r: SimRefund) => ({
    id: r.id,
    rtrId: r.rtrId,
    valor: centsToWire(r.amount),
    horario: { solicitacao: r.requestedAt },
    status: r.status,
    ...(r.reason ? { motivo: r.reason } : {}),
  });
  const transferView = (t: SimTransfer) => ({
    id: t.id,
    batchId: t.batchId,
    valor: centsToWire(t.amount),
    chave: t.pixKey,
    tipoChave: t.pixKeyType,
    status: t.status,
    ...(t.reason ? { motivo: t.reason } : {}),
  });

  const findCobByE2e = (e2eId: string): SimCob | undefined =>
    [...cobs.values()].find((c) => c.payments.some((p) => p.e2eId === e2eId));

  function sendRefundCallback(r: SimRefund): void {
    const cob = findCobByE2e(r.e2eId);
    const payment = cob?.payments.find((p) => p.e2eId === r.e2eId);
    if (!cob || !payment) return;
    callbacks.send('/v1/acquirer/pix', {
      pix: [
        {
          endToEndId: payment.e2eId,
          txid: cob.txid,
          valor: centsToWire(payment.amount),
          horario: payment.paidAt,
          devolucoes: [refundView(r)],
        },
      ],
    });
  }

  function settleTransfer(id: string, status: TransferStatus, reason?: string): void {
    const t = transfers.get(id);
    if (!t) throw new Error(`unknown transfer ${id}`);
    if (status === 'RETURNED' ? t.status !== 'COMPLETED' : t.status !== 'PROCESSING') {
      throw new Error(`transfer ${id} is ${t.status}`);
    }
    t.status = status;
    t.reason = reason;
    callbacks.send('/v1/acquirer/transfers', { transfer: { ...transferView(t), horario: new Date().toISOString() } });
  }

  const control: SimulatorControl = {
    calls,
    callbacks,
    async payCob(txid, o = {}) {
      const cob = cobs.get(txid);
      if (!cob) throw new Error(`unknown cob ${txid}`);
      // A real payer can pay a cob the receiver just removed (race at the PSP); the simulator
      // lets tests do that on purpose. It refuses only a cob it never issued.
      const payment = {
        e2eId: newE2eId(),
        amount: o.amount ?? cob.amount,
        paidAt: new Date().toISOString(),
        payer: o.payer ?? { name: 'Pagador Sandbox', document: '12345678909' },
      };
      cob.payments.push(payment);
      if (cob.status === 'ATIVA') cob.status = 'CONCLUIDA';
      const doc = payment.payer.document;
      callbacks.send('/v1/acquirer/pix', {
        pix: [
          {
            endToEndId: payment.e2eId,
            txid,
            valor: centsToWire(payment.amount),
            horario: payment.paidAt,
            pagador: doc.length === 11 ? { cpf: doc, nome: payment.payer.name } : { cnpj: doc, nome: payment.payer.name },
          },
        ],
      });
      return { endToEndId: payment.e2eId };
    },
    settleRefund(id, outcome) {
      const r = refunds.get(id);
      if (!r) throw new Error(`unknown refund ${id}`);
      if (r.status !== 'EM_PROCESSAMENTO') return;
      r.status = outcome;
      if (outcome === 'NAO_REALIZADO') r.reason = 'Devolução não realizada pelo PSP';
      sendRefundCallback(r);
    },
    completeTransfer: (id) => settleTransfer(id, 'COMPLETED'),
    failTransfer: (id, reason) => settleTransfer(id, 'REJECTED', reason ?? 'Transferência rejeitada pelo PSP destino'),
    returnTransfer: (id, reason) => settleTransfer(id, 'RETURNED', reason ?? 'Devolvida pelo banco destino'),
    setKeyStatus(keyId, status) {
      const k = keys.get(keyId);
      if (!k) throw new Error(`unknown key ${keyId}`);
      k.status = status;
      callbacks.send('/v1/acquirer/pix-keys', { pixKey: { id: k.id, chave: k.chave, tipoChave: k.tipoChave, status, horario: new Date().toISOString() } });
    },
    raiseInfraction(endToEndId, reason) {
      const cob = findCobByE2e(endToEndId);
      const payment = cob?.payments.find((p) => p.e2eId === endToEndId);
      if (!cob || !payment) throw new Error(`unknown payment ${endToEndId}`);
      const inf = { id: `inf${randomAlnum(20)}`, endToEndId, txid: cob.txid, valor: centsToWire(payment.amount), reason: reason ?? 'Suspeita de fraude', status: 'OPEN' };
      infractions.set(inf.id, inf);
      callbacks.send('/v1/acquirer/infractions', { infraction: { ...inf, horario: new Date().toISOString() } });
      return { infractionId: inf.id };
    },
    updateInfraction(infractionId, status) {
      const inf = infractions.get(infractionId);
      if (!inf) throw new Error(`unknown infraction ${infractionId}`);
      inf.status = status;
      callbacks.send('/v1/acquirer/infractions', { infraction: { ...inf, horario: new Date().toISOString() } });
    },
    setFaults(f) {
      faults = { ...f };
    },
    setCallbackBaseUrl(url) {
      callbackBaseUrl = url;
    },
    setAutoSettleRefunds(on) {
      autoSettleRefunds = on;
    },
    getCob: (txid) => cobs.get(txid),
    getRefund: (id) => refunds.get(id),
    getTransfer: (id) => transfers.get(id),
  };

  const app = new Koa();
  const router = new Router();

  // Faults and call log, per BCB route.
  const route =
    (name: SimRoute) =>
    async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
      if (faults.latencyMs) await new Promise((r) => setTimeout(r, faults.latencyMs));
      const fail = faults.failNext;
      if (fail && fail.route === name && fail.times > 0) {
        fail.times--;
        calls.push({ route: name, status: fail.status });
        return problem(ctx, fail.status, 'Falha simulada', `failNext on ${name}`);
      }
      if (faults.errorRate && Math.random() < faults.errorRate) {
        const status = faults.errorStatus ?? 500;
        calls.push({ route: name, status });
        return problem(ctx, status, 'Falha simulada', `errorRate on ${name}`);
      }
      await next();
      calls.push({ route: name, status: ctx.status, request: ctx.request.body, response: ctx.body });
    };

  const bearer = async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    const token = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
    const expiresAt = token ? tokens.get(token) : undefined;
    if (!expiresAt || expiresAt < Date.now()) return problem(ctx, 401, 'Acesso negado', 'token ausente ou expirado');
    await next();
  };

  router.post('/oauth/token', route('token'), (ctx) => {
    const basic = /^Basic (.+)$/.exec(ctx.get('authorization'))?.[1];
    const [id, secret] = Buffer.from(basic ?? '', 'base64').toString().split(':');
    if (id !== clientId || secret !== clientSecret) return problem(ctx, 401, 'Acesso negado', 'credenciais inválidas');
    const token = randomAlnum(40);
    tokens.set(token, Date.now() + 3600_000);
    ctx.body = { access_token: token, token_type: 'Bearer', expires_in: 3600, scope: 'cob.write cob.read pix.write pix.read' };
  });

  router.put('/cob/:txid', route('createCob'), bearer, (ctx) => {
    const txid = ctx.params.txid;
    const body = ctx.request.body as { calendario?: { expiracao?: unknown }; valor?: { original?: unknown }; chave?: unknown; solicitacaoPagador?: unknown };
    const amount = wireToCents(body?.valor?.original);
    const expiresIn = body?.calendario?.expiracao ?? 86400;
    if (!isValidTxid(txid)) return problem(ctx, 400, 'Cobrança inválida', 'txid não respeita o schema');
    if (amount === null || amount < 1) return problem(ctx, 400, 'Cobrança inválida', 'valor.original não respeita o schema');
    if (typeof expiresIn !== 'number' || !Number.isInteger(expiresIn) || expiresIn <= 0) {
      return problem(ctx, 400, 'Cobrança inválida', 'calendario.expiracao inválido');
    }
    if (typeof body.chave !== 'string' || body.chave.length === 0 || body.chave.length > 77) {
      return problem(ctx, 400, 'Cobrança inválida', 'chave inválida');
    }
    const existing = cobs.get(txid);
    if (existing) {
      ctx.status = 201; // PUT is idempotent on txid: same cob back
      ctx.body = cobView(existing);
      return;
    }
    const cob: SimCob = {
      txid,
      status: 'ATIVA',
      amount,
      key: body.chave,
      description: typeof body.solicitacaoPagador === 'string' ? body.solicitacaoPagador : undefined,
      createdAt: new Date().toISOString(),
      expiresIn,
      revision: 0,
      payments: [],
      pixCopiaECola: buildBrCode({
        key: body.chave,
        merchantName: 'PIXFLOW SANDBOX',
        merchantCity: 'SAO PAULO',
        amountCents: amount,
        txid,
        initiationMethod: '12',
      }),
    };
    cobs.set(txid, cob);
    ctx.status = 201;
    ctx.body = cobView(cob);
  });

  router.get('/cob/:txid', route('getCob'), bearer, (ctx) => {
    const cob = cobs.get(ctx.params.txid);
    if (!cob) return problem(ctx, 404, 'Cobrança não encontrada');
    ctx.body = cobView(cob);
  });

  router.patch('/cob/:txid', route('removeCob'), bearer, (ctx) => {
    const cob = cobs.get(ctx.params.txid);
    if (!cob) return problem(ctx, 404, 'Cobrança não encontrada');
    const status = (ctx.request.body as { status?: unknown })?.status;
    if (status !== 'REMOVIDA_PELO_USUARIO_RECEBEDOR') return problem(ctx, 400, 'Cobrança inválida', 'status inválido');
    if (cob.status === 'CONCLUIDA') return problem(ctx, 400, 'Cobrança inválida', 'cobrança já concluída');
    if (cob.status === 'ATIVA') {
      cob.status = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
      cob.revision++;
    }
    ctx.body = cobView(cob);
  });

  router.put('/pix/:e2eid/devolucao/:id', route('refund'), bearer, (ctx) => {
    const { e2eid, id } = ctx.params;
    const existing = refunds.get(id);
    if (existing) {
      ctx.status = 201;
      ctx.body = refundView(existing);
      return;
    }
    const cob = findCobByE2e(e2eid);
    const payment = cob?.payments.find((p) => p.e2eId === e2eid);
    if (!payment) return problem(ctx, 404, 'Pix não encontrado');
    const body = ctx.request.body as { valor?: unknown; descricao?: unknown };
    const amount = wireToCents(body?.valor);
    const already = [...refunds.values()].filter((r) => r.e2eId === e2eid && r.status !== 'NAO_REALIZADO');
    const refunded = already.reduce((s, r) => s + r.amount, 0);
    if (amount === null || amount < 1 || amount + refunded > payment.amount) {
      return problem(ctx, 400, 'Devolução inválida', 'valor excede o disponível para devolução');
    }
    const r: SimRefund = {
      id,
      e2eId: e2eid,
      rtrId: `D99999999${randomAlnum(23)}`,
      amount,
      status: 'EM_PROCESSAMENTO',
      reason: typeof body.descricao === 'string' ? body.descricao : undefined,
      requestedAt: new Date().toISOString(),
    };
    refunds.set(id, r);
    if (autoSettleRefunds) later(10, () => control.settleRefund(id, 'DEVOLVIDO'));
    ctx.status = 201;
    ctx.body = refundView(r);
  });

  router.get('/pix/:e2eid/devolucao/:id', route('getRefund'), bearer, (ctx) => {
    const r = refunds.get(ctx.params.id);
    if (!r || r.e2eId !== ctx.params.e2eid) return problem(ctx, 404, 'Devolução não encontrada');
    ctx.body = refundView(r);
  });

  router.post('/transfers', route('transfer'), bearer, (ctx) => {
    const key = ctx.get('x-idempotency-key');
    if (!key) return problem(ctx, 400, 'Transferência inválida', 'x-idempotency-key é obrigatório');
    const seen = transferByKey.get(key);
    if (seen) {
      ctx.status = 200;
      ctx.body = transferView(transfers.get(seen) as SimTransfer);
      return;
    }
    const body = ctx.request.body as { valor?: unknown; chave?: unknown; tipoChave?: unknown };
    const amount = wireToCents(body?.valor);
    if (amount === null || amount < 1) return problem(ctx, 400, 'Transferência inválida', 'valor inválido');
    if (typeof body.chave !== 'string' || typeof body.tipoChave !== 'string') {
      return problem(ctx, 400, 'Transferência inválida', 'chave e tipoChave são obrigatórios');
    }
    const t: SimTransfer = {
      id: `tr_${randomAlnum(20)}`,
      batchId: `batch_${randomAlnum(12)}`,
      idempotencyKey: key,
      amount,
      pixKey: body.chave,
      pixKeyType: body.tipoChave,
      status: 'PROCESSING',
    };
    transfers.set(t.id, t);
    transferByKey.set(key, t.id);
    if (opts.autoComplete ?? true) {
      later(opts.transferDelayMs ?? 2000, () => {
        if (transfers.get(t.id)?.status === 'PROCESSING') control.completeTransfer(t.id);
      });
    }
    ctx.status = 201;
    ctx.body = transferView(t);
  });

  router.post('/keys', route('registerKey'), bearer, (ctx) => {
    const idem = ctx.get('x-idempotency-key');
    const body = ctx.request.body as { chave?: unknown; tipoChave?: unknown };
    if (!idem || typeof body?.chave !== 'string' || typeof body.tipoChave !== 'string') {
      return problem(ctx, 400, 'Chave inválida', 'x-idempotency-key, chave e tipoChave são obrigatórios');
    }
    const existing = [...keys.values()].find((k) => k.idempotencyKey === idem);
    const k = existing ?? { id: `key${randomAlnum(20)}`, idempotencyKey: idem, chave: body.chave, tipoChave: body.tipoChave, status: 'PENDENTE' as const };
    if (!existing) {
      keys.set(k.id, k);
      // A real PSP activates the key after its DICT registration; the sandbox does so at once.
      if (opts.autoComplete ?? true) later(opts.transferDelayMs ?? 2000, () => control.setKeyStatus(k.id, 'ATIVA'));
    }
    ctx.status = existing ? 200 : 201;
    ctx.body = { id: k.id, chave: k.chave, tipoChave: k.tipoChave, status: k.status };
  });

  router.get('/transfers/:id', route('getTransfer'), bearer, (ctx) => {
    const t = transfers.get(ctx.params.id);
    if (!t) return problem(ctx, 404, 'Transferência não encontrada');
    ctx.body = transferView(t);
  });

  // Control surface over HTTP, for a simulator running in another process.
  router.post('/_sim/cob/:txid/pay', async (ctx) => {
    const body = (ctx.request.body ?? {}) as { payer?: { name: string; document: string }; amount?: number };
    try {
      ctx.body = await control.payCob(ctx.params.txid, body);
      ctx.status = 202;
    } catch (err) {
      problem(ctx, 404, 'Cobrança não encontrada', (err as Error).message);
    }
  });
  router.post('/_sim/transfers/:id/:action', (ctx) => {
    const reason = (ctx.request.body as { reason?: string } | undefined)?.reason;
    const actions: Record<string, (id: string) => void> = {
      complete: (id) => control.completeTransfer(id),
      fail: (id) => control.failTransfer(id, reason),
      return: (id) => control.returnTransfer(id, reason),
    };
    const act = actions[ctx.params.action];
    if (!act) return problem(ctx, 404, 'Ação desconhecida');
    try {
      act(ctx.params.id);
      ctx.status = 202;
      ctx.body = { ok: true };
    } catch (err) {
      problem(ctx, 400, 'Transferência inválida', (err as Error).message);
    }
  });
  router.post('/_sim/faults', (ctx) => {
    control.setFaults((ctx.request.body ?? {}) as Faults);
    ctx.body = { ok: true };
  });

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch {
      problem(ctx, 400, 'Requisição inválida');
    }
  });
  app.use(koaBody({ jsonLimit: '64kb', urlencoded: true }));
  app.use(router.routes());
  app.use(router.allowedMethods());

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    control,
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
