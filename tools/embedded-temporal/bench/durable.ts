/**
 * Cost of durable state: N one-activity workflows (start → result) against the launcher in its
 * dev-server shape (real time, as `npm start` runs it), once in memory and once with
 * `--db-filename`, interleaved. Prints, per mode, workflows/s and the server's CPU; for the
 * durable mode also journal bytes, commits (= fdatasync calls) and events per workflow.
 *
 *   npx tsx tools/embedded-temporal/bench/durable.ts [count=1000] [concurrency=200] [rounds=1]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { parseJournal } from '../src/persistence/journal';

const LAUNCHER = path.resolve(__dirname, '../bin/embedded-temporal');

/** CPU seconds of the server process (the launcher whose command line has the port). */
function serverCpuSeconds(port: number): number | null {
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cmd: string;
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmd.includes('embedded-temporal') && cmd.split('\0').includes(String(port))) {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    }
  }
  return null;
}

async function once(
  bundle: WorkflowBundleWithSourceMap,
  count: number,
  concurrency: number,
  dbFilename?: string,
): Promise<Record<string, unknown>> {
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: LAUNCHER }, ...(dbFilename ? { dbFilename } : {}) },
  });
  const port = Number(env.address.split(':').pop());
  const cpuStart = serverCpuSeconds(port) ?? 0;
  const taskQueue = `bench-durable-${Date.now()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: bundle,
    activities: { double: async (n: number) => n * 2 },
    maxConcurrentWorkflowTaskExecutions: 200,
    maxConcurrentActivityTaskExecutions: 200,
  });
  let next = 0;
  let done = 0;
  const t0 = Date.now();
  await worker.runUntil(async () => {
    const lane = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const r = await env.client.workflow.execute('oneActivity', {
          taskQueue,
          workflowId: `bd-${t0}-${i}`,
          args: [i],
        });
        if (r !== i * 2) throw new Error(`wrong result for ${i}`);
        done++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  });
  const seconds = (Date.now() - t0) / 1000;
  const cpu = (serverCpuSeconds(port) ?? 0) - cpuStart;
  await env.teardown();
  const out: Record<string, unknown> = {
    mode: dbFilename ? 'durable' : 'memory',
    workflows: done,
    workflowsPerSecond: Number((done / seconds).toFixed(1)),
    serverCpuMsPerWorkflow: Number(((cpu * 1000) / done).toFixed(2)),
  };
  if (dbFilename) {
    const buf = fs.readFileSync(dbFilename);
    const parsed = parseJournal(buf);
    const events = parsed.state.runs.reduce((n, r) => n + r.events.length, 0);
    out.journalBytesPerWorkflow = Math.round(buf.length / done);
    out.commitsPerWorkflow = Number((parsed.frames / done).toFixed(2));
    out.eventsPerWorkflow = Number((events / done).toFixed(1));
    const t = Date.now();
    parseJournal(buf);
    out.replayMsPer1000Workflows = Number((((Date.now() - t) * 1000) / done).toFixed(1));
  }
  return out;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1000);
  const concurrency = Number(process.argv[3] ?? 200);
  const rounds = Number(process.argv[4] ?? 1);
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
  });
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../test/workflows'),
    logger: new DefaultLogger('ERROR'),
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsrv-bench-durable-'));
  try {
    for (let r = 0; r < rounds; r++) {
      console.log(JSON.stringify(await once(bundle, count, concurrency)));
      console.log(JSON.stringify(await once(bundle, count, concurrency, path.join(dir, `round-${r}.db`))));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
