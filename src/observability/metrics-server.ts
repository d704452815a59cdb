/**
 * A process without the HTTP API (`npm run worker`) serves its metrics on METRICS_PORT:
 * GET /metrics (the same registry the API serves; a worker's counters are charges paid,
 * withdrawal outcomes, webhook attempts) and GET /healthz for the container healthcheck.
 */
import http from 'node:http';
import { metricsTokenMatches, renderMetrics } from './metrics';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(opts: {
  port: number;
  host?: string;
  token?: string;
}): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res
        .writeHead(405, { 'content-type': 'application/json', allow: 'GET' })
        .end(JSON.stringify({ message: 'Method not allowed' }));
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not found' }));
      return;
    }
    if (opts.token && !metricsTokenMatches(req.headers.authorization, opts.token)) {
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ message: 'A valid metrics token is required' }));
      return;
    }
    renderMetrics().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      () =>
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'Metrics unavailable' })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return {
    url: `http://${opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1'}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
