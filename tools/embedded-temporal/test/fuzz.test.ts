/**
 * No request can hurt the server: every WorkflowService method gets an empty message and random
 * bytes; none may answer INTERNAL, and the server must keep serving. Runs against this server
 * in-process (it is a property of our server, not of the SDK).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import protoRoot = require('@temporalio/proto/protos/root');
import { Connection } from '@temporalio/client';
import { silentLogger, startServer } from '../src/index';

interface ServiceLike {
  methods: Record<string, unknown>;
}
const root = protoRoot as unknown as { lookupService(name: string): ServiceLike };

function call(client: grpc.Client, path: string, body: Buffer): Promise<grpc.status> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      new grpc.Metadata(),
      { deadline: Date.now() + 3000 },
      (err) => resolve(err ? err.code : grpc.status.OK),
    );
  });
}

describe('embedded-temporal: robustness', () => {
  it('survives empty and random requests to every WorkflowService method without INTERNAL errors', async function () {
    this.timeout(60_000);
    const server = await startServer({ port: 0, logger: silentLogger });
    const client = new grpc.Client(server.address, grpc.credentials.createInsecure());
    const conn = await Connection.connect({ address: server.address });
    try {
      const methods = Object.keys(root.lookupService('temporal.api.workflowservice.v1.WorkflowService').methods);
      const internal: string[] = [];
      await Promise.all(
        methods.map(async (m) => {
          const path = `/temporal.api.workflowservice.v1.WorkflowService/${m}`;
          for (const body of [Buffer.alloc(0), randomBytes(7), randomBytes(64), randomBytes(300)]) {
            const code = await call(client, path, body);
            if (code === grpc.status.INTERNAL || code === grpc.status.UNKNOWN)
              internal.push(`${m}: ${grpc.status[code]}`);
          }
        }),
      );
      assert.deepEqual(internal, []);
      const info = await conn.workflowService.getSystemInfo({});
      assert.ok(info.serverVersion);
    } finally {
      client.close();
      await conn.close();
      await server.close();
    }
  });
});
