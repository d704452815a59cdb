/**
 * Heap per run waiting after its workflow tasks, then per closed run, parked and not (README,
 * "Memory per idle run").
 *
 *   npx tsx tools/embedded-temporal/bench/waiting-memory.ts [runs=2000]
 *
 * The shape of a pixflow charge once paid: a run that did its work (a workflow task, an activity,
 * another workflow task) and now waits on a long timer (the settlement delay) or for a signal. One
 * process, a durable server on 127.0.0.1 in real time (as `npm start` runs it), the real SDK worker
 * (its workflow cache bounded at 20 runs, so what grows is the server's) and client: `runs` such
 * workflows, then the heap growth after full collections, per run; then each is signalled and
 * finishes, and the growth is measured again per closed run (heap, and the off-heap bytes of
 * packed histories); once with parking off, once on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { silentLogger, startServer } from '../src/index';
import { durableAddSignal, effectThenWaits } from '../test/workflows';

setFlagsFromString('--expose-gc');
// V8 drops the bytecode of functions idle for a few collections: megabytes that would count
// against whichever phase the collections fall in.
setFlagsFromString('--no-flush-bytecode');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

interface Measured {
  kbPerRun: number;
  parked: number;
  closedKbPerRun: number;
  closedBufferKbPerRun: number;
  parkedClosed: number;
}

async function measure(runs: number, park: boolean, workflowBundle: { code: string }): Promise<Measured> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waiting-memory-'));
  const server = await startServer({
    port: 0,
    timeSkipping: false,
    logger: silentLogger,
    parkIdleAfterMs: park ? 200 : 0,
    dbFilename: path.join(dir, 'journal.db'),
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue: 'waiting',
    workflowBundle,
    maxCachedWorkflows: 20,
    activities: {
      sideEffect: async (tag: string) => tag,
      flaky: async (tag: string) => tag,
      slow: async (tag: string) => tag,
    },
  });
  const running = worker.run();
  try {
    let n = 0;
    // Each run: its first task and activity, then waits an hour for a signal.
    const batch = async (count: number, prefix: string): Promise<string> => {
      let last = '';
      for (let i = 0; i < count; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, count - i) }, () => {
            const id = idOf(prefix, n++);
            last = id;
            return client.workflow.start(effectThenWaits, {
              taskQueue: 'waiting',
              workflowId: id,
              args: [id, 3_600_000],
            });
          }),
        );
      }
      return last;
    };
    const idOf = (prefix: string, i: number): string =>
      `${prefix}-${String(i).padStart(8, '0')}-5f0c1e7a-2b7d-4c3e-9a51-0d2f3b4c5d6e`;
    const finish = async (prefix: string, from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, to - i) }, async (_, j) => {
            const handle = client.workflow.getHandle(idOf(prefix, i + j));
            await handle.signal(durableAddSignal, 'paid');
            await handle.result();
          }),
        );
      }
    };
    const settled = async (id: string): Promise<void> => {
      // The last run has written its timer: every run before it has too (one worker, in order).
      for (;;) {
        const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
        if (events.some((e) => e.timerStartedEventAttributes)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, park ? 1_000 : 200)); // parking sweeps (200 ms period)
    };
    // Warm-up: code compiled and caches filled before the baseline, so they do not count per run.
    const warm = await batch(200, 'warm');
    await settled(warm);
    await finish('warm', 0, 200);
    await new Promise((r) => setTimeout(r, 2_500)); // the warm-up's closed runs packed (and parked)
    const base = heapAfterGc();
    const baseBuffers = process.memoryUsage().arrayBuffers;
    await settled(await batch(runs, 'charge'));
    const kbPerRun = (heapAfterGc() - base) / runs / 1024;
    const parked = server.store.parkedCount;
    // Every one is signalled and finishes: closed runs, kept for the namespace's retention.
    await finish('charge', 200, 200 + runs);
    await new Promise((r) => setTimeout(r, 2_500)); // packed after 2 s; parking sweeps
    const closedKbPerRun = (heapAfterGc() - base) / runs / 1024;
    const closedBufferKbPerRun = (process.memoryUsage().arrayBuffers - baseBuffers) / runs / 1024;
    return { kbPerRun, parked, closedKbPerRun, closedBufferKbPerRun, parkedClosed: server.store.parkedClosedCount };
  } finally {
    worker.shutdown();
    await running;
    await workerConnection.close();
    await connection.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const runs = Number(process.argv[2] ?? 2000);
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, '../test/workflows'),
    logger: new DefaultLogger('ERROR'),
  });
  const live = await measure(runs, false, workflowBundle);
  const parked = await measure(runs, true, workflowBundle);
  console.log(`runs waiting after their tasks: ${runs} (an activity done, then an hour's timer), durable`);
  console.log(`  kept live: ${live.kbPerRun.toFixed(2)} KB heap per run`);
  console.log(`  parked:    ${parked.kbPerRun.toFixed(2)} KB heap per run (${parked.parked} parked at the end)`);
  console.log(`  ratio:     ${(parked.kbPerRun / live.kbPerRun).toFixed(3)}`);
  console.log(`then closed (signalled, finished; kept for the namespace's retention):`);
  console.log(
    `  kept live: ${live.closedKbPerRun.toFixed(2)} KB heap + ${live.closedBufferKbPerRun.toFixed(2)} KB off-heap buffers per run`,
  );
  console.log(
    `  parked:    ${parked.closedKbPerRun.toFixed(2)} KB heap + ${parked.closedBufferKbPerRun.toFixed(2)} KB off-heap buffers per run (${parked.parkedClosed} closed runs parked)`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
