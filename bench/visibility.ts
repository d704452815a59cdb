/**
 * Visibility at scale on the official dev server (docs/performance.md "Finding a merchant's
 * workflows"): list and count latency over many runs, as `npm start` runs it.
 *
 *   npx tsx bench/visibility.ts [runs=20000] [merchants=200] [iterations=200]
 *
 * `temporal server start-dev` in its own process (SQLite on disk, as `npm start`), started by the
 * project's own code (src/temporal/local-server.ts). The SDK client starts `runs` charge-shaped
 * workflows with a one-hour start delay and the typed Keyword search attributes MerchantId (spread
 * over `merchants`) and EntityId (one per run), as pixflow's charge client does; every 20th run is
 * terminated so that there are two statuses. Then, through the same client's gRPC connection,
 * `iterations` calls of each query below, reporting the median and p99 latency in ms (the call as
 * the client sees it), and the UI's own request for a merchant's runs over the HTTP API
 * (`GET /api/v1/namespaces/default/workflows?query=MerchantId…`). Bounded by `runs`.
 * `npm run bench` runs it (bench/run.ts) and keeps the figures in bench/results-visibility.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createLogger } from '../src/lib/logger';
import { ENTITY_ID_ATTRIBUTE as EntityId, MERCHANT_ID_ATTRIBUTE as MerchantId } from '../src/temporal/clients/starter';
import { startLocalTemporal } from '../src/temporal/local-server';

/** The dev server's visibility rate limit, out of the way of a benchmark of back-to-back calls. */
const VISIBILITY_RATE_LIMITS = {
  'frontend.namespaceRPS.visibility': 10_000,
  'frontend.namespaceBurstRatio.visibility': 10,
};

function stats(samples: number[]): { median: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { median: Number(at(0.5).toFixed(2)), p99: Number(at(0.99).toFixed(2)) };
}

export interface VisibilityBenchResult {
  runs: number;
  merchants: number;
  iterations: number;
  /** The server measured: "official dev server, temporal CLI 1.9.1". */
  server: string;
  loadSeconds: number;
  groups: string[];
  /** Query → latency in ms. */
  ms: Record<string, { median: number; p99: number }>;
}

