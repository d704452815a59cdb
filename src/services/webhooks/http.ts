/**
 * One webhook POST (docs/api.md "Receiving webhooks"), built so that a slow or hostile receiver costs
 * at most `timeoutMs` and `maxResponseBytes`: one deadline covers DNS, connect, TLS, headers and
 * body; at most `maxResponseBytes` of the answer are read, then the socket is dropped; redirects
 * are never followed (Node's http client does not follow them, and a 3xx is not a 2xx). A socket
 * goes back to the keep-alive pool only after an answer read to its end (docs/performance.md
 * "Webhook connections"). Node's own http/https modules are enough here and let each new
 * connection use `guardedLookup`, so the address rule applies to the address connected to.
 */
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { BlockedAddressError, isPublicAddress, urlHost } from './url';
import { SpanKind, SpanStatusCode, inSpan, traceHeaders } from '../../observability/tracing';

export interface WebhookPostInput {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  timeoutMs: number;
  maxResponseBytes: number;
  lookup: LookupFunction;
  /** https only and public addresses only (the lookup enforces the latter for host names). */
  requirePublicHttps: boolean;
}

export interface WebhookPostResult {
  /** Null when no response arrived (timeout, refused connection, blocked address). */
  statusCode: number | null;
  /** The first bytes of the answer, as text. */
  response: string;
  /** Why the attempt failed before or while reading the answer; null when a status arrived in time. */
  error: string | null;
  durationMs: number;
}

/** Text columns refuse NUL; a receiver's bytes are stored as lossy UTF-8 without it. */
const asStoredText = (buf: Buffer): string => buf.toString('utf8').replaceAll('\u0000', '');

/**
 * The POST in a client span (docs/operations.md "Tracing") whose `traceparent` goes to the
 * receiver: Node's http module is not covered by the undici instrumentation. The span names the
 * URL without its query, which may hold a merchant's token.
 */
export function postWebhook(input: WebhookPostInput): Promise<WebhookPostResult> {
  const url = new URL(input.url);
  return inSpan(
    'POST',
    {
      kind: SpanKind.CLIENT,
      attributes: { 'http.request.method': 'POST', 'url.full': `${url.origin}${url.pathname}` },
    },
    async (span) => {
      const result = await post({ ...input, headers: { ...input.headers, ...traceHeaders() } });
      if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
      if (result.error !== null || (result.statusCode ?? 0) >= 400)
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? `HTTP ${result.statusCode}` });
      return result;
    },
  );
}

async function post(input: WebhookPostInput): Promise<WebhookPostResult> {
  const started = Date.now();
  const url = new URL(input.url);
  const refused = preflight(url, input.requirePublicHttps);
  if (refused) return { statusCode: null, response: '', error: refused, durationMs: 0 };
  const first = await send(input, url, started);
  // A receiver may close an idle pooled socket just as it is reused: nothing reached it, so the
  // POST goes once more on a new connection (webhook-id makes any delivery safe to repeat).
  return first.resetOnReusedSocket ? (await send(input, url, started)).result : first.result;
}

/** How many pooled sockets a receiver may hold open; beyond it POSTs wait for a free one. */
const POOL = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 4_000, scheduling: 'lifo' } as const;

/** One pool per lookup policy, so a socket opened under one address rule never serves another. */
const pools = new WeakMap<LookupFunction, { http: http.Agent; https: https.Agent }>();

function agentFor(lookup: LookupFunction, protocol: string): http.Agent {
  let pool = pools.get(lookup);
  if (!pool) {
    pool = { http: new http.Agent({ ...POOL, lookup }), https: new https.Agent({ ...POOL, lookup }) };
    pools.set(lookup, pool);
  }
  return protocol === 'https:' ? pool.https : pool.http;
}

interface Sent {
  result: WebhookPostResult;
  resetOnReusedSocket: boolean;
}

function send(input: WebhookPostInput, url: URL, started: number): Promise<Sent> {
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (error: string | null, opts: { keepSocket?: boolean; reset?: boolean } = {}): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!opts.keepSocket) req.destroy();
      const response = asStoredText(Buffer.concat(chunks).subarray(0, input.maxResponseBytes));
      const result = { statusCode, response, error: statusCode === null ? (error ?? 'no response') : null };
      resolve({ result: { ...result, durationMs: Date.now() - started }, resetOnReusedSocket: opts.reset ?? false });
    };

    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      method: 'POST',
      headers: { ...input.headers, 'content-length': String(input.body.length) },
      lookup: input.lookup,
      agent: agentFor(input.lookup, url.protocol),
    });
    const timer = setTimeout(() => finish(`timed out after ${input.timeoutMs} ms`), input.timeoutMs);
    req.on('error', (err: Error & { code?: string }) =>
      finish(err instanceof BlockedAddressError ? `refused: ${err.message}` : describeError(err), {
        reset: req.reusedSocket && statusCode === null && err.code === 'ECONNRESET',
      }),
    );
    req.on('response', (res) => {
      statusCode = res.statusCode ?? null;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received >= input.maxResponseBytes) finish(null);
      });
      res.on('end', () => finish(null, { keepSocket: true }));
      res.on('error', () => finish(null));
    });
    req.end(input.body);
  });
}

/** What the connection's lookup cannot see: the scheme, and a host that is already an address. */
function preflight(url: URL, requirePublicHttps: boolean): string | null {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'refused: not an http(s) URL';
  if (!requirePublicHttps) return null;
  if (url.protocol !== 'https:') return 'refused: https is required';
  const host = urlHost(url);
  if (net.isIP(host) !== 0 && !isPublicAddress(host)) return `refused: ${host} is not a public address`;
  return null;
}

function describeError(err: Error & { code?: string }): string {
  return err.code ? `${err.code}: ${err.message}` : err.message;
}
