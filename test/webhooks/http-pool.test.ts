/**
 * The webhook POST's keep-alive pool (docs/performance.md "Webhook connections") against a real
 * receiver that counts its connections: a socket is reused only after an answer read to its end,
 * and a receiver that resets a reused socket gets the POST once more on a new one.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { postWebhook, type WebhookPostInput } from '../../src/services/webhooks/http';
import { guardedLookup, systemResolver } from '../../src/services/webhooks/url';

interface Receiver {
  url: string;
  connections: () => number;
  requests: () => number;
  close: () => Promise<void>;
}

/** `answer` gets the request's number on its socket (1 for a socket's first request). */
async function receiver(
  answer: (res: http.ServerResponse, onSocket: number, socket: Socket) => void,
): Promise<Receiver> {
  let connections = 0;
  let requests = 0;
  const perSocket = new WeakMap<Socket, number>();
  const server = http.createServer((req, res) => {
    requests += 1;
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    req.resume();
    req.on('end', () => answer(res, n, req.socket));
  });
  server.keepAliveTimeout = 10_000;
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    connections: () => connections,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('webhook POST connection pool', () => {
  let r: Receiver | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  // A fresh lookup per test is a fresh pool: no test reuses another's sockets.
  const input = (url: string, over: Partial<WebhookPostInput> = {}): WebhookPostInput => ({
    url,
    body: Buffer.from('{"type":"charge.paid"}'),
    headers: { 'content-type': 'application/json' },
    timeoutMs: 2_000,
    maxResponseBytes: 64,
    lookup: guardedLookup(systemResolver, false),
    requirePublicHttps: false,
    ...over,
  });

  it('reuses one connection for POSTs whose answers were read to the end', async () => {
    r = await receiver((res) => res.end('ok'));
    const req = input(r.url);
    for (let i = 0; i < 3; i++) {
      const result = await postWebhook(req);
      assert.equal(result.statusCode, 200);
      assert.equal(result.response, 'ok');
    }
    assert.equal(r.connections(), 1);
  });

  it('drops the socket of an answer cut at the response limit', async () => {
    r = await receiver((res) => res.end('x'.repeat(10_000)));
    const req = input(r.url);
    const first = await postWebhook(req);
    assert.equal(first.statusCode, 200);
    assert.equal(first.response.length, 64);
    await postWebhook(req);
    assert.equal(r.connections(), 2);
  });

  it('drops the socket of an attempt that timed out', async () => {
    let hold = true;
    r = await receiver((res) => (hold ? undefined : res.end('late')));
    const req = input(r.url, { timeoutMs: 200 });
    const timedOut = await postWebhook(req);
    assert.equal(timedOut.statusCode, null);
    assert.match(timedOut.error ?? '', /timed out after 200 ms/);
    hold = false;
    const next = await postWebhook(req);
    assert.equal(next.statusCode, 200);
    assert.equal(r.connections(), 2);
  });

  it('resends once on a new connection when a reused socket is reset', async () => {
    r = await receiver((res, onSocket, socket) => (onSocket === 2 ? socket.destroy() : res.end('ok')));
    const req = input(r.url);
    assert.equal((await postWebhook(req)).statusCode, 200);
    const second = await postWebhook(req);
    assert.equal(second.statusCode, 200);
    assert.equal(second.error, null);
    assert.equal(r.requests(), 3);
    assert.equal(r.connections(), 2);
  });

  it('does not resend when a fresh connection is reset', async () => {
    r = await receiver((_res, _n, socket) => socket.destroy());
    const result = await postWebhook(input(r.url));
    assert.equal(result.statusCode, null);
    assert.match(result.error ?? '', /ECONNRESET|socket hang up/);
    assert.equal(r.requests(), 1);
  });
});
