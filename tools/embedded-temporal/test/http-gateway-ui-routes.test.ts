/**
 * Every route the official Temporal UI calls (`@temporalio/ui` 2.38.0, `utilities/route-for-api.js`),
 * one table row each, against a server with the HTTP API and a real SDK worker. A served route's
 * answer is read two ways and must equal what the same gRPC method answers for the same request:
 * the long form (`?noPayloadShorthand`) by `@temporalio/proto`'s own proto3 JSON reader (the
 * protobufjs `ext/protojson` it depends on, unknown fields rejected), and the default shorthand
 * form by the gateway's reader. Routes that write (signal, cancel, terminate) are checked by their
 * effect; routes this server does not implement answer as grpc-gateway does (501 UNIMPLEMENTED or
 * 404 for a path with no binding), each with a `google.rpc.Status`-shaped body.
 * README "HTTP API" (tools/embedded-temporal) describes the surface.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { uniqueTaskQueue, workflowBundle } from '../../../test/support/temporal';
import { fromJson, type Json } from '../src/http-gateway/json';
import { root, type RType } from '../src/http-gateway/reflect';
import { silentLogger, startServer, type RunningServer } from '../src/index';
import { makeActivities, waitFor, workflowsPath } from './support';
import { accumulator, sleeper, threeActivities, totalQuery } from './workflows';

const WS = 'temporal.api.workflowservice.v1.WorkflowService';
const OS = 'temporal.api.operatorservice.v1.OperatorService';
const IDENTITY = 'http-ui-routes-worker';
const MerchantId = defineSearchAttributeKey('MerchantId', SearchAttributeType.KEYWORD);
const EntityId = defineSearchAttributeKey('EntityId', SearchAttributeType.KEYWORD);

type RpcTable = Record<string, (req: object) => Promise<object>>;
type Normalizable = RType & { toObject(m: object, o: object): object };

/** `@temporalio/proto`'s proto3 JSON reader: the protobufjs its compiled root was built for. */
interface ProtoJson {
  fromJson(type: unknown, json: unknown, opts?: { ignoreUnknownFields?: boolean }): object;
}
const protojson = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as ProtoJson;

function responseType(service: string, method: string): Normalizable {
  const m = root.lookupService(service).resolveAll().methods[method];
  assert.ok(m?.resolvedResponseType, `${service}.${method} exists`);
  return m.resolvedResponseType as Normalizable;
}

/** One plain form for comparing messages: through the wire format, then toObject with strings. */
function normalize(type: Normalizable, msg: object): object {
  const bytes = type.encode(type.fromObject(msg as Record<string, unknown>)).finish();
  return type.toObject(type.decode(bytes), { longs: String, enums: String, bytes: String });
}

/** Pollers' last access time moves between two calls; everything else must be equal. */
function withoutAccessTimes(o: object): object {
  return JSON.parse(JSON.stringify(o, (k, v: unknown) => (k === 'lastAccessTime' ? undefined : v))) as object;
}

interface Row {
  /** The key in the UI's route-for-api.js map, and what the row adds. */
  ui: string;
  http: 'GET' | 'POST';
  path: () => string;
  body?: () => Json;
  /** The gRPC call that must answer the same message. */
  grpc?: { service?: string; method: string; req: () => object; compare?: (o: object) => object };
  /** Extra checks on the default (shorthand) JSON answer. */
  check?: (json: Json) => void | Promise<void>;
  /** Expected status when not 200, with the gRPC code in the body. */
  error?: { status: number; code: number; message?: RegExp };
}

