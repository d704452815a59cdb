/**
 * A real TLS (or cleartext) HTTP/2 endpoint in front of the official dev server, for the secured-
 * Temporal tests (docs/testing.md "Secured Temporal"): it terminates TLS with the test CA's server
 * certificate, checks the client certificate (mTLS) and the `authorization: Bearer` API key as
 * Temporal Cloud does, and forwards every gRPC stream as it is. A wrong CA, certificate or key is
 * refused here, in the handshake or with gRPC UNAUTHENTICATED, before any byte reaches the server.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

export interface TlsProxyOptions {
  /** host:port of the server behind. */
  upstream: string;
  tls?: { cert: Buffer; key: Buffer; clientCa?: Buffer };
  apiKey?: string;
  /** Told about each refused handshake or key. */
  warn(message: string): void;
}

export interface RunningTlsProxy {
  address: string;
  close(): Promise<void>;
}

const { HTTP2_HEADER_STATUS, HTTP2_HEADER_CONTENT_TYPE } = http2.constants;

function refuseKey(stream: http2.ServerHttp2Stream): void {
  stream.respond(
    {
      [HTTP2_HEADER_STATUS]: 200,
      [HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      'grpc-status': '16',
      'grpc-message': 'Unauthorized: missing or invalid API key',
    },
    { endStream: true },
  );
}

/** Request headers to send on: everything but the pseudo-headers the upstream session sets. */
function forwardHeaders(headers: http2.IncomingHttpHeaders): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(':') && name !== ':method' && name !== ':path') continue;
    out[name] = value;
  }
  return out;
}

function forward(
  upstream: http2.ClientHttp2Session,
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
) {
  const up = upstream.request(forwardHeaders(headers));
  let trailers: http2.OutgoingHttpHeaders = {};
  up.on('response', (h) => {
    const { [HTTP2_HEADER_STATUS]: status, ...rest } = h;
    if (!stream.destroyed) stream.respond({ [HTTP2_HEADER_STATUS]: status ?? 200, ...rest }, { waitForTrailers: true });
  });
  up.on('trailers', (t) => (trailers = { ...t }));
  stream.on('wantTrailers', () => stream.sendTrailers(trailers));
  stream.pipe(up);
  up.pipe(stream);
  const abort = () => {
    if (!up.destroyed) up.close(http2.constants.NGHTTP2_CANCEL);
    if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
  };
  stream.on('error', abort);
  up.on('error', abort);
  stream.on('close', abort);
}

export async function startTlsProxy(opts: TlsProxyOptions): Promise<RunningTlsProxy> {
  const upstream = http2.connect(`http://${opts.upstream}`);
  upstream.on('error', (err) => opts.warn(`upstream: ${err.message}`));
  const server = opts.tls
    ? http2.createSecureServer({
        cert: opts.tls.cert,
        key: opts.tls.key,
        ...(opts.tls.clientCa ? { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
      })
    : http2.createServer();
  server.on('tlsClientError', (err: Error, socket: TLSSocket) => {
    opts.warn(`TLS handshake refused: ${err.message}`);
    socket.destroy();
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    if (opts.apiKey !== undefined && headers.authorization !== `Bearer ${opts.apiKey}`) {
      opts.warn(`API key refused on ${String(headers[':path'])}`);
      refuseKey(stream);
      return;
    }
    forward(upstream, stream, headers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    async close() {
      upstream.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Long polls (and clients that were refused but never closed) hold sessions open: end them
        // so close() returns.
        for (const session of sessions) session.destroy();
        upstream.destroy();
      });
    },
  };
}
