/**
 * The one HTTP client of the acquirer (BCB API Pix style + a transfers API in the same style).
 *
 * - OAuth2 client credentials: one token, shared by concurrent callers, cached until shortly before
 *   it expires; a 401 drops it and the call is sent once more with a fresh one (a 401 means the
 *   request was refused unprocessed, so resending cannot apply it twice).
 * - Every request has a timeout (AbortSignal.timeout) covering headers and body.
 * - No other retries here: callers (Temporal activities, the charge creation path) retry by policy
 *   using `AcquirerError.retryable`, and every call is idempotent by construction (txid,
 *   devolução id, transfer idempotency key), so their retries are safe.
 * - What we send is checked against the protocol schemas first (INVALID_REQUEST: never sent), and
 *   what we receive is parsed, never cast (INVALID_RESPONSE).
 *
 * undici's `request` on one keep-alive pool per acquirer origin, rather than the global fetch: the
 * same HTTP client underneath without the WHATWG layer (Request/Response objects, web streams),
 * which cost the API's event loop about a fifth of a charge creation
 * (docs/performance.md "Where a charge's time goes"). Redirects are not followed (a redirect answer is an unexpected status).
 */
import type { z } from 'zod';
import { Pool, type Dispatcher } from 'undici';
import { AcquirerError, errorForResponse } from './errors';
import { centsToWire, isWireableCents, wireToCents } from './money-wire';
import type {
  Acquirer,
  ChargeAtAcquirer,
  Cob,
  CobRequest,
  Cobv,
  CobvBatchOutcome,
  CobvRequest,
  InfractionDefense,
  PixKeyRegistration,
  PixKeyType,
  PixReceived,
  Refund,
  Transfer,
  TransferRequest,
  CobR,
  CobRRequest,
  Rec,
  RecLocation,
  RecRequest,
  SolicRec,
  SolicRecRequest,
} from './types';
import * as wire from './wire';
import { cobvOf } from './cobv-wire';
import { recordAcquirerCall } from '../observability/metrics';

export interface HttpAcquirerOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Per request (ACQUIRER_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * https only: the CA of the acquirer's certificate (unset: the system's) and our client
   * certificate and key for mTLS, as the BCB API Pix requires of PSPs (docs/production.md "Acquirer mTLS").
   */
  tls?: AcquirerTls;
}

/** PEM material for the acquirer connection (ACQUIRER_TLS_*_PATH). */
export interface AcquirerTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** The PATCH body that removes a cob or cobv (BCB CobRevisada). */
const REMOVAL = { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } as const;

/** Refresh this long before the token's stated expiry (or at half its life, if shorter). */
const TOKEN_SAFETY_MARGIN_MS = 30_000;

