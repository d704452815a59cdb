/**
 * Throughput: N one-activity workflows, start → result, against the server in drop-in mode
 * (spawned by @temporalio/testing through the launcher, exactly as the tests use it).
 *
 *   npx tsx tools/embedded-temporal/bench/throughput.ts [count=1000] [concurrency=200]
 *
 * Prints workflows/s, the server process's RSS and CPU (read from /proc on Linux) and the CPU of
 * this process (SDK worker + client). Options (environment):
 *   BENCH_RPC_COUNTS=1       server calls per workflow, by method (via bench/rpc-count-launcher)
 *   BENCH_BREAKDOWN=1        p50/p90 of each stage of a workflow, from a sample of histories
 *   BENCH_WORKER_OPTIONS=... JSON merged into the Worker options, e.g. '{"maxCachedWorkflows":100}'
 *   BENCH_LAUNCHER=path      another server launcher (e.g. an older build, for before/after)
 *   BENCH_WORKER_GZIP=0      worker connection without gzip request compression (SDK default: gzip;
 *                            this server asks the SDK's connections to stop anyway, so it matters
 *                            only for other builds run through BENCH_LAUNCHER)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkerOptions,
} from '@temporalio/worker';

const LAUNCHER = path.resolve(__dirname, '../bin/embedded-temporal');

/** RSS and CPU time of the server process (the launcher's node process whose cmdline has the port). */
function serverStats(port: number): { rssMb: number; cpuSeconds: number } | undefined {
  try {
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      let cmd = '';
      try {
        cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (cmd.includes('embedded-temporal') && cmd.split('\0').includes(String(port))) {
        const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        const m = /VmRSS:\s+(\d+) kB/.exec(status);
        // /proc/<pid>/stat fields 14 and 15: user and system time in clock ticks (100 Hz on Linux).
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / 100;
        if (m) return { rssMb: Number(m[1]) / 1024, cpuSeconds };
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** BENCH_WORKER_OPTIONS='{"maxCachedWorkflows":100}': extra Worker options, to compare settings. */
function workerOverrides(): Partial<WorkerOptions> {
  const raw = process.env.BENCH_WORKER_OPTIONS;
  if (!raw) return {};
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('BENCH_WORKER_OPTIONS must be a JSON object');
  return parsed as Partial<WorkerOptions>;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1000);
  const concurrency = Number(process.argv[3] ?? 200);
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
  });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../test/workflows'),
    logger: new DefaultLogger('ERROR'),
  });
  // BENCH_RPC_COUNTS=1: run the server through bench/rpc-count-launcher and print calls per workflow.
  const countsFile = process.env.BENCH_RPC_COUNTS
    ? path.join(os.tmpdir(), `embedded-temporal-rpc-counts-${process.pid}.json`)
    : '';
  if (countsFile) process.env.TEMPORAL_TEST_SERVER_RPC_COUNTS = countsFile;
  const launcher = countsFile
    ? path.resolve(__dirname, 'rpc-count-launcher')
    : (process.env.BENCH_LAUNCHER ?? LAUNCHER);
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: launcher } },
  });
  const port = Number(env.address.split(':').pop());
  const taskQueue = `bench-${Date.now()}`;
  // BENCH_WORKER_GZIP=0: the worker gets its own connection without request compression.
  const ownConnection =
    process.env.BENCH_WORKER_GZIP === '0'
      ? await NativeConnection.connect({ address: env.address, grpcCompression: { codec: 'none' } })
      : undefined;
  const worker = await Worker.create({
    connection: ownConnection ?? env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: { double: async (n: number) => n * 2 },
    maxConcurrentWorkflowTaskExecutions: 200,
    maxConcurrentActivityTaskExecutions: 200,
    ...workerOverrides(),
  });
  let next = 0;
  let done = 0;
  const latencies: number[] = [];
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  await worker.runUntil(async () => {
    const lane = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const ts = Date.now();
        const r = await env.client.workflow.execute('oneActivity', {
          taskQueue,
          workflowId: `bench-${t0}-${i}`,
          args: [i],
        });
        latencies.push(Date.now() - ts);
        if (r !== i * 2) throw new Error(`wrong result for ${i}: ${String(r)}`);
        done++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  });
  const seconds = (Date.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const stats = serverStats(port);
  console.log(
    JSON.stringify({
      workflows: done,
      concurrency,
      workerOptions: process.env.BENCH_WORKER_OPTIONS ?? undefined,
      workerGzip: process.env.BENCH_WORKER_GZIP !== '0',
      seconds: Number(seconds.toFixed(2)),
      workflowsPerSecond: Number((done / seconds).toFixed(1)),
      serverRssMb: stats ? Number(stats.rssMb.toFixed(1)) : null,
      serverCpuSeconds: stats ? stats.cpuSeconds : null,
      // The benchmark process hosts the SDK worker (Rust core + workflow sandbox) and the client.
      workerAndClientCpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    }),
  );
  if (countsFile) {
    await new Promise((resolve) => setTimeout(resolve, 600));
    const counts = JSON.parse(fs.readFileSync(countsFile, 'utf8')) as Record<string, number>;
    fs.rmSync(countsFile, { force: true });
    const perWorkflow: Record<string, number> = {};
    let total = 0;
    for (const [name, n] of Object.entries(counts).sort((a, b) => b[1] - a[1])) {
      perWorkflow[name] = Number((n / done).toFixed(2));
      if (!name.startsWith('(')) total += n;
    }
    console.log(JSON.stringify({ rpcsPerWorkflow: Number((total / done).toFixed(2)), byMethod: perWorkflow }));
  }
  if (process.env.BENCH_BREAKDOWN) await breakdown(env, t0, count, latencies);
  await ownConnection?.close();
  await env.teardown();
}

