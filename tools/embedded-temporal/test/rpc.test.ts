/**
 * gRPC surface of this server (not SDK conformance, so it always runs against our server, started
 * in-process, whatever TEMPORAL_TEST_SERVER says): unknown and unimplemented RPCs, malformed
 * requests, namespaces, capabilities.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import { Connection } from '@temporalio/client';
import { silentLogger, startServer, type RunningServer } from '../src/index';

function rawCall(
  address: string,
  path: string,
  body: Uint8Array,
): Promise<{ code: grpc.status; details: string; bytes?: Buffer }> {
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

/** One unary call over plain HTTP/2, with the message framed and compressed as given. */
function http2Call(
  address: string,
  path: string,
  message: Uint8Array,
  encoding: 'gzip' | 'deflate' | 'identity',
  corrupt = false,
  extraHeaders: http2.OutgoingHttpHeaders = {},
): Promise<{ status: number; details: string; body: Buffer }> {
  const compressed = corrupt
    ? Buffer.from('definitely not compressed data')
    : encoding === 'gzip'
      ? zlib.gzipSync(message)
      : encoding === 'deflate'
        ? zlib.deflateSync(message)
        : Buffer.from(message);
  const frame = Buffer.alloc(5 + compressed.length);
  frame.writeUInt8(encoding === 'identity' ? 0 : 1, 0);
  frame.writeUInt32BE(compressed.length, 1);
  compressed.copy(frame, 5);
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.on('error', reject);
    const req = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(encoding === 'identity' ? {} : { 'grpc-encoding': encoding }),
      ...extraHeaders,
    });
    const chunks: Buffer[] = [];
    let status = -1;
    let details = '';
    const take = (h: http2.IncomingHttpHeaders): void => {
      if (h['grpc-status'] !== undefined) status = Number(h['grpc-status']);
      if (typeof h['grpc-message'] === 'string') details = decodeURIComponent(h['grpc-message']);
    };
    req.on('response', take);
    req.on('trailers', take);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      session.close();
      const all = Buffer.concat(chunks);
      resolve({ status, details, body: all.length >= 5 ? all.subarray(5) : Buffer.alloc(0) });
    });
    req.on('error', reject);
    req.end(frame);
  });
}

const WS = '/temporal.api.workflowservice.v1.WorkflowService';