export class HttpAcquirer implements Acquirer {
  private token: { value: string; expiresAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;
  private readonly base: URL;
  private readonly pool: Pool;

  constructor(private readonly opts: HttpAcquirerOptions) {
    this.base = new URL(opts.baseUrl.replace(/\/?$/, '/'));
    // Every call, the OAuth token request included, goes through this pool and so over its TLS.
    this.pool = new Pool(this.base.origin, {
      connections: 64,
      ...(opts.tls ? { connect: { ca: opts.tls.ca, cert: opts.tls.cert, key: opts.tls.key } } : {}),
    });
  }

  /** Closes the kept-alive connections (shutdown). */
  close(): Promise<void> {
    return this.pool.close();
  }

  async createCob(req: CobRequest): Promise<Cob> {
    checkId('txid', req.txid, wire.TXID);
    const body = checkBody(wire.cobSolicitada, {
      calendario: { expiracao: req.expiresIn },
      valor: { original: wireAmount(req.amount) },
      chave: req.key,
      ...(req.description ? { solicitacaoPagador: req.description.slice(0, 140) } : {}),
      ...(req.debtor ? { devedor: toPessoa(req.debtor) } : {}),
    });
    return toCob(await this.call('createCob', 'PUT', `cob/${req.txid}`, wire.cob, body));
  }

  async getCob(txid: string): Promise<Cob> {
    return toCob(await this.chargeCall('getCob', `cob/${txid}`, txid, wire.cob));
  }

  async removeCob(txid: string): Promise<Cob> {
    return toCob(await this.chargeCall('removeCob', `cob/${txid}`, txid, wire.cob, REMOVAL));
  }

  async createCobv(req: CobvRequest): Promise<Cobv> {
    checkId('txid', req.txid, wire.TXID);
    wireAmount(req.amount);
    const body = checkBody(wire.cobvSolicitada, cobvOf(req));
    return toCobv(await this.call('createCobv', 'PUT', `cobv/${req.txid}`, wire.cobv, body));
  }

  async getCobv(txid: string): Promise<Cobv> {
    return toCobv(await this.chargeCall('getCobv', `cobv/${txid}`, txid, wire.cobv));
  }

  async removeCobv(txid: string): Promise<Cobv> {
    return toCobv(await this.chargeCall('removeCobv', `cobv/${txid}`, txid, wire.cobv, REMOVAL));
  }

  async createCobvBatch(batchId: number, description: string, items: CobvRequest[]): Promise<void> {
    for (const item of items) checkId('txid', item.txid, wire.TXID);
    const body = checkBody(wire.loteCobvSolicitado, {
      descricao: description.slice(0, 140),
      cobsv: items.map((item) => ({ ...cobvOf(item), txid: item.txid })),
    });
    await timed('createCobvBatch', () => this.sendNoContent('PUT', `lotecobv/${batchId}`, body));
  }

  async getCobvBatch(batchId: number): Promise<CobvBatchOutcome[]> {
    const lote = await this.call('getCobvBatch', 'GET', `lotecobv/${batchId}`, wire.loteCobv);
    return lote.cobsv.map((c) => ({
      txid: c.txid,
      status: c.status,
      ...(c.problema ? { reason: c.problema.violacoes?.[0]?.razao ?? c.problema.detail ?? c.problema.title } : {}),
    }));
  }

  async requestRefund(e2eId: string, refundId: string, amount: number, reason?: string): Promise<Refund> {
    checkId('endToEndId', e2eId, wire.END_TO_END_ID);
    checkId('refund id', refundId, wire.REFUND_ID);
    const body = checkBody(wire.devolucaoSolicitada, {
      valor: wireAmount(amount),
      ...(reason ? { descricao: reason.slice(0, 140) } : {}),
    });
    return toRefund(
      await this.call('requestRefund', 'PUT', `pix/${e2eId}/devolucao/${refundId}`, wire.devolucao, body),
    );
  }

  async getRefund(e2eId: string, refundId: string): Promise<Refund> {
    checkId('endToEndId', e2eId, wire.END_TO_END_ID);
    checkId('refund id', refundId, wire.REFUND_ID);
    return toRefund(await this.call('getRefund', 'GET', `pix/${e2eId}/devolucao/${refundId}`, wire.devolucao));
  }

  async sendTransfer(idempotencyKey: string, req: TransferRequest): Promise<Transfer> {
    checkId('idempotency key', idempotencyKey, wire.OPAQUE_ID);
    const body = checkBody(wire.transferSolicitada, {
      valor: wireAmount(req.amount),
      chave: req.pixKey,
      tipoChave: req.pixKeyType,
      ...(req.description ? { descricao: req.description.slice(0, 140) } : {}),
    });
    return toTransfer(
      await this.call('sendTransfer', 'POST', 'transfers', wire.transfer, body, {
        'x-idempotency-key': idempotencyKey,
      }),
    );
  }

  async getTransfer(transferId: string): Promise<Transfer> {
    checkId('transfer id', transferId, wire.OPAQUE_ID);
    return toTransfer(await this.call('getTransfer', 'GET', `transfers/${transferId}`, wire.transfer));
  }

  async registerPixKey(idempotencyKey: string, keyType: PixKeyType, key: string): Promise<PixKeyRegistration> {
    checkId('idempotency key', idempotencyKey, wire.OPAQUE_ID);
    const body = checkBody(wire.chaveSolicitada, { chave: key, tipoChave: keyType });
    const w = await this.call('registerPixKey', 'POST', 'keys', wire.chave, body, {
      'x-idempotency-key': idempotencyKey,
    });
    return { id: w.id, key: w.chave, keyType: w.tipoChave, status: w.status };
  }

  async submitInfractionDefense(
    acquirerInfractionId: string,
    idempotencyKey: string,
    defense: InfractionDefense,
  ): Promise<{ defenseId: string }> {
    checkId('infraction id', acquirerInfractionId, wire.OPAQUE_ID);
    checkId('idempotency key', idempotencyKey, wire.OPAQUE_ID);
    const body = checkBody(wire.defesaSolicitada, {
      defesa: defense.text,
      anexos: defense.files.map((f) => ({ nome: f.name, tipo: f.mimeType, conteudo: f.content.toString('base64') })),
    });
    const w = await this.call(
      'submitInfractionDefense',
      'POST',
      `infractions/${acquirerInfractionId}/defense`,
      wire.defesa,
      body,
      {
        'x-idempotency-key': idempotencyKey,
      },
    );
    return { defenseId: w.id };
  }

  // ---- Pix Automático (src/acquirer/README.md "Recurrences") ----

  async createRecLocation(): Promise<RecLocation> {
    const w = await this.call('createRecLocation', 'POST', 'locrec', wire.locRec);
    return { id: w.id, location: w.location, createdAt: w.criacao, ...(w.idRec ? { idRec: w.idRec } : {}) };
  }

  async createRec(req: RecRequest): Promise<Rec> {
    const body = checkBody(wire.recSolicitada, {
      vinculo: {
        contrato: req.contract,
        devedor: toPessoa(req.debtor),
        ...(req.object ? { objeto: req.object.slice(0, 35) } : {}),
      },
      calendario: {
        dataInicial: req.firstDate,
        periodicidade: req.periodicity,
        ...(req.endDate ? { dataFinal: req.endDate } : {}),
      },
      ...(req.amount !== undefined ? { valor: { valorRec: wireAmount(req.amount) } } : {}),
      politicaRetentativa: req.retryPolicy,
      ...(req.locationId !== undefined ? { loc: req.locationId } : {}),
    });
    return toRec(await this.call('createRec', 'POST', 'rec', wire.rec, body));
  }

  async getRec(idRec: string): Promise<Rec> {
    checkId('idRec', idRec, wire.REC_ID);
    return toRec(await this.call('getRec', 'GET', `rec/${idRec}`, wire.rec));
  }

  async cancelRec(idRec: string): Promise<Rec> {
    checkId('idRec', idRec, wire.REC_ID);
    return toRec(await this.call('cancelRec', 'PATCH', `rec/${idRec}`, wire.rec, { status: 'CANCELADA' }));
  }

  async createSolicRec(req: SolicRecRequest): Promise<SolicRec> {
    const d = req.destination;
    const body = checkBody(wire.solicRecSolicitada, {
      idRec: req.idRec,
      calendario: { dataExpiracaoSolicitacao: req.expiresAt },
      destinatario: {
        conta: d.account,
        ispbParticipante: d.ispb,
        ...(d.branch ? { agencia: d.branch } : {}),
        ...(d.document.length === 11 ? { cpf: d.document } : { cnpj: d.document }),
      },
    });
    const w = await this.call('createSolicRec', 'POST', 'solicrec', wire.solicRec, body);
    return { id: w.idSolicRec, idRec: w.idRec, status: w.status, expiresAt: w.calendario.dataExpiracaoSolicitacao };
  }

  async createCobR(req: CobRRequest): Promise<CobR> {
    checkId('txid', req.txid, wire.TXID);
    const r = req.receiver;
    const body = checkBody(wire.cobRSolicitada, {
      idRec: req.idRec,
      calendario: { dataDeVencimento: req.dueDate },
      valor: { original: wireAmount(req.amount) },
      ajusteDiaUtil: false,
      recebedor: { conta: r.account, tipoConta: r.accountType, ...(r.branch ? { agencia: r.branch } : {}) },
      ...(req.description ? { infoAdicional: req.description.slice(0, 140) } : {}),
    });
    return toCobR(await this.call('createCobR', 'PUT', `cobr/${req.txid}`, wire.cobR, body));
  }

  async getCobR(txid: string): Promise<CobR> {
    checkId('txid', txid, wire.TXID);
    return toCobR(await this.call('getCobR', 'GET', `cobr/${txid}`, wire.cobR));
  }

  async cancelCobR(txid: string): Promise<CobR> {
    checkId('txid', txid, wire.TXID);
    return toCobR(await this.call('cancelCobR', 'PATCH', `cobr/${txid}`, wire.cobR, { status: 'CANCELADA' }));
  }

  async retryCobR(txid: string, date: string): Promise<CobR> {
    checkId('txid', txid, wire.TXID);
    checkId('date', date, /^\d{4}-\d{2}-\d{2}$/);
    return toCobR(await this.call('retryCobR', 'POST', `cobr/${txid}/retentativa/${date}`, wire.cobR));
  }

  /**
   * GET of a cob or cobv at `path`, or its removal (PATCH with `removal`): the two kinds differ only
   * in path and wire schema. The txid is checked first, as it goes into the path.
   */
  private chargeCall<S extends z.ZodType>(
    operation: string,
    path: string,
    txid: string,
    schema: S,
    removal?: typeof REMOVAL,
  ): Promise<z.infer<S>> {
    checkId('txid', txid, wire.OPAQUE_ID);
    return this.call(operation, removal ? 'PATCH' : 'GET', path, schema, removal);
  }

  /** One protocol call, timed and counted by `operation` (docs/operations.md "Metrics and logs"). */
  private async call<S extends z.ZodType>(
    operation: string,
    method: string,
    path: string,
    schema: S,
    body?: object,
    headers: Record<string, string> = {},
  ): Promise<z.infer<S>> {
    return timed(operation, () => this.send(method, path, schema, body, headers));
  }

  /** Bearer token, JSON in and out, one resend after a 401. */
  private async send<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    body?: object,
    headers: Record<string, string> = {},
  ): Promise<z.infer<S>> {
    const what = `${method} /${path}`;
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken();
      const res = await this.request(what, method, path, {
        headers: {
          accept: 'application/json',
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status === 401 && attempt === 1) {
        // Expired or revoked before we expected: drop it (unless another caller already did).
        if (this.token?.value === token) this.token = undefined;
        continue;
      }
      if (res.status < 200 || res.status > 299) throw errorForResponse(res.status, what, res.text);
      return parseBody(schema, res.text, what, res.status);
    }
  }

  /** A call answered 2xx without a body to read (PUT /lotecobv/{id}: 202). */
  private async sendNoContent(method: string, path: string, body: object): Promise<void> {
    const what = `${method} /${path}`;
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken();
      const res = await this.request(what, method, path, {
        headers: { accept: 'application/json', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status === 401 && attempt === 1) {
        if (this.token?.value === token) this.token = undefined;
        continue;
      }
      if (res.status < 200 || res.status > 299) throw errorForResponse(res.status, what, res.text);
      return;
    }
  }

  /** Request + body read under one timeout; every failure becomes an AcquirerError. */
  private async request(
    what: string,
    method: string,
    path: string,
    init: { headers: Record<string, string>; body?: string },
  ): Promise<{ status: number; text: string }> {
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    try {
      const url = new URL(path, this.base);
      const res = await this.pool.request({
        path: `${url.pathname}${url.search}`,
        method: method as Dispatcher.HttpMethod,
        headers: init.headers,
        body: init.body,
        signal,
      });
      return { status: res.statusCode, text: await res.body.text() };
    } catch (err) {
      if (signal.aborted)
        throw new AcquirerError('TIMEOUT', `acquirer timed out after ${this.opts.timeoutMs} ms on ${what}`);
      const cause = err instanceof Error ? `: ${err.message}` : '';
      throw new AcquirerError('NETWORK', `acquirer unreachable on ${what}${cause}`);
    }
  }

  private async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.expiresAt) return this.token.value;
    // Concurrent callers share one token request.
    this.tokenRequest ??= timed('oauthToken', () => this.fetchToken()).finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async fetchToken(): Promise<string> {
    const what = 'POST /oauth/token';
    const basic = Buffer.from(`${this.opts.clientId}:${this.opts.clientSecret}`).toString('base64');
    const res = await this.request(what, 'POST', 'oauth/token', {
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: 'grant_type=client_credentials',
    });
    if (res.status < 200 || res.status > 299) throw errorForResponse(res.status, what, res.text);
    const t = parseBody(wire.tokenResponse, res.text, what, res.status);
    const lifeMs = t.expires_in * 1000;
    this.token = {
      value: t.access_token,
      expiresAt: Date.now() + lifeMs - Math.min(TOKEN_SAFETY_MARGIN_MS, lifeMs / 2),
    };
    return t.access_token;
  }
}

/** Runs one acquirer call and records its latency, and its error kind when it fails. */
async function timed<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const result = await fn();
    recordAcquirerCall(operation, (performance.now() - started) / 1000);
    return result;
  } catch (err) {
    recordAcquirerCall(
      operation,
      (performance.now() - started) / 1000,
      err instanceof AcquirerError ? err.code : 'unknown',
    );
    throw err;
  }
}

