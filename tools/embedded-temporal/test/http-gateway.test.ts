/**
 * The HTTP API (README "HTTP API"): a server started with `httpPort`, real workflows on the real
 * SDK worker, and for each route the JSON answer (read back with the gateway's own JSON decoder)
 * equal to what the same gRPC method answers for the same request; plus the JSON shapes the UI
 * relies on, error mapping, unknown routes, and a signal, a cancel and a terminate sent over HTTP
 * taking effect.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { TEST_SERVER_LAUNCHER, uniqueTaskQueue, workflowBundle } from '../src/testing';
import { fromJson, type Json } from '../src/http-gateway/json';
import { root, type RType } from '../src/http-gateway/reflect';
import { silentLogger, startServer, type RunningServer } from '../src/index';
import { parseArgs } from '../src/main';
import { makeActivities, waitFor, workflowsPath, freePort } from './support';
import { accumulator, sleeper, threeActivities, totalQuery } from './workflows';

const WS = 'temporal.api.workflowservice.v1.WorkflowService';
const OS = 'temporal.api.operatorservice.v1.OperatorService';
const IDENTITY = 'http-gateway-test-worker';

type RpcTable = Record<string, (req: object) => Promise<object>>;
type Normalizable = RType & { toObject(m: object, o: object): object };

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

describe('embedded-temporal: HTTP API', function () {
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
  let open: WorkflowHandle<typeof accumulator>;

  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: JSON.parse(text) as Json };
  };

  /** GETs/POSTs the route, calls the gRPC method with `req`, and asserts both answers are equal. */
  const same = async (
    method: string,
    path: string,
    req: object,
    opts: { service?: string; http?: string; body?: unknown } = {},
  ): Promise<Json> => {
    const service = opts.service ?? WS;
    const type = responseType(service, method);
    const viaHttp = await api(opts.http ?? 'GET', path, opts.body);
    assert.equal(viaHttp.status, 200, `${path}: ${JSON.stringify(viaHttp.json)}`);
    const rpc = (service === WS ? conn.workflowService : conn.operatorService) as unknown as RpcTable;
    const viaGrpc = await rpc[method.charAt(0).toLowerCase() + method.slice(1)](req);
    assert.deepEqual(
      normalize(type, fromJson(type, viaHttp.json, { shorthand: true })),
      normalize(type, viaGrpc),
      `${method} via ${path}`,
    );
    return viaHttp.json;
  };

  const ns = '/api/v1/namespaces/default';

  before(async () => {
    const bundle = await workflowBundle(workflowsPath);
    server = await startServer({ port: 0, httpPort: 0, timeSkipping: false, logger: silentLogger });
    assert.ok(server.httpPort, 'the HTTP API has a port');
    base = `http://127.0.0.1:${server.httpPort}`;
    conn = await Connection.connect({ address: server.address });
    native = await NativeConnection.connect({ address: server.address });
    client = new Client({ connection: conn });
    taskQueue = uniqueTaskQueue('http-gw');
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
      workflowId: `http-done-${Date.now()}`,
      args: [3],
    });
    assert.equal(await done.result(), 24);
    open = await client.workflow.start(accumulator, { taskQueue, workflowId: `http-open-${Date.now()}` });
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

  it('serves namespaces, cluster and system info, search attributes and settings', async () => {
    const list = await same('ListNamespaces', '/api/v1/namespaces', {});
    assert.ok(JSON.stringify(list).includes('"name":"default"'));
    const d = (await same('DescribeNamespace', ns, { namespace: 'default' })) as {
      namespaceInfo: { state: string };
      config: { workflowExecutionRetentionTtl: string };
    };
    // Enums by name, Durations as "<seconds>s".
    assert.equal(d.namespaceInfo.state, 'NAMESPACE_STATE_REGISTERED');
    assert.equal(d.config.workflowExecutionRetentionTtl, '259200s');
    const cluster = (await same('GetClusterInfo', '/api/v1/cluster-info', {})) as {
      serverVersion: string;
      historyShardCount: number;
      initialFailoverVersion: string;
    };
    assert.match(cluster.serverVersion, /pixflow/);
    assert.equal(cluster.initialFailoverVersion, '1'); // int64 as a string
    const sys = (await same('GetSystemInfo', '/api/v1/system-info', {})) as { capabilities: { sdkMetadata: boolean } };
    assert.equal(sys.capabilities.sdkMetadata, true);
    const sa = (await same(
      'ListSearchAttributes',
      `${ns}/search-attributes`,
      { namespace: 'default' },
      { service: OS },
    )) as {
      systemAttributes: Record<string, string>;
    };
    assert.equal(sa.systemAttributes.WorkflowType, 'INDEXED_VALUE_TYPE_KEYWORD');
    const settings = await api('GET', '/api/v1/settings');
    assert.equal(settings.status, 200);
    const s = settings.json as { Auth: { Enabled: boolean }; DefaultNamespace: string; Codec: { Endpoint: string } };
    assert.equal(s.Auth.Enabled, false);
    assert.equal(s.DefaultNamespace, 'default');
    assert.equal(s.Codec.Endpoint, '');
  });

  it('lists and counts workflows by query, with pages, and describes one', async () => {
    const q = `TaskQueue='${taskQueue}'`;
    const all = (await same('ListWorkflowExecutions', `${ns}/workflows?query=${encodeURIComponent(q)}`, {
      namespace: 'default',
      query: q,
    })) as {
      executions: { execution: { workflowId: string }; status: string; startTime: string }[];
    };
    assert.equal(all.executions.length, 2);
    const closed = all.executions.find((e) => e.execution.workflowId === done.workflowId);
    assert.equal(closed?.status, 'WORKFLOW_EXECUTION_STATUS_COMPLETED');
    assert.match(closed?.startTime ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    // Paged: one per page, the token (bytes, base64) taken from the JSON answer.
    const page1 = (await same('ListWorkflowExecutions', `${ns}/workflows?query=${encodeURIComponent(q)}&pageSize=1`, {
      namespace: 'default',
      query: q,
      pageSize: 1,
    })) as {
      executions: unknown[];
      nextPageToken: string;
    };
    assert.equal(page1.executions.length, 1);
    const token = page1.nextPageToken;
    await same(
      'ListWorkflowExecutions',
      `${ns}/workflows?query=${encodeURIComponent(q)}&page_size=1&next_page_token=${encodeURIComponent(token)}`,
      {
        namespace: 'default',
        query: q,
        pageSize: 1,
        nextPageToken: Buffer.from(token, 'base64'),
      },
    );
    const count = (await same('CountWorkflowExecutions', `${ns}/workflow-count?query=${encodeURIComponent(q)}`, {
      namespace: 'default',
      query: q,
    })) as { count: string };
    assert.equal(count.count, '2');
    const runId = (await done.describe()).runId;
    const d = (await same(
      'DescribeWorkflowExecution',
      `${ns}/workflows/${encodeURIComponent(done.workflowId)}?execution.runId=${runId}`,
      {
        namespace: 'default',
        execution: { workflowId: done.workflowId, runId },
      },
    )) as { workflowExecutionInfo: { type: { name: string }; status: string } };
    assert.equal(d.workflowExecutionInfo.type.name, 'threeActivities');
    assert.equal(d.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_COMPLETED');
    await same('DescribeWorkflowExecution', `${ns}/workflows/${encodeURIComponent(open.workflowId)}`, {
      namespace: 'default',
      execution: { workflowId: open.workflowId },
    });
  });

  it('pages a history forward and in reverse, payloads in shorthand unless asked otherwise', async () => {
    const path = `${ns}/workflows/${encodeURIComponent(done.workflowId)}`;
    const full = (await same('GetWorkflowExecutionHistory', `${path}/history`, {
      namespace: 'default',
      execution: { workflowId: done.workflowId },
    })) as {
      history: {
        events: {
          eventId: string;
          eventType: string;
          eventTime: string;
          workflowExecutionStartedEventAttributes?: { input: Json; workflowTaskTimeout: string };
        }[];
      };
    };
    const events = full.history.events;
    assert.ok(events.length > 10);
    assert.equal(events[0].eventId, '1');
    assert.equal(events[0].eventType, 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
    assert.deepEqual(events[0].workflowExecutionStartedEventAttributes?.input, [3]);
    assert.match(events[0].workflowExecutionStartedEventAttributes?.workflowTaskTimeout ?? '', /^\d+(\.\d+)?s$/);
    assert.equal(events[events.length - 1].eventType, 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');

    const walk = async (route: string, method: string): Promise<string[]> => {
      const ids: string[] = [];
      let token = '';
      for (let i = 0; i < 50; i++) {
        const qs = `maximumPageSize=4${token ? `&nextPageToken=${encodeURIComponent(token)}` : ''}`;
        const page = (await same(method, `${path}/${route}?${qs}`, {
          namespace: 'default',
          execution: { workflowId: done.workflowId },
          maximumPageSize: 4,
          nextPageToken: Buffer.from(token, 'base64'),
        })) as { history: { events: { eventId: string }[] }; nextPageToken?: string };
        assert.ok(page.history.events.length <= 4);
        ids.push(...page.history.events.map((e) => e.eventId));
        if (!page.nextPageToken) return ids;
        token = page.nextPageToken;
      }
      throw new Error('history never ended');
    };
    const allIds = events.map((e) => e.eventId);
    assert.deepEqual(await walk('history', 'GetWorkflowExecutionHistory'), allIds);
    assert.deepEqual(await walk('history-reverse', 'GetWorkflowExecutionHistoryReverse'), [...allIds].reverse());

    const long = await api('GET', `${path}/history?noPayloadShorthand`);
    const first = (
      long.json as {
        history: {
          events: {
            workflowExecutionStartedEventAttributes?: {
              input: { payloads: { metadata: { encoding: string }; data: string }[] };
            };
          }[];
        };
      }
    ).history.events[0];
    const payload = first.workflowExecutionStartedEventAttributes?.input.payloads[0];
    assert.equal(Buffer.from(payload?.metadata.encoding ?? '', 'base64').toString(), 'json/plain');
    assert.equal(Buffer.from(payload?.data ?? '', 'base64').toString(), '3');
  });

  it('queries (also __stack_trace) and signals a running workflow over HTTP', async () => {
    const path = `${ns}/workflows/${encodeURIComponent(open.workflowId)}`;
    const signal = await api('POST', `${path}/signal/add`, { input: [5], identity: 'http-test' });
    assert.equal(signal.status, 200, JSON.stringify(signal.json));
    assert.deepEqual(signal.json, {});
    await waitFor(async () => (await open.query(totalQuery)) === 5, 10_000, 'the HTTP signal to be applied');
    const q = (await same(
      'QueryWorkflow',
      `${path}/query/total`,
      { namespace: 'default', execution: { workflowId: open.workflowId }, query: { queryType: 'total' } },
      {
        http: 'POST',
        body: {},
      },
    )) as { queryResult: Json };
    assert.deepEqual(q.queryResult, [5]);
    const stack = await api('POST', `${path}/query/__stack_trace`, {});
    assert.equal(stack.status, 200, JSON.stringify(stack.json));
    const trace = (stack.json as { queryResult: Json[] }).queryResult[0];
    assert.equal(typeof trace, 'string');
    assert.match(String(trace), /accumulator/);
    const history = (await api('GET', `${path}/history`)).json as {
      history: {
        events: {
          eventType: string;
          workflowExecutionSignaledEventAttributes?: { signalName: string; input: Json; identity: string };
        }[];
      };
    };
    const signaled = history.history.events.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
    assert.deepEqual(signaled?.workflowExecutionSignaledEventAttributes?.input, [5]);
    assert.equal(signaled?.workflowExecutionSignaledEventAttributes?.identity, 'http-test');
  });

  it('cancels and terminates over HTTP', async () => {
    const a = await client.workflow.start(sleeper, {
      taskQueue,
      workflowId: `http-cancel-${Date.now()}`,
      args: [3_600_000],
    });
    const b = await client.workflow.start(sleeper, {
      taskQueue,
      workflowId: `http-term-${Date.now()}`,
      args: [3_600_000],
    });
    const cancel = await api('POST', `${ns}/workflows/${encodeURIComponent(a.workflowId)}/cancel`, {
      reason: 'operator',
    });
    assert.equal(cancel.status, 200, JSON.stringify(cancel.json));
    await assert.rejects(a.result(), (err: unknown) => err instanceof WorkflowFailedError);
    assert.equal((await a.describe()).status.name, 'CANCELLED');
    const term = await api('POST', `${ns}/workflows/${encodeURIComponent(b.workflowId)}/terminate`, {
      reason: 'by http',
    });
    assert.equal(term.status, 200, JSON.stringify(term.json));
    assert.equal((await b.describe()).status.name, 'TERMINATED');
    const hist = await client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId: b.workflowId },
    });
    const last = hist.history?.events?.at(-1);
    assert.equal(last?.workflowExecutionTerminatedEventAttributes?.reason, 'by http');
  });

  it('describes a task queue with its pollers, and lists (no) schedules', async () => {
    const pollersOf = (json: Json): string[] =>
      ((json as { pollers?: { identity: string }[] }).pollers ?? []).map((p) => p.identity);
    const wf = await api('GET', `${ns}/task-queues/${encodeURIComponent(taskQueue)}`);
    assert.equal(wf.status, 200);
    const grpcWf = await conn.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue },
    });
    assert.deepEqual(
      pollersOf(wf.json),
      (grpcWf.pollers ?? []).map((p) => p.identity ?? ''),
    );
    assert.ok(pollersOf(wf.json).includes(IDENTITY));
    assert.match((wf.json as { pollers: { lastAccessTime: string }[] }).pollers[0].lastAccessTime, /Z$/);
    const act = await api(
      'GET',
      `${ns}/task-queues/${encodeURIComponent(taskQueue)}?taskQueueType=TASK_QUEUE_TYPE_ACTIVITY`,
    );
    assert.ok(pollersOf(act.json).includes(IDENTITY));
    const none = await api('GET', `${ns}/task-queues/nobody-polls-this`);
    assert.deepEqual(pollersOf(none.json), []);
    const schedules = await same('ListSchedules', `${ns}/schedules`, { namespace: 'default' });
    assert.deepEqual(schedules, {});
  });

  it('maps errors as the gateway does: NOT_FOUND 404, unknown routes, wrong verbs, unimplemented and bad input', async () => {
    const missing = await api('GET', `${ns}/workflows/never-started`);
    assert.equal(missing.status, 404);
    assert.deepEqual(Object.keys(missing.json as object).sort(), ['code', 'details', 'message']);
    assert.equal((missing.json as { code: number }).code, 5);
    assert.deepEqual((missing.json as { details: unknown[] }).details, []);
    const badNs = await api('GET', '/api/v1/namespaces/nope');
    assert.equal(badNs.status, 404);
    assert.match((badNs.json as { message: string }).message, /nope/);
    assert.deepEqual(await api('GET', '/api/v1/no/such/route'), {
      status: 404,
      json: { code: 5, message: 'Not Found', details: [] },
    });
    assert.deepEqual(await api('DELETE', '/api/v1/namespaces'), {
      status: 501,
      json: { code: 12, message: 'Method Not Allowed', details: [] },
    });
    const unimpl = await api('POST', `${ns}/schedules/s1`, {});
    assert.equal(unimpl.status, 501);
    assert.equal((unimpl.json as { code: number }).code, 12);
    assert.match((unimpl.json as { message: string }).message, /CreateSchedule/);
    const notJson = await api('POST', `${ns}/workflows/${encodeURIComponent(open.workflowId)}/signal/add`, '{not json');
    assert.equal(notJson.status, 400);
    assert.equal((notJson.json as { code: number }).code, 3);
    const unknownField = await api('POST', `${ns}/workflows/${encodeURIComponent(open.workflowId)}/signal/add`, {
      bogus: 1,
    });
    assert.equal(unknownField.status, 400);
    assert.match((unknownField.json as { message: string }).message, /bogus/);
    const badEnum = await api('GET', `${ns}/task-queues/x?taskQueueType=NOT_A_TYPE`);
    assert.equal(badEnum.status, 400);
  });

  it('the launcher serves the HTTP API with start-dev --http-port', async function () {
    this.timeout(20_000);
    assert.equal(parseArgs(['server', 'start-dev', '--port', '7299', '--http-port', '7243']).httpPort, 7243);
    assert.equal(parseArgs(['--port', '7299', '--http-port=7243']).httpPort, 7243);
    const [port, httpPort] = [await freePort(), await freePort()];
    const child = spawn(
      TEST_SERVER_LAUNCHER,
      ['server', 'start-dev', '--port', String(port), '--http-port', String(httpPort), '--headless'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      let info: Json = null;
      await waitFor(
        async () => {
          try {
            const res = await fetch(`http://127.0.0.1:${httpPort}/api/v1/system-info`);
            info = (await res.json()) as Json;
            return res.status === 200;
          } catch {
            return false;
          }
        },
        15_000,
        'the HTTP API of the launched server',
      );
      assert.match((info as unknown as { serverVersion: string }).serverVersion, /pixflow/);
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
