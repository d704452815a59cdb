/**
 * Heap per idle run, parked and not (docs/performance.md "Memory per idle run").
 *
 *   npx tsx tools/embedded-temporal/bench/idle-memory.ts [runs=5000] [durable]
 *
 * One process: for each mode a server on 127.0.0.1 (real time), the SDK client starting `runs`
 * workflows with a one-hour start delay (a pixflow charge waiting out its expiry), then the
 * server's heap growth after full collections, per run. With parking it also times parking and
 * waking: the CPU of one sweep that parks every run, and of waking every run again (the lookup
 * that any request on a parked run makes). `durable`: the server keeps a journal (as in `npm
 * start`), so a parked run keeps only where the journal holds its started event.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client, Connection } from '@temporalio/client';
import { silentLogger, startServer } from '../src/index';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function measure(runs: number, park: boolean, durable: boolean): Promise<Record<string, number>> {
  const dir = durable ? fs.mkdtempSync(path.join(os.tmpdir(), 'idle-memory-')) : undefined;
  // Parking is driven by hand here (parkIdle), so the interval is long enough never to fire.
  const server = await startServer({
    port: 0,
    timeSkipping: false,
    logger: silentLogger,
    parkIdleAfterMs: park ? 3_600_000 : 0,
    dbFilename: dir ? path.join(dir, 'journal.db') : undefined,
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  try {
    // Warm up the paths once so that code and caches do not count as per-run memory.
    await client.workflow.start('chargeWorkflow', {
      taskQueue: 'idle',
      workflowId: 'warm-up',
      args: [{ id: 'warm-up' }],
      startDelay: '1 hour',
    });
    const base = heapAfterGc();
    const ids: string[] = [];
    for (let i = 0; i < runs; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, runs - i) }, (_, j) => {
          const id = `charge-${String(i + j).padStart(8, '0')}-5f0c1e7a-2b7d-4c3e-9a51-0d2f3b4c5d6e`;
          ids.push(id);
          // The shape of a pixflow charge's start: its reference as the one argument.
          return client.workflow.start('chargeWorkflow', {
            taskQueue: 'pixflow-charges',
            workflowId: id,
            args: [{ id, merchantId: '7a1c2d3e-4f50-6172-8394-a5b6c7d8e9f0' }],
            startDelay: '1 hour',
          });
        }),
      );
    }
    const out: Record<string, number> = {};
    if (park) {
      const c0 = cpuMs();
      server.store.parkIdle(); // candidates age one call
      const parked = server.store.parkIdle();
      out.parkUsPerRun = ((cpuMs() - c0) * 1000) / Math.max(1, parked);
      out.parked = parked;
    }
    out.heapBytesPerRun = (heapAfterGc() - base) / runs;
    if (park) {
      // Waking alone, in-process: the lookup every request on a run makes, on parked runs.
      const c0 = cpuMs();
      for (const id of ids) server.store.findRun('default', id, '');
      out.wakeUsPerRun = ((cpuMs() - c0) * 1000) / ids.length;
    }
    return out;
  } finally {
    await connection.close();
    await server.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5000);
  const durable = process.argv[3] === 'durable';
  const kept = await measure(runs, false, durable);
  const parked = await measure(runs, true, durable);
  const kb = (b: number): string => (b / 1024).toFixed(2);
  console.log(`idle runs: ${runs} (one-hour start delay, charge-shaped start)${durable ? ', durable (journal)' : ''}`);
  console.log(`  kept live: ${kb(kept.heapBytesPerRun)} KB heap per run`);
  console.log(`  parked:    ${kb(parked.heapBytesPerRun)} KB heap per run (${parked.parked} parked)`);
  console.log(`  ratio:     ${(parked.heapBytesPerRun / kept.heapBytesPerRun).toFixed(3)}`);
  console.log(
    `  parking:   ${parked.parkUsPerRun.toFixed(1)} µs CPU per run; waking: ${parked.wakeUsPerRun.toFixed(1)} µs CPU per run`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