function invalidRequest(message: string): AcquirerError {
  return new AcquirerError('INVALID_REQUEST', `refused to send to the acquirer: ${message}`);
}

function checkId(name: string, value: string, pattern: RegExp): void {
  // Ids go into the URL path unencoded, so the pattern is also what keeps the path intact.
  if (typeof value !== 'string' || !pattern.test(value))
    throw invalidRequest(`${name} ${JSON.stringify(value)} does not match ${pattern.source}`);
}

function wireAmount(cents: number): string {
  if (!isWireableCents(cents) || cents < 1) throw invalidRequest(`amount ${cents} must be positive integer cents`);
  return centsToWire(cents);
}

function checkBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (!r.success) {
    const why = r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    throw invalidRequest(why);
  }
  return r.data;
}

function parseBody<S extends z.ZodType>(schema: S, text: string, what: string, status: number): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AcquirerError('INVALID_RESPONSE', `acquirer answered ${what} with invalid JSON`, status);
  }
  const r = schema.safeParse(json);
  if (!r.success) {
    const why = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new AcquirerError('INVALID_RESPONSE', `acquirer answered ${what} off protocol: ${why}`.slice(0, 500), status);
  }
  return r.data;
}

function toPessoa(p: { name: string; document: string }): { cpf?: string; cnpj?: string; nome: string } {
  return p.document.length === 11 ? { cpf: p.document, nome: p.name } : { cnpj: p.document, nome: p.name };
}

