/**
 * Visibility (README "Visibility"): the list filter language, its errors, counts grouped by
 * status, and the indexes kept right through close, continue-as-new, upserts, parking, a durable
 * restart and the retention purge. Everything goes through the real @temporalio/client (and the
 * Rust-core worker) against an in-process durable server of its own, so the fixture runs are the
 * only runs it lists.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { uniqueTaskQueue, workflowBundle } from '../src/testing';
import { silentLogger, startServer, type RunningServer } from '../src/index';
import { makeActivities, waitFor, workflowsPath } from './support';
import { countdown, markersAndProperties, returnsInput, sleeper } from './workflows';

const MerchantId = defineSearchAttributeKey('MerchantId', SearchAttributeType.KEYWORD);
const EntityId = defineSearchAttributeKey('EntityId', SearchAttributeType.KEYWORD);
const Status = temporal.api.enums.v1.WorkflowExecutionStatus;
const HOUR = 3600_000;

interface Fixture {
  /** Fixture name → run id (e1/e2: the two runs of one continue-as-new chain). */
  runs: Record<string, string>;
  /** Workflow id prefix. */
  p: string;
  taskQueue: string;
  /** Between the start of b and the start of c. */
  tMid: number;
  t0: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();

describe('embedded-temporal: visibility (list filters, counts, indexes)', function () {
  this.timeout(90_000);
  let dir: string;
  let dbFilename: string;
  let server: RunningServer;
  let conn: Connection;
  let client: Client;
  const fx: Fixture = { runs: {}, p: '', taskQueue: '', tMid: 0, t0: 0 };

  async function open(): Promise<void> {
    server = await startServer({ port: 0, timeSkipping: false, logger: silentLogger, dbFilename, parkIdleAfterMs: 25 });
    conn = await Connection.connect({ address: server.address });
    client = new Client({ connection: conn });
  }

  async function close(): Promise<void> {
    await conn.close();
    await server.close();
  }

  /** The fixture names of the runs a query lists, in list order. */
  async function listed(query: string, pageSize?: number): Promise<string[]> {
    const byRun = new Map(Object.entries(fx.runs).map(([name, runId]) => [runId, name]));
    const out: string[] = [];
    for await (const wf of client.workflow.list({ query, pageSize }))
      out.push(byRun.get(wf.runId) ?? `?${wf.workflowId}`);
    return out;
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsrv-visibility-'));
    dbFilename = path.join(dir, 'vis.db');
    await open();
    fx.p = `vis-${Date.now()}`;
    fx.taskQueue = uniqueTaskQueue('visibility');
    const workerConn = await NativeConnection.connect({ address: server.address });
    const worker = await Worker.create({
      connection: workerConn,
      taskQueue: fx.taskQueue,
      workflowBundle: await workflowBundle(workflowsPath),
      activities: makeActivities(),
    });
    const { p, taskQueue } = fx;
    const sa = (merchant: string | undefined, entity: string | undefined) => ({
      typedSearchAttributes: [
        ...(merchant ? [{ key: MerchantId, value: merchant }] : []),
        ...(entity ? [{ key: EntityId, value: entity }] : []),
      ],
    });
    fx.t0 = Date.now() - 1;
    await worker.runUntil(async () => {
      const a = await client.workflow.start(sleeper, {
        taskQueue,
        workflowId: `${p}-a`,
        args: [HOUR],
        ...sa('m-1', 'e-a'),
      });
      fx.runs.a = a.firstExecutionRunId;
      const b = await client.workflow.start(returnsInput, {
        taskQueue,
        workflowId: `${p}-b`,
        args: ['x'],
        ...sa('m-1', 'e-b'),
      });
      fx.runs.b = b.firstExecutionRunId;
      await b.result();
      // A time strictly between two starts (a condition on the clock, not a sleep).
      fx.tMid = Date.now();
      await waitFor(() => Date.now() > fx.tMid + 1);
      const c = await client.workflow.start(sleeper, {
        taskQueue,
        workflowId: `${p}-c`,
        args: [HOUR],
        ...sa('m-2', undefined),
      });
      fx.runs.c = c.firstExecutionRunId;
      await c.terminate('for the fixture');
      const d = await client.workflow.start(markersAndProperties, { taskQueue, workflowId: `${p}-d`, args: [1] });
      fx.runs.d = d.firstExecutionRunId;
      await d.result();
      const e = await client.workflow.start(countdown, {
        taskQueue,
        workflowId: `${p}-e`,
        args: [1, 0, 0],
        ...sa('m-3', 'e-e'),
      });
      fx.runs.e1 = e.firstExecutionRunId;
      await e.result();
      fx.runs.e2 = (await client.workflow.getHandle(`${p}-e`).describe()).runId;
    });
    await workerConn.close();
    assert.notEqual(fx.runs.e1, fx.runs.e2);
  });

  after(async () => {
    await close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists what each construct of the filter language selects', async () => {
    const { p, taskQueue, runs, tMid, t0 } = fx;
    const all = ['a', 'b', 'c', 'd', 'e1', 'e2'];
    const but = (...xs: string[]): string[] => all.filter((x) => !xs.includes(x));
    const table: [string, string[]][] = [
      ['', all],
      ["WorkflowType = 'sleeper'", ['a', 'c']],
      [`WorkflowId = '${p}-a'`, ['a']],
      [`WorkflowId = '${p}-e'`, ['e1', 'e2']],
      [`WorkflowId != '${p}-a'`, but('a')],
      [`WorkflowId <> '${p}-a'`, but('a')],
      [`WorkflowId IN ('${p}-a', '${p}-b', 'nobody')`, ['a', 'b']],
      [`WorkflowId NOT IN ('${p}-a', '${p}-b')`, but('a', 'b')],
      [`WorkflowId STARTS_WITH '${p}-e'`, ['e1', 'e2']],
      [`WorkflowId NOT STARTS_WITH '${p}-e'`, but('e1', 'e2')],
      [`RunId = '${runs.b}'`, ['b']],
      ["ExecutionStatus = 'Running'", ['a']],
      ['ExecutionStatus = "running"', ['a']],
      ['ExecutionStatus = 1', ['a']],
      ["ExecutionStatus IN ('Completed', 'Terminated')", ['b', 'c', 'd', 'e2']],
      ["ExecutionStatus = 'ContinuedAsNew'", ['e1']],
      ["ExecutionStatus != 'Running'", but('a')],
      [`StartTime >= '${iso(tMid)}'`, ['c', 'd', 'e1', 'e2']],
      [`StartTime < '${iso(tMid)}'`, ['a', 'b']],
      [`StartTime BETWEEN '${iso(t0)}' AND '${iso(tMid)}'`, ['a', 'b']],
      [`StartTime NOT BETWEEN '${iso(t0)}' AND '${iso(tMid)}'`, ['c', 'd', 'e1', 'e2']],
      [`StartTime > ${tMid * 1e6}`, ['c', 'd', 'e1', 'e2']], // Unix nanoseconds, as the real server takes them
      [`StartTime > '${iso(tMid).replace('Z', '+03:00')}'`, all], // an offset three hours east is three hours earlier
      ['CloseTime IS NULL', ['a']],
      ['CloseTime IS NOT NULL', but('a')],
      [`CloseTime > '${iso(t0)}'`, but('a')],
      [`ExecutionTime < '${iso(Date.now() + HOUR)}'`, all],
      [`TaskQueue = '${taskQueue}'`, all],
      ["TaskQueue = 'nobody'", []],
      ["MerchantId = 'm-1'", ['a', 'b']],
      ["MerchantId IN ('m-2', 'm-3')", ['c', 'e1', 'e2']],
      // A run without the attribute matches neither = nor != (SQL, as the dev server's SQLite store).
      ["MerchantId != 'm-1'", ['c', 'e1', 'e2']],
      ["NOT MerchantId = 'm-1'", ['c', 'e1', 'e2']],
      ['MerchantId IS NULL', ['d']],
      ["MerchantId STARTS_WITH 'm-'", but('d')],
      ["MerchantId BETWEEN 'm-2' AND 'm-9'", ['c', 'e1', 'e2']],
      ["EntityId = 'e-a' OR EntityId = 'e-b'", ['a', 'b']],
      ["MerchantId = 'm-1' AND NOT ExecutionStatus = 'Running'", ['b']],
      ["(MerchantId = 'm-1' OR MerchantId = 'm-2') AND WorkflowType = 'sleeper'", ['a', 'c']],
      ["MerchantId = 'm-1' AND (WorkflowType = 'sleeper' OR ExecutionStatus = 'Completed')", ['a', 'b']],
      ["ExecutionStatus = 'Running' or MerchantId = 'm-2'", ['a', 'c']], // keywords in any case
      ['`MerchantId` = "m-2"', ['c']],
      ["Stage = 'done'", ['d']], // upserted by the workflow
      ["WorkflowId = 'it''s' OR WorkflowId = 'it\\'s'", []],
      ['ParentWorkflowId IS NULL', all],
      [`  WorkflowType='sleeper'AND(ExecutionStatus='Running')  `, ['a']],
    ];
    const failures: string[] = [];
    for (const [query, want] of table) {
      const got = await listed(query);
      if (JSON.stringify([...got].sort()) !== JSON.stringify([...want].sort()))
        failures.push(`${query}: got ${got.join(',')} want ${want.join(',')}`);
      const counted = Number((await client.workflow.count(query)).count);
      if (counted !== want.length) failures.push(`count ${query}: got ${counted} want ${want.length}`);
    }
    assert.deepEqual(failures, []);
  });

  it('orders newest start first by default, honours ORDER BY, and pages in that order', async () => {
    const infos: WorkflowExecutionInfo[] = [];
    for await (const wf of client.workflow.list()) infos.push(wf);
    const byStart = [...infos].sort(
      (x, y) => y.startTime.getTime() - x.startTime.getTime() || (x.runId < y.runId ? 1 : -1),
    );
    assert.deepEqual(
      infos.map((i) => i.runId),
      byStart.map((i) => i.runId),
    );
    const defaultOrder = await listed('');
    assert.deepEqual(await listed('ORDER BY StartTime DESC'), defaultOrder);
    assert.deepEqual(await listed('order by StartTime asc'), [...defaultOrder].reverse());
    assert.deepEqual(await listed('', 2), defaultOrder, 'pages of 2 walk the same order');
    assert.deepEqual(
      await listed('ORDER BY StartTime', 4),
      [...defaultOrder].reverse(),
      'ASC is the default direction',
    );
    const closed = infos
      .filter((i) => i.closeTime)
      .sort((x, y) => (y.closeTime?.getTime() ?? 0) - (x.closeTime?.getTime() ?? 0));
    const byClose = await listed('ORDER BY CloseTime DESC', 1);
    // Open runs (no close time) come last; among equal close times the start order decides.
    assert.equal(byClose[byClose.length - 1], 'a');
    assert.deepEqual(
      new Set(byClose.slice(0, -1)),
      new Set(closed.map((i) => Object.entries(fx.runs).find(([, r]) => r === i.runId)?.[0])),
    );
    const closeTimes = byClose
      .slice(0, -1)
      .map((n) => closed.find((i) => i.runId === fx.runs[n])?.closeTime?.getTime() ?? 0);
    assert.deepEqual(
      closeTimes,
      [...closeTimes].sort((x, y) => y - x),
    );
    assert.deepEqual(await listed("MerchantId = 'm-1' ORDER BY StartTime ASC"), ['a', 'b']);
    assert.deepEqual(await listed("MerchantId = 'm-1'", 1), ['b', 'a']);
  });

  it("answers INVALID_ARGUMENT with the real server's message to bad filters, over List, Scan and Count", async () => {
    const table: [string, RegExp][] = [
      ["WorkflowId = 'a' AND", /^invalid query: malformed SQL query: syntax error at position 21$/],
      ["(WorkflowId = 'a'", /malformed SQL query: syntax error at position/],
      ["WorkflowId == 'a'", /malformed SQL query: syntax error at position 13 near '='/],
      ["WorkflowId = 'a' WorkflowType = 'b'", /malformed SQL query: syntax error at position 29 near 'WorkflowType'/],
      ['WorkflowId = "unterminated', /malformed SQL query/],
      ["WorkflowId = 'a' # b", /malformed SQL query: syntax error at position 18 near '#'/],
      ["Foo = 'a'", /^invalid query: invalid search attribute: Foo$/],
      ["MerchantId = 'm-1' AND merchantid = 'm-1'", /invalid search attribute: merchantid/], // names are case sensitive
      ["WorkflowId = 'a' ORDER BY Foo", /invalid search attribute: Foo/],
      [
        'MerchantId = 5',
        /invalid expression: invalid value type for search attribute MerchantId of type Keyword: 5 \(type: int64\)/,
      ],
      ["StartTime > 'yesterday'", /invalid expression: unable to parse datetime 'yesterday'/],
      ['StartTime > true', /invalid value type for search attribute StartTime of type Datetime/],
      ["ExecutionStatus = 'Sleeping'", /invalid expression: invalid ExecutionStatus value 'Sleeping'/],
      [
        "ExecutionStatus BETWEEN 'Running' AND 'Failed'",
        /cannot do range condition on search attribute 'ExecutionStatus'/,
      ],
      ["WorkflowId LIKE 'a%'", /operation is not supported/],
      ["ExecutionStatus < 'Running'", /operation is not supported: operator '<' not supported/],
      [
        "Stage STARTS_WITH 'd' AND CloseTime STARTS_WITH 'x'",
        /operator 'STARTS_WITH' not supported for Datetime type search attribute 'CloseTime'/,
      ],
      ["WorkflowId = 'a' LIMIT 5", /operation is not supported: 'LIMIT' clause/],
      ['WorkflowId', /invalid expression: incomplete expression/],
      ['WorkflowId = WorkflowType', /did you forget to quote/],
      ["'a' = WorkflowId", /must be a column name/],
      ['HistoryLength > 5', /operation is not supported: filtering on search attribute HistoryLength/],
      ["CloseTime IS 'x'", /'IS' operator can only be used as 'IS NULL' or 'IS NOT NULL'/],
      ['ORDER BY WorkflowId, Stage DESC GROUP BY ExecutionStatus', /malformed SQL query/],
    ];
    const svc = conn.workflowService;
    const failures: string[] = [];
    const expectInvalid = async (what: string, call: Promise<unknown>, want: RegExp): Promise<void> => {
      try {
        await call;
        failures.push(`${what}: no error`);
      } catch (err) {
        const e = err as { code?: number; details?: string };
        if (e.code !== 3 || !want.test(e.details ?? '')) failures.push(`${what}: code ${e.code} ${e.details}`);
      }
    };
    for (const [query, want] of table) {
      await expectInvalid(`list ${query}`, svc.listWorkflowExecutions({ namespace: 'default', query }), want);
      await expectInvalid(`scan ${query}`, svc.scanWorkflowExecutions({ namespace: 'default', query }), want);
      await expectInvalid(`count ${query}`, svc.countWorkflowExecutions({ namespace: 'default', query }), want);
    }
    await expectInvalid(
      'list GROUP BY',
      svc.listWorkflowExecutions({ namespace: 'default', query: 'GROUP BY ExecutionStatus' }),
      /operation is not supported: 'GROUP BY' clause/,
    );
    await expectInvalid(
      'count GROUP BY WorkflowType',
      svc.countWorkflowExecutions({ namespace: 'default', query: 'GROUP BY WorkflowType' }),
      /'GROUP BY' clause is not supported for search attribute WorkflowType/,
    );
    await expectInvalid(
      'a token of another order',
      svc.listWorkflowExecutions({
        namespace: 'default',
        query: 'ORDER BY CloseTime',
        nextPageToken: (await svc.listWorkflowExecutions({ namespace: 'default', query: '', pageSize: 1 }))
          .nextPageToken,
      }),
      /Malformed next page token/,
    );
    assert.deepEqual(failures, []);
  });

  it('counts grouped by ExecutionStatus as the real server answers (Keyword payload groups)', async () => {
    const all = await client.workflow.count('GROUP BY ExecutionStatus');
    assert.equal(all.count, 6);
    const groups = Object.fromEntries(all.groups.map((g) => [String(g.groupValues[0]), g.count]));
    assert.deepEqual(groups, { Running: 1, Completed: 3, Terminated: 1, ContinuedAsNew: 1 });
    const m1 = await client.workflow.count("MerchantId = 'm-1' GROUP BY ExecutionStatus");
    assert.equal(m1.count, 2);
    assert.deepEqual(Object.fromEntries(m1.groups.map((g) => [String(g.groupValues[0]), g.count])), {
      Running: 1,
      Completed: 1,
    });
    // On the wire: json/plain payloads of type Keyword, as the real server encodes a group value.
    const raw = await conn.workflowService.countWorkflowExecutions({
      namespace: 'default',
      query: "WorkflowType = 'sleeper' GROUP BY ExecutionStatus",
    });
    const first = raw.groups?.[0]?.groupValues?.[0];
    assert.equal(Buffer.from(first?.metadata?.type ?? []).toString(), 'Keyword');
    assert.equal(Buffer.from(first?.data ?? []).toString(), '"Running"');
    const sys = await conn.workflowService.getSystemInfo({});
    assert.equal(sys.capabilities?.countGroupByExecutionStatus, true);
    const keys = (await conn.workflowService.getSearchAttributes({})).keys ?? {};
    assert.equal(keys.MerchantId, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    assert.equal(keys.StartTime, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME);
  });

  it('keeps MerchantId listings right after close, continue-as-new, parking and a durable restart', async () => {
    const want = {
      e1: Status.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW,
      e2: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED,
    };
    const check = async (when: string): Promise<void> => {
      assert.deepEqual(await listed("MerchantId = 'm-3'"), ['e2', 'e1'], when);
      const infos: WorkflowExecutionInfo[] = [];
      for await (const wf of client.workflow.list({ query: "MerchantId = 'm-3'" })) infos.push(wf);
      assert.deepEqual(
        infos.map((i) => i.status.code),
        [want.e2, want.e1],
        when,
      );
      assert.deepEqual(
        infos.map((i) => i.searchAttributes.MerchantId),
        [['m-3'], ['m-3']],
        when,
      );
      assert.deepEqual(await listed("MerchantId = 'm-1' AND ExecutionStatus = 'Running'"), ['a'], when);
      assert.deepEqual(await listed("Stage = 'done'"), ['d'], when);
      assert.deepEqual(
        await listed("EntityId = 'e-e' AND CloseTime IS NOT NULL ORDER BY StartTime ASC"),
        ['e1', 'e2'],
        when,
      );
      const groups = (await client.workflow.count('GROUP BY ExecutionStatus')).groups;
      assert.deepEqual(
        Object.fromEntries(groups.map((g) => [String(g.groupValues[0]), g.count])),
        { Running: 1, Completed: 3, Terminated: 1, ContinuedAsNew: 1 },
        when,
      );
    };
    await check('before the restart');
    // Parked runs (idle and closed ones, durable mode) are listed from their rows, not woken.
    await waitFor(() => server.store.isParked(fx.runs.a) && server.store.isParked(fx.runs.e1), 10_000, 'runs parked');
    assert.equal(Number((await client.workflow.count("MerchantId = 'm-3'")).count), 2);
    assert.equal(server.store.isParked(fx.runs.e1), true, 'a count wakes nothing');
    await check('while parked');
    await close();
    await open();
    await check('after a durable restart');
    // The running run closes after the restart: its row moves from Running to Terminated.
    await client.workflow.getHandle(`${fx.p}-a`).terminate('after the restart');
    assert.deepEqual(await listed("MerchantId = 'm-1' AND ExecutionStatus = 'Terminated'"), ['a']);
    assert.deepEqual(await listed("ExecutionStatus = 'Running'"), []);
  });

  it('forgets a run purged after its retention', async () => {
    await conn.workflowService.registerNamespace({
      namespace: 'short-lived',
      workflowExecutionRetentionPeriod: { nanos: 1_000_000 },
    });
    const other = new Client({ connection: conn, namespace: 'short-lived' });
    const h = await other.workflow.start(sleeper, {
      taskQueue: uniqueTaskQueue('nobody'),
      workflowId: `${fx.p}-purged`,
      args: [HOUR],
      typedSearchAttributes: [{ key: MerchantId, value: 'm-purged' }],
    });
    assert.equal(Number((await other.workflow.count("MerchantId = 'm-purged'")).count), 1);
    assert.equal(Number((await client.workflow.count("MerchantId = 'm-purged'")).count), 0, 'namespaces are apart');
    await h.terminate('done');
    // The retention sweep runs every minute; run it now, until the 1 ms retention has passed.
    await waitFor(() => server.store.purgeClosed() === 1, 5000, 'the purge');
    assert.equal(Number((await other.workflow.count("MerchantId = 'm-purged'")).count), 0);
    assert.equal(Number((await other.workflow.count('')).count), 0);
    const listedIds: string[] = [];
    for await (const wf of other.workflow.list()) listedIds.push(wf.workflowId);
    assert.deepEqual(listedIds, []);
  });
});
