/**
 * Connections to Temporal: the client (API side: start and signal workflows) and the native
 * connection the worker polls with. Both point at TEMPORAL_ADDRESS or at the local server that
 * `npm start` started; nothing else in the code knows which.
 */
import { Client, Connection, type ConnectionLike } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';

export interface TemporalClientHandle {
  client: Client;
  connection: ConnectionLike;
  close(): Promise<void>;
}

/**
 * A client over grpc-js (`native` false: the CLIs, the charge client thread) or over the SDK's Rust
 * core (`native`: the API, docs/performance.md "Where a charge's time goes", Native client), whose calls leave
 * the event loop as encoded bytes and come back as bytes. A native connection needs the process's
 * Temporal runtime, which the caller installs first (`installTemporalRuntime`), so that the core's
 * logs reach our logger.
 */
export async function connectTemporalClient(
  address: string,
  namespace: string,
  opts: { native?: boolean } = {},
): Promise<TemporalClientHandle> {
  const connection: ConnectionLike = opts.native
    ? await NativeConnection.connect({ address })
    : await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  return { client, connection, close: () => connection.close() };
}

export function connectWorkerConnection(address: string): Promise<NativeConnection> {
  return NativeConnection.connect({ address });
}
