/** What the benchmarks compute alike: percentiles, and closed loops with what they cost the CPU. */
import { machineCpuSeconds } from './external';

/** The p-th percentile (nearest rank, rounded down) of the finite values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

export interface LoopCost {
  /** Every core's busy time over the loops (`/proc/stat`), per item, ms. */
  machineCpuMsPerItem: number;
  /** Each of the given processes' CPU over the loops, per item, ms. */
  cpuMsPerItemByProcess: Record<string, number>;
}

/**
 * Runs `each` over `items` from `concurrency` closed loops (a loop takes the next item when its
 * last one is done) and says what they cost: the machine's CPU, and that of each process
 * `processes` reads (CPU seconds so far, by name), per item.
 */
export async function closedLoops<T>(
  items: readonly T[],
  concurrency: number,
  each: (item: T) => Promise<void>,
  processes: () => Record<string, number>,
): Promise<LoopCost> {
  let next = 0;
  const machine0 = machineCpuSeconds();
  const before = processes();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await each(items[next++] as T);
    }),
  );
  const machine = machineCpuSeconds() - machine0;
  const after = processes();
  const perItem = (seconds: number): number => Math.round((seconds * 1000 * 10) / Math.max(1, items.length)) / 10;
  return {
    machineCpuMsPerItem: perItem(machine),
    cpuMsPerItemByProcess: Object.fromEntries(
      Object.entries(after).map(([k, v]) => [k, perItem(v - (before[k] ?? 0))]),
    ),
  };
}
