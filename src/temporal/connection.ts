/**
 * Connections to Temporal: the client (API side: start and signal workflows) and the native
 * connection the worker polls with. Both point at TEMPORAL_ADDRESS or at the local server that
 * `npm start` started; nothing else in the code knows which.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';

export interface TemporalClientHandle {
  client: Client;
  connection: Connection;
  close(): Promise<void>;
}

export async function connectTemporalClient(address: string, namespace: string): Promise<TemporalClientHandle> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  return { client, connection, close: () => connection.close() };
}

export function connectWorkerConnection(address: string): Promise<NativeConnection> {
  return NativeConnection.connect({ address });
}