function fromPessoa(p: { cpf?: string; cnpj?: string; nome: string } | undefined): PixReceived['payer'] {
  const document = p?.cpf ?? p?.cnpj;
  return p && document ? { name: p.nome, document } : undefined;
}

/** Schemas already checked the pattern; this only turns it into cents. */
const cents = (text: string): number => wireToCents(text) ?? Number.NaN;

/** The fields a cob and a cobv share, from either wire shape. */
function chargeOf(w: wire.CobWire | wire.CobvWire): ChargeAtAcquirer {
  return {
    txid: w.txid,
    status: w.status,
    amount: cents(w.valor.original),
    pixCopiaECola: w.pixCopiaECola,
    ...(w.location ? { location: w.location } : {}),
    revision: w.revisao,
    createdAt: w.calendario.criacao,
    pix: (w.pix ?? []).map((p) => ({
      endToEndId: p.endToEndId,
      amount: cents(p.valor),
      paidAt: p.horario,
      ...(p.pagador ? { payer: fromPessoa(p.pagador) } : {}),
    })),
  };
}

function toCob(w: wire.CobWire): Cob {
  return { ...chargeOf(w), expiresIn: w.calendario.expiracao };
}

function toCobv(w: wire.CobvWire): Cobv {
  const { dataDeVencimento, validadeAposVencimento } = w.calendario;
  return { ...chargeOf(w), dueDate: dataDeVencimento, validityAfterDue: validadeAposVencimento };
}