describe('embedded-temporal: every HTTP route the Temporal UI calls', function () {
  this.timeout(60_000);
  let server: RunningServer;
  let conn: Connection;
  let native: NativeConnection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;
  let taskQueue: string;
  let base: string;
  let done: WorkflowHandle<typeof threeActivities>;
  let doneRunId: string;
  let open: WorkflowHandle<typeof accumulator>;
  const merchant = `mch_gw_${Date.now()}`;
  const ns = '/api/v1/namespaces/default';
  const enc = encodeURIComponent;

  const api = async (method: string, url: string, body?: Json): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: JSON.parse(await res.text()) as Json };
  };
  const longForm = (url: string): string => `${url}${url.includes('?') ? '&' : '?'}noPayloadShorthand`;

  before(async () => {
    const bundle = await workflowBundle(workflowsPath);
    server = await startServer({
      port: 0,
      httpPort: 0,
      timeSkipping: false,
      logger: silentLogger,
      searchAttributes: { MerchantId: 'Keyword', EntityId: 'Keyword' },
    });
    base = `http://127.0.0.1:${server.httpPort}`;
    conn = await Connection.connect({ address: server.address });
    native = await NativeConnection.connect({ address: server.address });
    client = new Client({ connection: conn });
    taskQueue = uniqueTaskQueue('http-ui');
    worker = await Worker.create({
      connection: native,
      taskQueue,
      workflowBundle: bundle,
      activities: makeActivities(),
      identity: IDENTITY,
    });
    running = worker.run();
    done = await client.workflow.start(threeActivities, {
      taskQueue,
      workflowId: `ui-done/${Date.now()}`, // a `/` travels as %2F
      args: [3],
      typedSearchAttributes: [
        { key: MerchantId, value: merchant },
        { key: EntityId, value: 'chg_done' },
      ],
    });
    assert.equal(await done.result(), 24);
    doneRunId = (await done.describe()).runId;
    open = await client.workflow.start(accumulator, {
      taskQueue,
      workflowId: `ui-open-${Date.now()}`,
      typedSearchAttributes: [
        { key: MerchantId, value: merchant },
        { key: EntityId, value: 'chg_open' },
      ],
    });
    // Quiescent: its first workflow task is done (a query answers), so its state holds still.
    assert.equal(await open.query(totalQuery), 0);
  });

  after(async () => {
    if (worker) {
      worker.shutdown();
      await running.catch(() => undefined);
    }
    await native?.close();
    await conn?.close();
    await server?.close();
  });

  const byMerchant = (): string => `MerchantId = '${merchant}'`;
  const doneId = (): string => enc(done.workflowId);
  const openId = (): string => enc(open.workflowId);
  const pageToken = async (): Promise<string> => {
    const first = await api('GET', `${ns}/workflows?query=${enc(byMerchant())}&pageSize=1`);
    return (first.json as { nextPageToken: string }).nextPageToken;
  };
  let token = '';

  const rows: Row[] = [
    {
      ui: 'systemInfo',
      http: 'GET',
      path: () => '/api/v1/system-info',
      grpc: { method: 'GetSystemInfo', req: () => ({}) },
      check: (j) => assert.equal((j as { capabilities: { sdkMetadata: boolean } }).capabilities.sdkMetadata, true),
    },
    {
      ui: 'cluster',
      http: 'GET',
      path: () => '/api/v1/cluster-info',
      grpc: { method: 'GetClusterInfo', req: () => ({}) },
      check: (j) => assert.equal((j as { initialFailoverVersion: string }).initialFailoverVersion, '1'),
    },
    {
      ui: 'namespaces',
      http: 'GET',
      path: () => '/api/v1/namespaces',
      grpc: { method: 'ListNamespaces', req: () => ({}) },
      check: (j) => assert.match(JSON.stringify(j), /"name":"default"/),
    },
    {
      ui: 'namespace',
      http: 'GET',
      path: () => ns,
      grpc: { method: 'DescribeNamespace', req: () => ({ namespace: 'default' }) },
      check: (j) =>
        assert.equal(
          (j as { config: { workflowExecutionRetentionTtl: string } }).config.workflowExecutionRetentionTtl,
          '259200s',
        ),
    },
    {
      ui: 'search-attributes (custom MerchantId, EntityId)',
      http: 'GET',
      path: () => `${ns}/search-attributes`,
      grpc: { service: OS, method: 'ListSearchAttributes', req: () => ({ namespace: 'default' }) },
      check: (j) => {
        const sa = j as { customAttributes: Record<string, string>; systemAttributes: Record<string, string> };
        assert.equal(sa.customAttributes.MerchantId, 'INDEXED_VALUE_TYPE_KEYWORD');
        assert.equal(sa.systemAttributes.ExecutionStatus, 'INDEXED_VALUE_TYPE_KEYWORD');
      },
    },
    {
      ui: 'settings (the UI server’s own route)',
      http: 'GET',
      path: () => '/api/v1/settings',
      check: (j) => {
        const s = j as {
          Auth: { Enabled: boolean };
          DefaultNamespace: string;
          WorkflowResetDisabled: boolean;
          Version: string;
        };
        assert.equal(s.Auth.Enabled, false);
        // The UI encodes path parameters once (not twice) from 2.23.0 on, as the rows here send them.
        const [major, minor] = s.Version.split('.').map(Number);
        assert.ok(major > 2 || (major === 2 && minor >= 23), s.Version);
        assert.equal(s.DefaultNamespace, 'default');
        // No reset on this server: the UI hides the button rather than meeting the 501 below.
        assert.equal(s.WorkflowResetDisabled, true);
      },
    },
    {
      ui: 'workflows (by MerchantId)',
      http: 'GET',
      path: () => `${ns}/workflows?query=${enc(byMerchant())}`,
      grpc: { method: 'ListWorkflowExecutions', req: () => ({ namespace: 'default', query: byMerchant() }) },
      check: (j) => {
        const ex = (j as { executions: { execution: { workflowId: string }; searchAttributes: Json }[] }).executions;
        assert.deepEqual(ex.map((e) => e.execution.workflowId).sort(), [done.workflowId, open.workflowId].sort());
      },
    },
    {
      ui: 'workflows (page 1 of 2, then page 2 by its token)',
      http: 'GET',
      path: () => `${ns}/workflows?query=${enc(byMerchant())}&pageSize=1&nextPageToken=${enc(token)}`,
      grpc: {
        method: 'ListWorkflowExecutions',
        req: () => ({
          namespace: 'default',
          query: byMerchant(),
          pageSize: 1,
          nextPageToken: Buffer.from(token, 'base64'),
        }),
      },
      check: (j) => assert.equal((j as { executions: unknown[] }).executions.length, 1),
    },
    {
      ui: 'workflows (status and type filter, as the UI’s filter bar writes it)',
      http: 'GET',
      path: () =>
        `${ns}/workflows?query=${enc(`${byMerchant()} AND ExecutionStatus = 'Running' AND WorkflowType = 'accumulator'`)}`,
      grpc: {
        method: 'ListWorkflowExecutions',
        req: () => ({
          namespace: 'default',
          query: `${byMerchant()} AND ExecutionStatus = 'Running' AND WorkflowType = 'accumulator'`,
        }),
      },
      check: (j) => assert.equal((j as { executions: unknown[] }).executions.length, 1),
    },
    {
      ui: 'workflows.count',
      http: 'GET',
      path: () => `${ns}/workflow-count?query=${enc(byMerchant())}`,
      grpc: { method: 'CountWorkflowExecutions', req: () => ({ namespace: 'default', query: byMerchant() }) },
      check: (j) => assert.equal((j as { count: string }).count, '2'),
    },
    {
      ui: 'workflows.count (GROUP BY ExecutionStatus)',
      http: 'GET',
      path: () => `${ns}/workflow-count?query=${enc(`${byMerchant()} GROUP BY ExecutionStatus`)}`,
      grpc: {
        method: 'CountWorkflowExecutions',
        req: () => ({ namespace: 'default', query: `${byMerchant()} GROUP BY ExecutionStatus` }),
      },
      check: (j) => {
        // Each group value is a Keyword payload (metadata `type` too, so no shorthand), as the real server's.
        const groups = (j as { groups: { groupValues: { data: string }[]; count: string }[] }).groups;
        const named = groups.map((g) => `${Buffer.from(g.groupValues[0].data, 'base64').toString()}=${g.count}`);
        assert.deepEqual(named.sort(), ['"Completed"=1', '"Running"=1']);
      },
    },
    {
      ui: 'workflow (describe, with execution.runId)',
      http: 'GET',
      path: () => `${ns}/workflows/${doneId()}?execution.runId=${doneRunId}`,
      grpc: {
        method: 'DescribeWorkflowExecution',
        req: () => ({ namespace: 'default', execution: { workflowId: done.workflowId, runId: doneRunId } }),
      },
      check: (j) =>
        assert.equal(
          (j as { workflowExecutionInfo: { status: string } }).workflowExecutionInfo.status,
          'WORKFLOW_EXECUTION_STATUS_COMPLETED',
        ),
    },
    {
      ui: 'events.ascending',
      http: 'GET',
      path: () => `${ns}/workflows/${doneId()}/history?execution.runId=${doneRunId}`,
      grpc: {
        method: 'GetWorkflowExecutionHistory',
        req: () => ({ namespace: 'default', execution: { workflowId: done.workflowId, runId: doneRunId } }),
      },
      check: (j) => {
        const ev = (j as { history: { events: { eventType: string }[] } }).history.events;
        assert.equal(ev[0].eventType, 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
      },
    },
    {
      ui: 'events.ascending (a page of 4)',
      http: 'GET',
      path: () => `${ns}/workflows/${doneId()}/history?maximumPageSize=4`,
      grpc: {
        method: 'GetWorkflowExecutionHistory',
        req: () => ({ namespace: 'default', execution: { workflowId: done.workflowId }, maximumPageSize: 4 }),
      },
      check: (j) => assert.ok((j as { nextPageToken: string }).nextPageToken),
    },
    {
      ui: 'events.descending',
      http: 'GET',
      path: () => `${ns}/workflows/${doneId()}/history-reverse?execution.runId=${doneRunId}&maximumPageSize=4`,
      grpc: {
        method: 'GetWorkflowExecutionHistoryReverse',
        req: () => ({
          namespace: 'default',
          execution: { workflowId: done.workflowId, runId: doneRunId },
          maximumPageSize: 4,
        }),
      },
      check: (j) => {
        const ev = (j as { history: { events: { eventType: string }[] } }).history.events;
        assert.equal(ev[0].eventType, 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
      },
    },
    {
      ui: 'query (a workflow query, the UI’s body)',
      http: 'POST',
      path: () => `${ns}/workflows/${openId()}/query/total`,
      body: () => ({ execution: { workflowId: open.workflowId }, query: { queryType: 'total' } }),
      grpc: {
        method: 'QueryWorkflow',
        req: () => ({
          namespace: 'default',
          execution: { workflowId: open.workflowId },
          query: { queryType: 'total' },
        }),
      },
      check: (j) => assert.deepEqual((j as { queryResult: Json }).queryResult, [0]),
    },
    {
      ui: 'query (__stack_trace)',
      http: 'POST',
      path: () => `${ns}/workflows/${openId()}/query/__stack_trace`,
      body: () => ({ execution: { workflowId: open.workflowId }, query: { queryType: '__stack_trace' } }),
      grpc: {
        method: 'QueryWorkflow',
        req: () => ({
          namespace: 'default',
          execution: { workflowId: open.workflowId },
          query: { queryType: '__stack_trace' },
        }),
      },
      check: (j) => assert.match(String((j as { queryResult: Json[] }).queryResult[0]), /accumulator/),
    },
    {
      ui: 'query (__temporal_workflow_metadata)',
      http: 'POST',
      path: () => `${ns}/workflows/${openId()}/query/__temporal_workflow_metadata`,
      body: () => ({
        execution: { workflowId: open.workflowId },
        query: { queryType: '__temporal_workflow_metadata' },
      }),
      grpc: {
        method: 'QueryWorkflow',
        req: () => ({
          namespace: 'default',
          execution: { workflowId: open.workflowId },
          query: { queryType: '__temporal_workflow_metadata' },
        }),
      },
      check: (j) => assert.match(JSON.stringify((j as { queryResult: Json }).queryResult), /"total"/),
    },
    {
      ui: 'task-queue (workflow pollers)',
      http: 'GET',
      path: () => `${ns}/task-queues/${enc(taskQueue)}`,
      grpc: {
        method: 'DescribeTaskQueue',
        req: () => ({ namespace: 'default', taskQueue: { name: taskQueue } }),
        compare: withoutAccessTimes,
      },
      check: (j) => {
        const pollers = (j as { pollers: { identity: string; lastAccessTime: string }[] }).pollers;
        assert.ok(pollers.some((p) => p.identity === IDENTITY));
        assert.match(pollers[0].lastAccessTime, /Z$/);
      },
    },
    {
      ui: 'task-queue (activity pollers)',
      http: 'GET',
      path: () => `${ns}/task-queues/${enc(taskQueue)}?taskQueueType=TASK_QUEUE_TYPE_ACTIVITY`,
      grpc: {
        method: 'DescribeTaskQueue',
        req: () => ({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: 2 }),
        compare: withoutAccessTimes,
      },
      check: (j) => assert.ok((j as { pollers: { identity: string }[] }).pollers.some((p) => p.identity === IDENTITY)),
    },
    {
      ui: 'schedules (none: an empty list)',
      http: 'GET',
      path: () => `${ns}/schedules`,
      grpc: { method: 'ListSchedules', req: () => ({ namespace: 'default' }) },
      check: (j) => assert.deepEqual(j, {}),
    },
    {
      ui: 'workflow.reset (not implemented here)',
      http: 'POST',
      path: () => `${ns}/workflows/${doneId()}/reset`,
      body: () => ({
        workflowExecution: { workflowId: done.workflowId, runId: doneRunId },
        workflowTaskFinishEventId: '4',
        requestId: 'r1',
        reason: 'x',
      }),
      error: { status: 501, code: 12, message: /ResetWorkflowExecution/ },
    },
    {
      ui: 'schedule (describe one)',
      http: 'GET',
      path: () => `${ns}/schedules/none`,
      error: { status: 501, code: 12, message: /DescribeSchedule/ },
    },
    {
      ui: 'workflows.archived',
      http: 'GET',
      path: () => `${ns}/archived-workflows?query=`,
      error: { status: 501, code: 12, message: /ListArchivedWorkflowExecutions/ },
    },
    {
      ui: 'task-queue.compatibility',
      http: 'GET',
      path: () => `${ns}/task-queues/${enc(taskQueue)}/worker-build-id-compatibility`,
      error: { status: 501, code: 12 },
    },
    {
      ui: 'task-queue.rules',
      http: 'GET',
      path: () => `${ns}/task-queues/${enc(taskQueue)}/worker-versioning-rules`,
      error: { status: 501, code: 12 },
    },
    {
      ui: 'batch-operations.list',
      http: 'GET',
      path: () => `${ns}/batch-operations`,
      error: { status: 501, code: 12 },
    },
    {
      ui: 'worker-deployments',
      http: 'GET',
      path: () => `${ns}/worker-deployments`,
      error: { status: 501, code: 12 },
    },
    {
      ui: 'nexus-endpoints',
      http: 'GET',
      path: () => '/api/v1/nexus/endpoints',
      error: { status: 501, code: 12 },
    },
    {
      ui: 'events.raw (no binding in the API: the UI never calls it, its download pages events.ascending)',
      http: 'GET',
      path: () => `${ns}/workflows/${doneId()}/run/${doneRunId}/history.json`,
      error: { status: 404, code: 5, message: /^Not Found$/ },
    },
    {
      ui: 'user (/me: the UI server’s auth route, not the API’s)',
      http: 'GET',
      path: () => '/api/v1/me',
      error: { status: 404, code: 5, message: /^Not Found$/ },
    },
  ];

  for (const row of rows) {
    it(`${row.http} ${row.ui}`, async () => {
      if (row.ui.startsWith('workflows (page 1')) token = await pageToken();
      const body = row.body?.();
      const short = await api(row.http, row.path(), body);
      if (row.error) {
        assert.equal(short.status, row.error.status, JSON.stringify(short.json));
        const err = short.json as { code: number; message: string; details: unknown[] };
        assert.deepEqual(Object.keys(err).sort(), ['code', 'details', 'message']);
        assert.equal(err.code, row.error.code);
        assert.deepEqual(err.details, []);
        if (row.error.message) assert.match(err.message, row.error.message);
        return;
      }
      assert.equal(short.status, 200, JSON.stringify(short.json));
      if (row.grpc) {
        const service = row.grpc.service ?? WS;
        const type = responseType(service, row.grpc.method);
        const rpc = (service === WS ? conn.workflowService : conn.operatorService) as unknown as RpcTable;
        const viaGrpc = await rpc[row.grpc.method.charAt(0).toLowerCase() + row.grpc.method.slice(1)](row.grpc.req());
        const long = await api(row.http, longForm(row.path()), body);
        assert.equal(long.status, 200, JSON.stringify(long.json));
        const compare = row.grpc.compare ?? ((o: object) => o);
        const expected = compare(normalize(type, viaGrpc));
        assert.deepEqual(
          compare(normalize(type, protojson.fromJson(type, long.json))),
          expected,
          `${row.grpc.method}: the long form read by @temporalio/proto`,
        );
        assert.deepEqual(
          compare(normalize(type, fromJson(type, short.json, { shorthand: true }))),
          expected,
          `${row.grpc.method}: the shorthand form`,
        );
      }
      await row.check?.(short.json);
    });
  }

  it('GET events.ascending, every page (the UI’s JSON download) reads back as the gRPC history', async () => {
    const events: Json[] = [];
    let next = '';
    for (let i = 0; i < 50; i++) {
      const url = `${ns}/workflows/${doneId()}/history?execution.runId=${doneRunId}&maximumPageSize=3${
        next ? `&nextPageToken=${enc(next)}` : ''
      }`;
      const page = (await api('GET', longForm(url))).json as { history: { events: Json[] }; nextPageToken?: string };
      events.push(...page.history.events);
      if (!page.nextPageToken) break;
      next = page.nextPageToken;
    }
    const type = responseType(WS, 'GetWorkflowExecutionHistory');
    const viaGrpc = await conn.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId: done.workflowId, runId: doneRunId },
    });
    // The file the UI writes is `{events}`, a History in proto3 JSON, as replay tools read it.
    const loaded = protojson.fromJson(root.lookup('temporal.api.history.v1.History'), { events });
    assert.deepEqual(normalize(type, { history: loaded }), normalize(type, viaGrpc));
  });

  it('POST workflow.signal, workflow.cancel, workflow.terminate take effect and answer {}', async () => {
    // The body the UI sends: its payloads in the long form, base64.
    const b64 = (x: string): string => Buffer.from(x).toString('base64');
    const signal = await api('POST', `${ns}/workflows/${openId()}/signal/add`, {
      signalName: 'add',
      workflowExecution: { workflowId: open.workflowId, runId: (await open.describe()).runId },
      input: { payloads: [{ metadata: { encoding: b64('json/plain') }, data: b64('5') }] },
    });
    assert.deepEqual(signal, { status: 200, json: {} });
    await waitFor(async () => (await open.query(totalQuery)) === 5, 10_000, 'the HTTP signal to be applied');
    const a = await client.workflow.start(sleeper, {
      taskQueue,
      workflowId: `ui-cancel-${Date.now()}`,
      args: [3_600_000],
    });
    const b = await client.workflow.start(sleeper, {
      taskQueue,
      workflowId: `ui-term-${Date.now()}`,
      args: [3_600_000],
    });
    // The UI's cancel has no body at all.
    const cancel = await api('POST', `${ns}/workflows/${enc(a.workflowId)}/cancel`);
    assert.deepEqual(cancel, { status: 200, json: {} });
    await assert.rejects(a.result(), (err: unknown) => err instanceof WorkflowFailedError);
    assert.equal((await a.describe()).status.name, 'CANCELLED');
    const term = await api('POST', `${ns}/workflows/${enc(b.workflowId)}/terminate`, { reason: 'from the UI' });
    assert.deepEqual(term, { status: 200, json: {} });
    assert.equal((await b.describe()).status.name, 'TERMINATED');
  });

  it('answers unknown routes and bad queries as grpc-gateway does', async () => {
    assert.deepEqual(await api('GET', '/api/v1/no/such/route'), {
      status: 404,
      json: { code: 5, message: 'Not Found', details: [] },
    });
    assert.deepEqual(await api('GET', '/'), { status: 404, json: { code: 5, message: 'Not Found', details: [] } });
    assert.deepEqual(await api('PUT', '/api/v1/namespaces'), {
      status: 501,
      json: { code: 12, message: 'Method Not Allowed', details: [] },
    });
    const bad = await api('GET', `${ns}/workflows?query=${enc("MerchantId = 'unterminated")}`);
    assert.equal(bad.status, 400, JSON.stringify(bad.json));
    assert.equal((bad.json as { code: number }).code, 3);
    const missing = await api('GET', `${ns}/workflows/${enc('never-started')}`);
    assert.equal(missing.status, 404);
    assert.equal((missing.json as { code: number }).code, 5);
  });
});