describe('embedded-temporal: gRPC surface', () => {
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
    const r = await rawCall(env.address, `${WS}/CreateSchedule`, new Uint8Array());
    assert.equal(r.code, grpc.status.UNIMPLEMENTED);
    assert.match(r.details, /CreateSchedule/);
    const unknown = await rawCall(
      env.address,
      '/temporal.api.operatorservice.v1.OperatorService/NoSuchThing',
      new Uint8Array(),
    );
    assert.equal(unknown.code, grpc.status.UNIMPLEMENTED);
    assert.match(unknown.details, /NoSuchThing/);
  });

  it('answers INVALID_ARGUMENT to bytes that are not the request message', async () => {
    const r = await rawCall(
      env.address,
      `${WS}/StartWorkflowExecution`,
      Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]),
    );
    assert.equal(r.code, grpc.status.INVALID_ARGUMENT);
  });

  it('answers INVALID_ARGUMENT to requests missing required fields, and bad task tokens', async () => {
    const svc = env.connection.workflowService;
    await assert.rejects(
      svc.startWorkflowExecution({ namespace: 'default' }),
      (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT,
    );
    await assert.rejects(
      svc.startWorkflowExecution({ namespace: 'default', workflowId: 'x', workflowType: { name: 'y' } }),
      (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT && /TaskQueue/.test(e.details),
    );
    await assert.rejects(
      svc.respondWorkflowTaskCompleted({ taskToken: Buffer.from('garbage'), namespace: 'default' }),
      (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT,
    );
    await assert.rejects(
      svc.respondActivityTaskCompleted({
        taskToken: Buffer.from('{"t":"a","r":"nope","s":1,"a":1}'),
        namespace: 'default',
      }),
      (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND,
    );
    await assert.rejects(
      svc.listWorkflowExecutions({ namespace: 'default', query: 'StartTime > 5 OR x' }),
      (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT,
    );
  });

  it('answers NOT_FOUND for unknown namespaces and workflows, and serves registered namespaces', async () => {
    const svc = env.connection.workflowService;
    await assert.rejects(
      svc.describeNamespace({ namespace: 'nope' }),
      (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND,
    );
    await assert.rejects(
      svc.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: 'never-started' } }),
      (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND,
    );
    const name = `ns-${Date.now()}`;
    await svc.registerNamespace({
      namespace: name,
      workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(86400) },
    });
    const d = await svc.describeNamespace({ namespace: name });
    assert.equal(d.namespaceInfo?.name, name);
    assert.equal(d.namespaceInfo?.state, temporal.api.enums.v1.NamespaceState.NAMESPACE_STATE_REGISTERED);
  });

  it('accepts gzip- and deflate-compressed requests (as the Rust-core client sends), large and corrupt ones too', async () => {
    const ws = temporal.api.workflowservice.v1;
    const describe = ws.DescribeNamespaceRequest.encode({ namespace: 'default' }).finish();
    for (const encoding of ['gzip', 'deflate'] as const) {
      const r = await http2Call(env.address, `${WS}/DescribeNamespace`, describe, encoding);
      assert.equal(r.status, grpc.status.OK, r.details);
      assert.equal(ws.DescribeNamespaceResponse.decode(r.body).namespaceInfo?.name, 'default');
    }
    // Large enough for the asynchronous inflate path.
    const name = `big-${Date.now()}`;
    const big = ws.RegisterNamespaceRequest.encode({
      namespace: name,
      description: 'x'.repeat(6 * 1024 * 1024),
    }).finish();
    const reg = await http2Call(env.address, `${WS}/RegisterNamespace`, big, 'gzip');
    assert.equal(reg.status, grpc.status.OK, reg.details);
    // (Read back over plain HTTP/2: the answer is larger than the SDK client's 4 MiB default.)
    const d = await http2Call(
      env.address,
      `${WS}/DescribeNamespace`,
      ws.DescribeNamespaceRequest.encode({ namespace: name }).finish(),
      'gzip',
    );
    assert.equal(ws.DescribeNamespaceResponse.decode(d.body).namespaceInfo?.description?.length, 6 * 1024 * 1024);
    // Corrupt compressed bytes: INTERNAL (as grpc-js answers), and the server keeps serving.
    const bad = await http2Call(env.address, `${WS}/DescribeNamespace`, describe, 'gzip', true);
    assert.equal(bad.status, grpc.status.INTERNAL);
    const again = await http2Call(env.address, `${WS}/DescribeNamespace`, describe, 'gzip');
    assert.equal(again.status, grpc.status.OK);
  });

  it("asks the SDK's Rust-core connection to stop compressing (at GetSystemInfo only) and keeps serving every other compressed request", async () => {
    const ws = temporal.api.workflowservice.v1;
    const info = ws.GetSystemInfoRequest.encode({}).finish();
    // As the TypeScript SDK's native connection sends it (tonic, client-name/-version of the SDK).
    const core = { 'user-agent': 'tonic/0.14.6', 'client-name': 'temporal-typescript', 'client-version': '1.24.0' };
    const refused = await http2Call(env.address, `${WS}/GetSystemInfo`, info, 'gzip', false, core);
    assert.equal(refused.status, grpc.status.UNIMPLEMENTED);
    // Core's Connection::connect connects again uncompressed on UNIMPLEMENTED naming "grpc-encoding".
    assert.match(refused.details.toLowerCase(), /grpc-encoding/);
    const plain = await http2Call(env.address, `${WS}/GetSystemInfo`, info, 'identity', false, core);
    assert.equal(plain.status, grpc.status.OK, plain.details);
    assert.equal(ws.GetSystemInfoResponse.decode(plain.body).capabilities?.sdkMetadata, true);
    // Other methods from that client, and GetSystemInfo from clients not known to fall back
    // (older SDKs, other client names, grpc-js), are served compressed as before.
    const describe = ws.DescribeNamespaceRequest.encode({ namespace: 'default' }).finish();
    const other = await http2Call(env.address, `${WS}/DescribeNamespace`, describe, 'gzip', false, core);
    assert.equal(other.status, grpc.status.OK, other.details);
    for (const headers of [
      { ...core, 'client-version': '1.23.2' },
      { ...core, 'client-name': 'temporal-python' },
      { ...core, 'user-agent': 'grpc-node-js/1.14.7' },
      {},
    ]) {
      const r = await http2Call(env.address, `${WS}/GetSystemInfo`, info, 'gzip', false, headers);
      assert.equal(r.status, grpc.status.OK, `${JSON.stringify(headers)}: ${r.details}`);
    }
  });

  it("hands activities to the completing worker eagerly when asked, on the workflow's own queue only", async () => {
    const svc = env.connection.workflowService;
    const taskQueue = `eager-${Date.now()}`;
    const otherQueue = `${taskQueue}-other`;
    const workflowId = `eager-wf-${Date.now()}`;
    await svc.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      workflowType: { name: 'w' },
      taskQueue: { name: taskQueue },
      requestId: workflowId,
    });
    const wft = await svc.pollWorkflowTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue },
      identity: 'tester',
    });
    assert.ok(wft.taskToken && wft.taskToken.length > 0);
    const schedule = (activityId: string, queue: string, eager: boolean): temporal.api.command.v1.ICommand => ({
      commandType: temporal.api.enums.v1.CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
      scheduleActivityTaskCommandAttributes: {
        activityId,
        activityType: { name: 'act' },
        taskQueue: { name: queue },
        startToCloseTimeout: { seconds: Long.fromNumber(30) },
        requestEagerExecution: eager,
      },
    });
    const done = await svc.respondWorkflowTaskCompleted({
      namespace: 'default',
      taskToken: wft.taskToken,
      identity: 'tester',
      commands: [
        schedule('eager', taskQueue, true),
        schedule('polled', taskQueue, false),
        schedule('elsewhere', otherQueue, true),
      ],
    });
    assert.deepEqual(
      done.activityTasks.map((t) => [t.activityId, t.attempt]),
      [['eager', 1]],
    );
    const eager = done.activityTasks[0];
    assert.ok(
      eager.scheduledTime &&
        eager.currentAttemptScheduledTime &&
        eager.startToCloseTimeout &&
        eager.scheduleToCloseTimeout,
    );
    // The other two wait for pollers on their queues.
    const polled = await svc.pollActivityTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue },
      identity: 'tester',
    });
    assert.equal(polled.activityId, 'polled');
    const elsewhere = await svc.pollActivityTaskQueue({
      namespace: 'default',
      taskQueue: { name: otherQueue },
      identity: 'tester',
    });
    assert.equal(elsewhere.activityId, 'elsewhere');
    const described = await svc.describeWorkflowExecution({ namespace: 'default', execution: { workflowId } });
    assert.equal(described.pendingActivities.length, 3);
    assert.ok(
      described.pendingActivities.every(
        (a) => a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
      ),
    );
    // The eager task's token is a normal started attempt: completing it writes Started + Completed.
    await svc.respondActivityTaskCompleted({ namespace: 'default', taskToken: eager.taskToken, identity: 'tester' });
    const history = await svc.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId } });
    const types = (history.history?.events ?? []).map((e) => e.eventType);
    const ET = temporal.api.enums.v1.EventType;
    assert.ok(
      types.includes(ET.EVENT_TYPE_ACTIVITY_TASK_STARTED) && types.includes(ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
    );
    await svc.terminateWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId } });
  });

  it('returns the next workflow task inline (partial history) when the worker asks and one is ready', async () => {
    const svc = env.connection.workflowService;
    const ET = temporal.api.enums.v1.EventType;
    const taskQueue = `inline-${Date.now()}`;
    const sticky = `${taskQueue}-sticky`;
    const workflowId = `inline-wf-${Date.now()}`;
    await svc.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      workflowType: { name: 'w' },
      taskQueue: { name: taskQueue },
      requestId: workflowId,
    });
    const first = await svc.pollWorkflowTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue },
      identity: 'tester',
    });
    // A signal while the task runs is buffered; completing the task then schedules a new one.
    await svc.signalWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId },
      signalName: 's',
      identity: 'tester',
    });
    const stickyAttributes = {
      workerTaskQueue: { name: sticky, normalName: taskQueue },
      scheduleToStartTimeout: { seconds: Long.fromNumber(10) },
    };
    const done = await svc.respondWorkflowTaskCompleted({
      namespace: 'default',
      taskToken: first.taskToken,
      identity: 'tester',
      stickyAttributes,
      returnNewWorkflowTask: true,
    });
    const next = done.workflowTask;
    assert.ok(next?.taskToken && next.taskToken.length > 0, 'a workflow task came back inline');
    assert.equal(Number(next.previousStartedEventId), 3);
    assert.deepEqual(
      (next.history?.events ?? []).map((e) => [Number(e.eventId), e.eventType]),
      [
        [4, ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED],
        [5, ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED],
        [6, ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED],
        [7, ET.EVENT_TYPE_WORKFLOW_TASK_STARTED],
      ],
    );
    assert.equal(Number(next.startedEventId), 7);
    assert.equal(next.workflowExecutionTaskQueue?.name, taskQueue);
    // Without a ready task (or without the flag) nothing comes back inline.
    const last = await svc.respondWorkflowTaskCompleted({
      namespace: 'default',
      taskToken: next.taskToken,
      identity: 'tester',
      stickyAttributes,
      returnNewWorkflowTask: true,
      commands: [
        {
          commandType: temporal.api.enums.v1.CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
          completeWorkflowExecutionCommandAttributes: {},
        },
      ],
    });
    assert.equal(last.workflowTask ?? null, null);
    const described = await svc.describeWorkflowExecution({ namespace: 'default', execution: { workflowId } });
    assert.equal(
      described.workflowExecutionInfo?.status,
      temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED,
    );
  });

  it('reports the capabilities the SDK checks, and keeps serving after all of the above', async () => {
    const info = await env.connection.workflowService.getSystemInfo({});
    assert.equal(info.capabilities?.sdkMetadata, true);
    assert.equal(info.capabilities?.signalAndQueryHeader, true);
  });
});
