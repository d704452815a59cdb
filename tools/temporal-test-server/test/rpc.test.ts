/**
 * gRPC surface of this server (not SDK conformance, so it always runs against our server, started
 * in-process, whatever TEMPORAL_TEST_SERVER says): unknown and unimplemented RPCs, malformed
 * requests, namespaces, capabilities.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import { Connection } from '@temporalio/client';
import { silentLogger, startServer, type RunningServer } from '../src/index';

function rawCall(address: string, path: string, body: Uint8Array): Promise<{ code: grpc.status; details: string; bytes?: Buffer }> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from(body),
      (err, bytes) => {
        client.close();
        if (err) resolve({ code: err.code, details: err.details });
        else resolve({ code: grpc.status.OK, details: '', bytes });
      },
    );
  });
}

const WS = '/temporal.api.workflowservice.v1.WorkflowService';

describe('temporal-test-server: gRPC surface', () => {
  let server: RunningServer;
  let conn: Connection;
  // Same shape as the test environment for the assertions below.
  let env: { address: string; connection: Connection };
  before(async () => {
    server = await startServer({ port: 0, logger: silentLogger });
    conn = await Connection.connect({ address: server.address });
    env = { address: server.address, connection: conn };
  });
  after(async () => {
    await conn.close();
    await server.close();
  });

  it('answers UNIMPLEMENTED naming an RPC it does not implement', async () => {
    const r = await rawCall(env.address, `${WS}/UpdateWorkflowExecution`, new Uint8Array());
    assert.equal(r.code, grpc.status.UNIMPLEMENTED);
    assert.match(r.details, /UpdateWorkflowExecution/);
    const unknown = await rawCall(env.address, '/temporal.api.operatorservice.v1.OperatorService/NoSuchThing', new Uint8Array());
    assert.equal(unknown.code, grpc.status.UNIMPLEMENTED);
    assert.match(unknown.details, /NoSuchThing/);
  });

  it('answers INVALID_ARGUMENT to bytes that are not the request message', async () => {
    const r = await rawCall(env.address, `${WS}/StartWorkflowExecution`, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    assert.equal(r.code, grpc.status.INVALID_ARGUMENT);
  });

  it('answers INVALID_ARGUMENT to requests missing required fields, and bad task tokens', async () => {
    const svc = env.connection.workflowService;
    await assert.rejects(svc.startWorkflowExecution({ namespace: 'default' }), (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT);
    await assert.rejects(
      svc.startWorkflowExecution({ namespace: 'default', workflowId: 'x', workflowType: { name: 'y' } }),
      (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT && /TaskQueue/.test(e.details),
    );
    await assert.rejects(
      svc.respondWorkflowTaskCompleted({ taskToken: Buffer.from('garbage'), namespace: 'default' }),
      (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT,
    );
    await assert.rejects(
      svc.respondActivityTaskCompleted({ taskToken: Buffer.from('{"t":"a","r":"nope","s":1,"a":1}'), namespace: 'default' }),
      (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND,
    );
    await assert.rejects(
      svc.listWorkflowExecutions({ namespace: 'default', query: 'StartTime > 5 OR x' }),
      (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT,
    );
  });

  it('answers NOT_FOUND for unknown namespaces and workflows, and serves registered namespaces', async () => {
    const svc = env.connection.workflowService;
    await assert.rejects(svc.describeNamespace({ namespace: 'nope' }), (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND);
    await assert.rejects(
      svc.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: 'never-started' } }),
      (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND,
    );
    const name = `ns-${Date.now()}`;
    await svc.registerNamespace({ namespace: name, workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(86400) } });
    const d = await svc.describeNamespace({ namespace: name });
    assert.equal(d.namespaceInfo?.name, name);
    assert.equal(d.namespaceInfo?.state, temporal.api.enums.v1.NamespaceState.NAMESPACE_STATE_REGISTERED);
  });

  it('reports the capabilities the SDK checks, and keeps serving after all of the above', async () => {
    const info = await env.connection.workflowService.getSystemInfo({});
    assert.equal(info.capabilities?.sdkMetadata, true);
    assert.equal(info.capabilities?.signalAndQueryHeader, true);
  });
});