export async function runVisibilityBench(opts: {
  runs: number;
  merchants: number;
  iterations: number;
}): Promise<VisibilityBenchResult> {
  const { runs, merchants, iterations } = opts;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-visibility-'));
  const server = await startLocalTemporal({
    dataDir,
    logger: createLogger({ level: 'silent' }),
    ui: false,
    // The server allows 10 visibility calls a second per namespace (a burst above it answers 429,
    // which the SDK's gRPC client retries unseen): raised so that each call's own cost is timed.
    dynamicConfig: VISIBILITY_RATE_LIMITS,
  });
  const connection = await Connection.connect({ address: server.address });
  const httpBase = server.httpUrl;
  const client = new Client({ connection });
  const merchant = (i: number): string => `merchant-${String(i % merchants).padStart(4, '0')}`;
  try {
    const t0 = Date.now();
    const batch = 200;
    for (let i = 0; i < runs; i += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, runs - i) }, async (_, j) => {
          const n = i + j;
          const id = `charge-${String(n).padStart(8, '0')}`;
          const h = await client.workflow.start('chargeWorkflow', {
            taskQueue: 'pixflow-charges',
            workflowId: id,
            args: [{ id }],
            startDelay: '1 hour',
            typedSearchAttributes: [
              { key: MerchantId, value: merchant(n) },
              { key: EntityId, value: id },
            ],
          });
          if (n % 20 === 0) await h.terminate('bench');
        }),
      );
    }
    const loadS = (Date.now() - t0) / 1000;
    // Visibility is written after the start returns: wait until every run is listed.
    for (let listed = 0; listed < runs;) {
      listed = Number((await connection.workflowService.countWorkflowExecutions({ namespace: 'default' })).count);
      if (listed < runs) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const queries: [string, (k: number) => Promise<unknown>][] = [
      [
        'list MerchantId = m (page of 20)',
        (k) =>
          connection.workflowService.listWorkflowExecutions({
            namespace: 'default',
            query: `MerchantId = '${merchant(k * 7919)}'`,
            pageSize: 20,
          }),
      ],
      [
        'HTTP API: list MerchantId = m (page of 20, as the UI asks)',
        async (k) => {
          const q = encodeURIComponent(`MerchantId = '${merchant(k * 7919)}'`);
          const res = await fetch(`${httpBase}/api/v1/namespaces/default/workflows?query=${q}&pageSize=20`);
          const body = (await res.json()) as { executions?: unknown[] };
          if (res.status !== 200 || !body.executions?.length) throw new Error(`HTTP list: ${res.status}`);
        },
      ],
      [
        "list MerchantId = m AND ExecutionStatus = 'Running' (page of 20)",
        (k) =>
          connection.workflowService.listWorkflowExecutions({
            namespace: 'default',
            query: `MerchantId = '${merchant(k * 7919)}' AND ExecutionStatus = 'Running'`,
            pageSize: 20,
          }),
      ],
      [
        'list EntityId = id (one run)',
        (k) =>
          connection.workflowService.listWorkflowExecutions({
            namespace: 'default',
            query: `EntityId = 'charge-${String((k * 7919) % runs).padStart(8, '0')}'`,
            pageSize: 20,
          }),
      ],
      [
        "list ExecutionStatus = 'Running' (page of 20)",
        () =>
          connection.workflowService.listWorkflowExecutions({
            namespace: 'default',
            query: "ExecutionStatus = 'Running'",
            pageSize: 20,
          }),
      ],
      [
        'list everything (page of 20)',
        () => connection.workflowService.listWorkflowExecutions({ namespace: 'default', query: '', pageSize: 20 }),
      ],
      [
        "count ExecutionStatus = 'Running'",
        () =>
          connection.workflowService.countWorkflowExecutions({
            namespace: 'default',
            query: "ExecutionStatus = 'Running'",
          }),
      ],
      [
        'count GROUP BY ExecutionStatus',
        () =>
          connection.workflowService.countWorkflowExecutions({
            namespace: 'default',
            query: 'GROUP BY ExecutionStatus',
          }),
      ],
      [
        'count MerchantId = m GROUP BY ExecutionStatus',
        (k) =>
          connection.workflowService.countWorkflowExecutions({
            namespace: 'default',
            query: `MerchantId = '${merchant(k * 7919)}' GROUP BY ExecutionStatus`,
          }),
      ],
      [
        "count WorkflowId STARTS_WITH 'charge-0001' (no index: every row evaluated)",
        () =>
          connection.workflowService.countWorkflowExecutions({
            namespace: 'default',
            query: "WorkflowId STARTS_WITH 'charge-0001'",
          }),
      ],
    ];
    const results: Record<string, { median: number; p99: number }> = {};
    for (const [name, call] of queries) {
      for (let k = 0; k < 10; k++) await call(k); // warm-up
      const samples: number[] = [];
      for (let k = 0; k < iterations; k++) {
        const t = process.hrtime.bigint();
        await call(k);
        samples.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      results[name] = stats(samples);
    }
    const check = await connection.workflowService.countWorkflowExecutions({
      namespace: 'default',
      query: 'GROUP BY ExecutionStatus',
    });
    return {
      runs,
      merchants,
      iterations,
      server: server.kind,
      loadSeconds: loadS,
      groups: (check.groups ?? []).map(
        (g) => `${Buffer.from(g.groupValues?.[0]?.data ?? []).toString()}: ${String(g.count)}`,
      ),
      ms: results,
    };
  } finally {
    await connection.close();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The rows docs/performance.md shows. */
export function formatVisibilityBench(r: VisibilityBenchResult): string {
  const lines = [
    `${r.server}: ${r.runs} runs, ${r.merchants} merchants, ${r.iterations} calls each; load ${r.loadSeconds} s`,
  ];
  for (const [name, { median, p99 }] of Object.entries(r.ms)) lines.push(`  ${name}: p50 ${median} ms, p99 ${p99} ms`);
  return lines.join('\n');
}

if (require.main === module) {
  runVisibilityBench({
    runs: Number(process.argv[2] ?? 20_000),
    merchants: Number(process.argv[3] ?? 200),
    iterations: Number(process.argv[4] ?? 200),
  })
    .then((r) => console.log(JSON.stringify(r, null, 2)))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
