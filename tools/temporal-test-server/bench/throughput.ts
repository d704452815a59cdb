/**
 * Throughput: N one-activity workflows, start → result, against the server in drop-in mode
 * (spawned by @temporalio/testing through the launcher, exactly as the tests use it).
 *
 *   npx tsx tools/temporal-test-server/bench/throughput.ts [count=1000] [concurrency=200]
 *
 * Prints workflows/s and the server process's RSS (read from /proc on Linux).
 */
import fs from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';

const LAUNCHER = path.resolve(__dirname, '../bin/temporal-test-server');

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
      if (cmd.includes('temporal-test-server') && cmd.split('\0').includes(String(port))) {
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

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1000);
  const concurrency = Number(process.argv[3] ?? 200);
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } } });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../test/workflows'),
    logger: new DefaultLogger('ERROR'),
  });
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: process.env.BENCH_LAUNCHER ?? LAUNCHER } },
  });
  const port = Number(env.address.split(':').pop());
  const taskQueue = `bench-${Date.now()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: { double: async (n: number) => n * 2 },
    maxConcurrentWorkflowTaskExecutions: 200,
    maxConcurrentActivityTaskExecutions: 200,
  });
  let next = 0;
  let done = 0;
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  await worker.runUntil(async () => {
    const lane = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const r = await env.client.workflow.execute('oneActivity', { taskQueue, workflowId: `bench-${t0}-${i}`, args: [i] });
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
      seconds: Number(seconds.toFixed(2)),
      workflowsPerSecond: Number((done / seconds).toFixed(1)),
      serverRssMb: stats ? Number(stats.rssMb.toFixed(1)) : null,
      serverCpuSeconds: stats ? stats.cpuSeconds : null,
      // The benchmark process hosts the SDK worker (Rust core + workflow sandbox) and the client.
      workerAndClientCpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    }),
  );
  await env.teardown();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
