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
import { historyOf, paymentHops, type HopFigure } from './hops';
import { formatLevel, levelFigures, once, payBlock, type LevelFigures, type PaymentSide } from './payment-sides';

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

/** A level's figures; `hops` only for the service's shape (`two-runs`), to compare with the timeline's one by one. */
export type FloorLevel = Omit<LevelFigures, 'hops'> & { hops?: HopFigure[] };

/**
 * The floor's stack, running: the dev server and the floor's worker, each in its own process,
 * and this process's client and receiver. Each `pay` parks fresh charge-shaped runs in their start
 * delay (as a created charge's), then wakes them by signal-with-start from closed loops.
 */
export async function openFloor(opts: { shape?: FloorShape } = {}): Promise<PaymentSide> {
  const taskQueue = `floor-${crypto.randomUUID()}`;
  const chargeType = CHARGE_TYPE[opts.shape ?? 'two-runs'];
  const receiver = await startReceiver();
  let temporal: TemporalProcess | undefined;
  let worker: Proc | undefined;
  let connection: NativeConnection | undefined;
  const close = once(async () => {
    await connection?.close();
    await worker?.stop();
    await temporal?.stop();
    await receiver.close();
  });
  try {
    temporal = await startTemporalProcess();
    worker = spawnProc('floor-worker', ['--import', 'tsx', 'bench/floor/worker.ts'], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: temporal.address,
      TASK_QUEUE: taskQueue,
      RECEIVER_URL: receiver.url,
    });
    const w = worker;
    await waitUntil(() => /polling/.test(w.output.join('')) || !w.alive(), 180_000, 'the floor worker polling', 100);
    if (!w.alive()) throw new Error(`the floor worker exited:\n${w.output.join('')}`);
    // The API side's client: a Rust-core connection, as the service's (TEMPORAL_CLIENT_NATIVE).
    connection = await NativeConnection.connect({ address: temporal.address });
    const client = new Client({ connection });
    const { pid: temporalPid } = temporal;
    const workerPid = w.child.pid ?? 0;
    const byProcess = (): Record<string, number> => {
      const self = process.cpuUsage();
      return {
        worker: processCpuSeconds(workerPid),
        temporal: processCpuSeconds(temporalPid),
        'bench (client, receiver)': (self.user + self.system) / 1e6,
      };
    };
    const hopsOf = async (id: string, t0: number, at: number): Promise<number[]> => {
      if (chargeType !== CHARGE_TYPE['two-runs']) return [];
      const charge = await historyOf(client, `floor-charge-${id}`);
      const delivery = await historyOf(client, `floor-delivery-${id}`);
      return paymentHops({ charge, delivery, recordActivity: 'floorRecord' }, t0, at);
    };
    let made = 0;
    return {
      close,
      async pay(count, concurrency) {
        const ids = Array.from({ length: count }, () => String(made++));
        for (const id of ids) {
          await client.workflow.start(chargeType, {
            workflowId: `floor-charge-${id}`,
            taskQueue,
            startDelay: '1 hour',
          });
        }
        return payBlock(
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
            const at = await arrival;
            return { t0, at, hops: () => hopsOf(id, t0, at) };
          },
          byProcess,
        );
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The floor alone, level by level, after an unmeasured warm-up (as bench/external.ts --warmup). */
export async function runPaymentFloorBench(opts: {
  payments: number;
  levels: number[];
  warmup: number;
  shape?: FloorShape;
}): Promise<FloorLevel[]> {
  const floor = await openFloor({ shape: opts.shape });
  try {
    await floor.pay(opts.warmup, 8);
    const results: FloorLevel[] = [];
    for (const concurrency of opts.levels) {
      const { hops, ...figures } = levelFigures(concurrency, [await floor.pay(opts.payments, concurrency)]);
      results.push((opts.shape ?? 'two-runs') === 'two-runs' ? { ...figures, hops } : figures);
    }
    return results;
  } finally {
    await floor.close();
  }
}

export function formatPaymentFloorBench(levels: FloorLevel[]): string {
  return levels.map((l) => formatLevel('floor', { ...l, hops: l.hops ?? [] })).join('\n');
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