/**
 * BENCH_BREAKDOWN=1: where a workflow's time goes, from the event times of a sample of histories
 * (the virtual clock follows the wall clock while anything is in flight, as during the run).
 */
async function breakdown(env: TestWorkflowEnvironment, t0: number, count: number, latencies: number[]): Promise<void> {
  const stages = new Map<string, number[]>();
  const add = (k: string, v: number): void => {
    const a = stages.get(k) ?? [];
    a.push(v);
    stages.set(k, a);
  };
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
    t ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
  for (let i = Math.floor(count / 2); i < Math.min(count, Math.floor(count / 2) + 100); i++) {
    const h = await env.client.workflow.getHandle(`bench-${t0}-${i}`).fetchHistory();
    const ev = (h.events ?? []).map((e) => ({ type: String(e.eventType), t: ms(e.eventTime) }));
    // Started, WFTScheduled, WFTStarted, WFTCompleted, ActScheduled, ActStarted, ActCompleted,
    // WFTScheduled, WFTStarted, WFTCompleted, WorkflowCompleted
    if (ev.length !== 11) continue;
    add('wft1 queued (scheduled → started)', ev[2].t - ev[1].t);
    add('wft1 worker (started → completed)', ev[3].t - ev[2].t);
    // ActivityTaskStarted is written when the activity closes, so this is queue + execution.
    add('activity (scheduled → completed)', ev[6].t - ev[4].t);
    add('wft2 queued (scheduled → started)', ev[8].t - ev[7].t);
    add('wft2 worker (started → completed)', ev[9].t - ev[8].t);
    add('server: start → close', ev[10].t - ev[0].t);
  }
  const pct = (a: number[], p: number): number =>
    [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))] ?? 0;
  const out: Record<string, string> = {};
  for (const [k, a] of stages) out[k] = `p50 ${pct(a, 0.5)} ms, p90 ${pct(a, 0.9)} ms`;
  out['client: start → result'] = `p50 ${pct(latencies, 0.5)} ms, p90 ${pct(latencies, 0.9)} ms`;
  console.log(JSON.stringify(out, null, 1));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
