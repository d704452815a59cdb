/**
 * What the payment floor (bench/payment-floor.ts) and the service's timeline
 * (bench/payment-timeline.ts) share, so that bench/close-to-floor.ts can drive both stacks in
 * alternating blocks (docs/performance.md "Close to the floor"): a side pays a block of fresh
 * payments from closed loops and says what each took, hop by hop, and what the block cost.
 */
import { closedLoops, percentile } from './stats';
import { hopFigures, type HopFigure } from './hops';

/** One block of payments made by one side at one concurrency. */
export interface PaidBlock {
  /** Payment → the receiver has it, one per payment, ms. */
  latencies: number[];
  /** The hops of each payment (bench/hops.ts `paymentHops`). */
  hopRows: number[][];
  /** The whole machine's busy CPU over the block, ms (`/proc/stat`). */
  machineCpuMs: number;
  /** Each process's CPU over the block, ms. */
  cpuMsByProcess: Record<string, number>;
}

/** A running stack that pays: the floor's or the service's. */
export interface PaymentSide {
  /** Makes `count` fresh payable items first (unmeasured), then pays them from `concurrency` loops. */
  pay(count: number, concurrency: number): Promise<PaidBlock>;
  close(): Promise<void>;
}

/** A level's figures over one or more blocks (the same shape for both sides). */
export interface LevelFigures {
  payments: number;
  concurrency: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  machineCpuMsPerPayment: number;
  cpuMsPerPaymentByProcess: Record<string, number>;
  hops: HopFigure[];
}

/**
 * Pays `items` from closed loops; `each` resolves with the payment's start, its arrival and its
 * hops (read after the loops, so that history reads cost the block nothing).
 */
export async function payBlock<T>(
  items: readonly T[],
  concurrency: number,
  each: (item: T) => Promise<{ t0: number; at: number; hops: () => Promise<number[]> }>,
  processes: () => Record<string, number>,
): Promise<PaidBlock> {
  const done: Array<{ t0: number; at: number; hops: () => Promise<number[]> }> = [];
  const cost = await closedLoops(items, concurrency, async (item) => void done.push(await each(item)), processes);
  const hopRows: number[][] = [];
  for (const d of done) hopRows.push(await d.hops());
  const total = (perItem: number): number => perItem * items.length;
  return {
    latencies: done.map((d) => d.at - d.t0),
    hopRows,
    machineCpuMs: total(cost.machineCpuMsPerItem),
    cpuMsByProcess: Object.fromEntries(Object.entries(cost.cpuMsPerItemByProcess).map(([k, v]) => [k, total(v)])),
  };
}

/** `f` run at most once, whoever calls first (bench/close-to-floor.ts closes the service early). */
export function once(f: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= f());
}

const tenth = (x: number): number => Math.round(x * 10) / 10;

/** The blocks of one side at one concurrency, pooled. */
export function levelFigures(concurrency: number, blocks: readonly PaidBlock[]): LevelFigures {
  const latencies = blocks.flatMap((b) => b.latencies);
  const n = Math.max(1, latencies.length);
  const byProcess: Record<string, number> = {};
  for (const b of blocks) for (const [k, v] of Object.entries(b.cpuMsByProcess)) byProcess[k] = (byProcess[k] ?? 0) + v;
  return {
    payments: latencies.length,
    concurrency,
    p50Ms: percentile(latencies, 50),
    p90Ms: percentile(latencies, 90),
    p99Ms: percentile(latencies, 99),
    machineCpuMsPerPayment: tenth(blocks.reduce((s, b) => s + b.machineCpuMs, 0) / n),
    cpuMsPerPaymentByProcess: Object.fromEntries(Object.entries(byProcess).map(([k, v]) => [k, tenth(v / n)])),
    hops: hopFigures(blocks.flatMap((b) => b.hopRows)),
  };
}

/** A level's figures as lines: the total, the machine's CPU and each process's, then the hops. */
export function formatLevel(name: string, l: LevelFigures): string {
  return [
    `${name}, ${l.concurrency} at a time, ${l.payments} payments: p50 ${l.p50Ms} ms, p90 ${l.p90Ms} ms, p99 ${l.p99Ms} ms`,
    `  machine CPU per payment ${l.machineCpuMsPerPayment} ms (${Object.entries(l.cpuMsPerPaymentByProcess)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})`,
    ...l.hops.map((h) => `  ${h.hop.padEnd(40)} p50 ${h.p50Ms} ms  p90 ${h.p90Ms} ms`),
  ].join('\n');
}
