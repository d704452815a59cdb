/**
 * The simulator's HTTP or HTTPS listener (with mTLS when a client CA is given), as server.ts starts
 * it (docs/production.md "Acquirer mTLS").
 */
import http from 'node:http';
import https from 'node:https';
import type Koa from 'koa';

export interface ListenOptions {
  port?: number;
  host?: string;
  tls?: { cert: Buffer | string; key: Buffer | string; clientCa?: Buffer | string };
}

function createServer(app: Koa, t: ListenOptions['tls']): http.Server {
  // Koa's handler answers its own failures (ctx.onerror) and never rejects: no request is awaited.
  const handle = app.callback();
  const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => void handle(req, res);
  if (!t) return http.createServer(listener);
  return https.createServer(
    {
      cert: t.cert,
      key: t.key,
      // A client without a certificate from clientCa fails the handshake: no request is read.
      ...(t.clientCa ? { ca: t.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
    },
    listener,
  );
}

/** Listens on `port` (0: any free one) of `host` (default 127.0.0.1); the server and its URL. */
export async function listen(app: Koa, opts: ListenOptions): Promise<{ server: http.Server; url: string }> {
  const server = createServer(app, opts.tls);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return { server, url: `${opts.tls ? 'https' : 'http'}://${opts.host ?? '127.0.0.1'}:${port}` };
}

/** Stops listening and drops the kept-alive connections. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
