/**
 * Connections to Temporal: the client (API side: start and signal workflows) and the native
 * connection the worker polls with. Both point at TEMPORAL_ADDRESS or at the local server that
 * `npm start` started; nothing else in the code knows which. Against a secured cluster or Temporal
 * Cloud both carry the same TLS, client certificate and API key (`temporalSecurity`,
 * docs/production.md "Connecting to a secured Temporal cluster or Temporal Cloud").
 */
import fs from 'node:fs';
import { Client, Connection, type ConnectionLike } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config';
import { temporalClientInterceptors } from '../observability/tracing';

/**
 * How to reach a secured Temporal: data only (PEM bytes, strings), so it can cross to the client
 * thread as it is. `tls: false` is cleartext (an API key is then sent in the clear: tests only).
 */
export interface TemporalSecurity {
  tls:
    | false
    | {
        /** PEM CA of the server's certificate; unset: the system's trusted CAs. */
        serverRootCACertificate?: Buffer;
        /** PEM client certificate and key (mTLS). */
        clientCertPair?: { crt: Buffer; key: Buffer };
        /** Name checked against the server's certificate and sent as SNI. */
        serverNameOverride?: string;
      };
  apiKey?: string;
}

type SecurityConfig = Pick<
  Config,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_CA_PATH'
  | 'TEMPORAL_TLS_CERT_PATH'
  | 'TEMPORAL_TLS_KEY_PATH'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_API_KEY'
>;

/**
 * The TEMPORAL_TLS_* and TEMPORAL_API_KEY settings, files read now (so a rotated certificate is
 * picked up by a restart). Undefined when none is set: a cleartext connection, as to the local server.
 */
export function temporalSecurity(config: SecurityConfig): TemporalSecurity | undefined {
  if (!config.TEMPORAL_ADDRESS) return undefined;
  const anyTls =
    config.TEMPORAL_TLS_CA_PATH !== undefined ||
    config.TEMPORAL_TLS_CERT_PATH !== undefined ||
    config.TEMPORAL_TLS_SERVER_NAME !== undefined;
  // As the SDK: an API key implies TLS unless TLS is turned off explicitly.
  const tlsOn = config.TEMPORAL_TLS ?? (anyTls || config.TEMPORAL_API_KEY !== undefined);
  if (!tlsOn && config.TEMPORAL_API_KEY === undefined) return undefined;
  const read = (file: string | undefined): Buffer | undefined =>
    file === undefined ? undefined : fs.readFileSync(file);
  const ca = read(config.TEMPORAL_TLS_CA_PATH);
  const crt = read(config.TEMPORAL_TLS_CERT_PATH);
  const key = read(config.TEMPORAL_TLS_KEY_PATH);
  return {
    tls: tlsOn && {
      ...(ca ? { serverRootCACertificate: ca } : {}),
      ...(crt && key ? { clientCertPair: { crt, key } } : {}),
      ...(config.TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME } : {}),
    },
    ...(config.TEMPORAL_API_KEY !== undefined ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}

/** The SDK's connection options for `security` (the same for grpc-js and the Rust core). */
function securityOptions(security: TemporalSecurity | undefined): {
  tls?: TemporalSecurity['tls'];
  apiKey?: string;
} {
  if (!security) return {};
  return { tls: security.tls, ...(security.apiKey !== undefined ? { apiKey: security.apiKey } : {}) };
}

export interface TemporalClientHandle {
  client: Client;
  connection: ConnectionLike;
  close(): Promise<void>;
}

/**
 * A client over grpc-js (the CLIs, the charge client thread) or the SDK's Rust core (`native`, the
 * API: docs/performance.md "Where a charge's time goes"); a native one needs the process's Temporal
 * runtime installed first (`installTemporalRuntime`) so that the core's logs reach our logger.
 */
export async function connectTemporalClient(
  address: string,
  namespace: string,
  opts: { native?: boolean; security?: TemporalSecurity } = {},
): Promise<TemporalClientHandle> {
  const secured = securityOptions(opts.security);
  const connection: ConnectionLike = opts.native
    ? await NativeConnection.connect({ address, ...secured })
    : await Connection.connect({ address, ...secured });
  return { client: clientOver(connection, namespace), connection, close: () => connection.close() };
}

/** A client over an open connection (the worker's own, for the starts its activities make). */
export function clientOver(connection: ConnectionLike, namespace: string): Client {
  // With tracing on, every start and signal carries the caller's trace (docs/operations.md "Tracing").
  const interceptors = temporalClientInterceptors();
  return new Client({ connection, namespace, ...(interceptors ? { interceptors } : {}) });
}

export function connectWorkerConnection(address: string, security?: TemporalSecurity): Promise<NativeConnection> {
  return NativeConnection.connect({ address, ...securityOptions(security) });
}
