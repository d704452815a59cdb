/**
 * The one HTTP client of the acquirer (BCB API Pix style + a transfers API in the same style).
 *
 * OAuth2 client credentials: the token is cached until 30 s before it expires and fetched again
 * once on a 401. Every call has a timeout (AbortSignal). The client does not retry money-moving
 * calls itself: callers (Temporal activities) retry by policy, and every call is idempotent by
 * construction (txid, refund id, transfer idempotency key).
 */
import { AcquirerError, errorForStatus } from './errors';
import { centsToWire, wireToCents } from './money-wire';
import type {
  Acquirer,
  Cob,
  CobRequest,
  CobStatus,
  PixKeyRegistration,
  PixKeyStatusAtAcquirer,
  Refund,
  RefundStatus,
  Transfer,
  TransferRequest,
  TransferStatus,
} from './types';

export interface HttpAcquirerOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
}

interface WireCob {
  txid: string;
  status: CobStatus;
  valor: { original: string };
  pixCopiaECola: string;
  calendario: { criacao: string; expiracao: number };
}

interface WireRefund {
  id: string;
  rtrId: string;
  valor: string;
  status: RefundStatus;
  motivo?: string;
}

interface WireTransfer {
  id: string;
  batchId: string;
  valor: string;
  status: TransferStatus;
  motivo?: string;
}

const SAFETY_MARGIN_MS = 30_000;

export class HttpAcquirer implements Acquirer {
  private token: { value: string; expiresAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;

  constructor(private readonly opts: HttpAcquirerOptions) {}

  async createCob(req: CobRequest): Promise<Cob> {
    const body: Record<string, unknown> = {
      calendario: { expiracao: req.expiresIn },
      valor: { original: centsToWire(req.amount) },
      chave: req.key,
    };
    if (req.description) body.solicitacaoPagador = req.description.slice(0, 140);
    if (req.debtor) {
      const doc = req.debtor.document;
      body.devedor = doc.length === 11 ? { cpf: doc, nome: req.debtor.name } : { cnpj: doc, nome: req.debtor.name };
    }
    return toCob(await this.call<WireCob>('PUT', `/cob/${encodeURIComponent(req.txid)}`, body));
  }

  async getCob(txid: string): Promise<Cob> {
    return toCob(await this.call<WireCob>('GET', `/cob/${encodeURIComponent(txid)}`));
  }

  async removeCob(txid: string): Promise<Cob> {
    return toCob(
      await this.call<WireCob>('PATCH', `/cob/${encodeURIComponent(txid)}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }),
    );
  }

  async requestRefund(e2eId: string, refundId: string, amount: number, reason?: string): Promise<Refund> {
    const body: Record<string, unknown> = { valor: centsToWire(amount) };
    if (reason) body.descricao = reason.slice(0, 140);
    return toRefund(await this.call<WireRefund>('PUT', refundPath(e2eId, refundId), body));
  }

  async getRefund(e2eId: string, refundId: string): Promise<Refund> {
    return toRefund(await this.call<WireRefund>('GET', refundPath(e2eId, refundId)));
  }

  async sendTransfer(idempotencyKey: string, req: TransferRequest): Promise<Transfer> {
    const body = { valor: centsToWire(req.amount), chave: req.pixKey, tipoChave: req.pixKeyType, descricao: req.description };
    return toTransfer(await this.call<WireTransfer>('POST', '/transfers', body, { 'x-idempotency-key': idempotencyKey }));
  }

  async getTransfer(id: string): Promise<Transfer> {
    return toTransfer(await this.call<WireTransfer>('GET', `/transfers/${encodeURIComponent(id)}`));
  }

  async registerPixKey(idempotencyKey: string, keyType: TransferRequest['pixKeyType'], key: string): Promise<PixKeyRegistration> {
    const w = await this.call<{ id: string; chave: string; tipoChave: TransferRequest['pixKeyType']; status: PixKeyStatusAtAcquirer }>(
      'POST',
      '/keys',
      { chave: key, tipoChave: keyType },
      { 'x-idempotency-key': idempotencyKey },
    );
    return { id: w.id, key: w.chave, keyType: w.tipoChave, status: w.status };
  }

  private async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken();
      const res = await this.fetch(method, path, {
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status === 401 && attempt === 1) {
        this.token = undefined; // expired or revoked early: fetch a new one, once
        continue;
      }
      const text = await res.text();
      if (!res.ok) throw errorForStatus(res.status, text);
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new AcquirerError(`acquirer answered ${method} ${path} with invalid JSON`, false, res.status);
      }
    }
  }

  private async fetch(method: string, path: string, init: { headers: Record<string, string>; body?: string }): Promise<Response> {
    try {
      return await fetch(new URL(path.replace(/^\//, ''), this.opts.baseUrl.replace(/\/?$/, '/')), {
        method,
        headers: init.headers,
        body: init.body,
        redirect: 'error',
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new AcquirerError(timedOut ? `acquirer timed out on ${method} ${path}` : `acquirer unreachable on ${method} ${path}`, true);
    }
  }

  private async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.expiresAt) return this.token.value;
    // Concurrent callers share one token request.
    this.tokenRequest ??= this.fetchToken().finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async fetchToken(): Promise<string> {
    const basic = Buffer.from(`${this.opts.clientId}:${this.opts.clientSecret}`).toString('base64');
    const res = await this.fetch('POST', '/oauth/token', {
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const text = await res.text();
    if (!res.ok) throw errorForStatus(res.status, `token: ${text}`);
    const parsed = JSON.parse(text) as { access_token?: unknown; expires_in?: unknown };
    if (typeof parsed.access_token !== 'string' || typeof parsed.expires_in !== 'number') {
      throw new AcquirerError('acquirer token response is malformed', false, res.status);
    }
    this.token = { value: parsed.access_token, expiresAt: Date.now() + parsed.expires_in * 1000 - SAFETY_MARGIN_MS };
    return this.token.value;
  }
}

function refundPath(e2eId: string, refundId: string): string {
  return `/pix/${encodeURIComponent(e2eId)}/devolucao/${encodeURIComponent(refundId)}`;
}

function amountOf(text: string): number {
  const cents = wireToCents(text);
  if (cents === null) throw new AcquirerError(`acquirer sent an invalid amount: ${text}`, false);
  return cents;
}

function toCob(w: WireCob): Cob {
  return {
    txid: w.txid,
    status: w.status,
    amount: amountOf(w.valor.original),
    pixCopiaECola: w.pixCopiaECola,
    createdAt: w.calendario.criacao,
    expiresIn: w.calendario.expiracao,
  };
}

function toRefund(w: WireRefund): Refund {
  return { id: w.id, rtrId: w.rtrId, amount: amountOf(w.valor), status: w.status, reason: w.motivo };
}

function toTransfer(w: WireTransfer): Transfer {
  return { id: w.id, batchId: w.batchId, amount: amountOf(w.valor), status: w.status, reason: w.motivo };
}
