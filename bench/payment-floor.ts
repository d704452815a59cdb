/**
 * What the Temporal steps of a payment cost alone (docs/performance.md "What the Temporal steps
 * alone cost"): the official Temporal dev server (`temporal server start-dev`) and an SDK worker, each in its own process as in
 * `bench/payment-timeline.ts`, run a payment's workflow shape with no database, no API and no
 * signature — signal-with-start of a charge-shaped run parked in its start delay, one activity that
 * starts the delivery-shaped run, one activity that POSTs to a receiver here
 * (bench/floor/workflows.ts). Payments are made by C closed loops per level.
 *
 *   npx tsx bench/payment-floor.ts [--payments N] [--concurrency 1,8,64] [--warmup N] [--shape S]
 *   (defaults 300, 1,8,64 and 100 unmeasured payments 8 at a time first; bounded, 127.0.0.1 only)
 *   --shape two-runs (default: the service's), local-activities or one-run (FloorShape below)
 *
 * Prints, per level, the latency from signal-with-start to the receiver's POST (p50, p90, p99),
 * the machine's CPU per payment and each process's share; writes bench/results-floor.json.
 * Whatever the real path adds (PostgreSQL, the API, the ledger, the outbox, signing) comes on top,
 * so these figures bound from below what the payment → webhook latency can be on this machine.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import {
  spawnProc,
  startTemporalProcess,
  waitUntil,
  type Proc,
  type TemporalProcess,
} from '../tools/harness/src/stack';
import { processCpuSeconds } from './external';
import { closedLoops, percentile } from './stats';
import { historyOf, hopFigures, paymentHops, type HopFigure } from './hops';

interface Receiver {
  url: string;
  arrival(paymentId: string): Promise<number>;
  close(): Promise<void>;
}

/** A bare receiver: answers 200 and tells the loop that waits for that payment when it arrived. */
async function startReceiver(): Promise<Receiver> {
  const waiting = new Map<string, (at: number) => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const { paymentId } = JSON.parse(Buffer.concat(chunks).toString()) as { paymentId: string };
      res.writeHead(200).end();
      waiting.get(paymentId)?.(at);
      waiting.delete(paymentId);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/floor`,
    arrival: (paymentId) => new Promise((resolve) => waiting.set(paymentId, resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * `two-runs`: the service's shape (a charge run and a delivery run, one activity each);
 * `local-activities`: the same with local activities; `one-run`: the charge run's activity POSTs.
 */
export type FloorShape = 'two-runs' | 'local-activities' | 'one-run';
const CHARGE_TYPE: Record<FloorShape, string> = {
  'two-runs': 'floorChargeWorkflow',
  'local-activities': 'floorChargeLocalWorkflow',
  'one-run': 'floorChargeOneRunWorkflow',
};

export interface FloorLevel {
  payments: number;
  concurrency: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  machineCpuMsPerPayment: number;
  cpuMsPerPaymentByProcess: Record<string, number>;
  /** The service's shape only: the same hops as bench/payment-timeline.ts's, to compare one by one. */
  hops?: HopFigure[];
}

export async function runPaymentFloorBench(opts: {
  payments: number;
  levels: number[];
  warmup: number;
  shape?: FloorShape;
}): Promise<FloorLevel[]> {
  const taskQueue = `floor-${crypto.randomUUID()}`;
  const chargeType = CHARGE_TYPE[opts.shape ?? 'two-runs'];
  const receiver = await startReceiver();
  let temporal: TemporalProcess | undefined;
  let worker: Proc | undefined;
  let connection: NativeConnection | undefined;
  try {
    const server = await startTemporalProcess();
    temporal = server;
    worker = spawnProc('floor-worker', ['--import', 'tsx', 'bench/floor/worker.ts'], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: server.address,
      TASK_QUEUE: taskQueue,
      RECEIVER_URL: receiver.url,
    });
    const w = worker;
    await waitUntil(() => /polling/.test(w.output.join('')) || !w.alive(), 180_000, 'the floor worker polling', 100);
    if (!w.alive()) throw new Error(`the floor worker exited:\n${w.output.join('')}`);
    // The API side's client: a Rust-core connection, as the service's (TEMPORAL_CLIENT_NATIVE).
    connection = await NativeConnection.connect({ address: server.address });
    const client = new Client({ connection });
    const temporalPid = temporal.pid;
    const workerPid = w.child.pid ?? 0;
    const byProcess = (): Record<string, number> => {
      const self = process.cpuUsage();
      return {
        worker: processCpuSeconds(workerPid),
        temporal: processCpuSeconds(temporalPid),
        'bench (client, receiver)': (self.user + self.system) / 1e6,
      };
    };
    const results: FloorLevel[] = [];
    // Level 0, unmeasured: the processes' JIT warms up first, as in bench/external.ts --warmup.
    for (const [level, concurrency] of [8, ...opts.levels].entries()) {
      // Each payment's charge run exists first, parked in its start delay, as a created charge's.
      const ids = Array.from({ length: level === 0 ? opts.warmup : opts.payments }, (_, n) => `${level}-${n}`);
      for (const id of ids) {
        await client.workflow.start(chargeType, {
          workflowId: `floor-charge-${id}`,
          taskQueue,
          startDelay: '1 hour',
        });
      }
      const paid: Array<{ id: string; t0: number; at: number }> = [];
      const cost = await closedLoops(
        ids,
        concurrency,
        async (id) => {
          const arrival = receiver.arrival(id);
          const t0 = Date.now();
          await client.workflow.signalWithStart(chargeType, {
            workflowId: `floor-charge-${id}`,
            taskQueue,
            signal: 'paid',
            signalArgs: [{ paymentId: id }],
          });
          paid.push({ id, t0, at: await arrival });
        },
        byProcess,
      );
      if (level === 0) continue;
      const latencies = paid.map((p) => p.at - p.t0);
      results.push({
        payments: ids.length,
        concurrency,
        p50Ms: percentile(latencies, 50),
        p90Ms: percentile(latencies, 90),
        p99Ms: percentile(latencies, 99),
        machineCpuMsPerPayment: cost.machineCpuMsPerItem,
        cpuMsPerPaymentByProcess: cost.cpuMsPerItemByProcess,
        ...(chargeType === CHARGE_TYPE['two-runs'] ? { hops: await floorHops(client, paid) } : {}),
      });
    }
    return results;
  } finally {
    await connection?.close();
    await worker?.stop();
    await temporal?.stop();
    await receiver.close();
  }
}

async function floorHops(client: Client, paid: Array<{ id: string; t0: number; at: number }>): Promise<HopFigure[]> {
  const rows: number[][] = [];
  for (const { id, t0, at } of paid) {
    const charge = await historyOf(client, `floor-charge-${id}`);
    const delivery = await historyOf(client, `floor-delivery-${id}`);
    rows.push(paymentHops({ charge, delivery, recordActivity: 'floorRecord' }, t0, at));
  }
  return hopFigures(rows);
}

export function formatPaymentFloorBench(levels: FloorLevel[]): string {
  return levels
    .map((l) =>
      [
        `${l.concurrency} at a time, ${l.payments} payments: p50 ${l.p50Ms} ms, p90 ${l.p90Ms} ms, p99 ${l.p99Ms} ms`,
        `  machine CPU per payment ${l.machineCpuMsPerPayment} ms (${Object.entries(l.cpuMsPerPaymentByProcess)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')})`,
        ...(l.hops ?? []).map((h) => `  ${h.hop.padEnd(40)} p50 ${h.p50Ms} ms  p90 ${h.p90Ms} ms`),
      ].join('\n'),
    )
    .join('\n');
}

async function main(): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const payments = Number(arg('payments') ?? 300);
  const levels = (arg('concurrency') ?? '1,8,64')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const results = await runPaymentFloorBench({
    payments,
    levels,
    warmup: Number(arg('warmup') ?? 100),
    shape: (arg('shape') ?? 'two-runs') as FloorShape,
  });
  console.log(formatPaymentFloorBench(results));
  fs.writeFileSync(path.join(__dirname, 'results-floor.json'), `${JSON.stringify(results, null, 2)}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