function toRefund(w: wire.DevolucaoWire): Refund {
  return {
    id: w.id,
    rtrId: w.rtrId,
    amount: cents(w.valor),
    status: w.status,
    ...(w.motivo ? { reason: w.motivo } : {}),
  };
}

function toTransfer(w: wire.TransferWire): Transfer {
  return {
    transferId: w.id,
    batchId: w.batchId,
    idempotencyKey: w.idempotencyKey,
    amount: cents(w.valor),
    status: w.status,
    ...(w.motivo ? { reason: w.motivo } : {}),
  };
}

function toRec(w: wire.RecWire): Rec {
  const end = w.encerramento;
  const ending = end?.rejeicao
    ? { kind: 'REFUSED' as const, code: end.rejeicao.codigo, description: end.rejeicao.descricao }
    : end?.cancelamento
      ? {
          kind: 'CANCELED' as const,
          code: end.cancelamento.codigo,
          description: end.cancelamento.descricao,
          requestedBy: end.cancelamento.solicitante,
        }
      : undefined;
  const valorRec = w.valor?.valorRec;
  return {
    idRec: w.idRec,
    status: w.status,
    contract: w.vinculo.contrato,
    debtor: fromPessoa(w.vinculo.devedor) ?? { name: w.vinculo.devedor.nome, document: '' },
    firstDate: w.calendario.dataInicial,
    ...(w.calendario.dataFinal ? { endDate: w.calendario.dataFinal } : {}),
    periodicity: w.calendario.periodicidade,
    ...(valorRec ? { amount: cents(valorRec) } : {}),
    ...(w.politicaRetentativa ? { retryPolicy: w.politicaRetentativa } : {}),
    ...(w.loc ? { location: w.loc.location } : {}),
    ...(w.dadosQR?.pixCopiaECola ? { pixCopiaECola: w.dadosQR.pixCopiaECola } : {}),
    ...(w.ativacao ? { journey: w.ativacao.tipoJornada } : {}),
    history: w.atualizacao.map((a) => ({ status: a.status, at: a.data })),
    ...(ending ? { ending } : {}),
  };
}

function toCobR(w: wire.CobRWire): CobR {
  return {
    txid: w.txid,
    idRec: w.idRec,
    status: w.status,
    amount: cents(w.valor.original),
    dueDate: w.calendario.dataDeVencimento,
    createdAt: w.calendario.criacao,
    ...(w.politicaRetentativa ? { retryPolicy: w.politicaRetentativa } : {}),
    attempts: (w.tentativas ?? []).map((t) => ({
      settlementDate: t.dataLiquidacao,
      type: t.tipo,
      status: t.status,
      endToEndId: t.endToEndId,
      ...(t.rejeicao ? { rejection: { code: t.rejeicao.codigo, description: t.rejeicao.descricao } } : {}),
    })),
    pix: (w.pix ?? []).map((p) => ({ endToEndId: p.endToEndId, amount: cents(p.valor), paidAt: p.horario })),
  };
}
