/**
 * A real local HTTP server standing in for the service's /v1/acquirer/* callback routes: records
 * what arrives (raw bytes and headers) and answers with the status a test chooses.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  raw: string;
  headers: http.IncomingHttpHeaders;
  answered: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Status to answer the next requests with (consumed one by one), then 200. */
  answerNext(...statuses: number[]): void;
  /** Resolves with the matching deliveries once `count` of them have arrived. */
  waitFor(match: (r: Received) => boolean, count?: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const queued: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = queued.shift() ?? 200;
      received.push({
        path: req.url ?? '',
        raw: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers,
        answered: status,
      });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answerNext: (...s) => queued.push(...s),
    async waitFor(match, count = 1, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hits = received.filter(match);
        if (hits.length >= count) return hits;
        if (Date.now() > until) throw new Error(`timed out waiting for ${count} callback(s); got ${hits.length}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
