/**
 * The service's way of a payment beside its floor, in one run (docs/performance.md "Close to the
 * floor"): the service's stack (bench/payment-timeline.ts) and the floor's (bench/payment-floor.ts)
 * both run, each with its own dev server, worker and processes, and are paid in alternating blocks
 * — service then floor, floor then service, … — so that a host whose speed drifts during the run
 * (a shared machine's does, by tens of per cent within minutes) slows both sides alike. Each level's
 * figures pool its side's blocks; the ratios are the service's over the floor's.
 *
 *   npx tsx bench/close-to-floor.ts [--payments N] [--concurrency 1,8] [--rounds R] [--warmup N] [--floor-only 64] [--out DIR] [--pg-socket]
 *   (defaults 300 payments per level and side in 6 rounds, 100 unmeasured payments 8 at a time on
 *   each side first, and the floor alone at 64 in flight afterwards; bounded, 127.0.0.1 only)
 *
 * Writes (into bench/, or DIR) results-timeline.json (the service), results-floor.json (the floor)
 * and results-close-to-floor.json (the ratios); fails if the ledger invariant does not hold.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openFloor } from './payment-floor';
import { openTimeline } from './payment-timeline';
import { formatLevel, levelFigures, type LevelFigures, type PaidBlock, type PaymentSide } from './payment-sides';

export interface PairedLevel {
  concurrency: number;
  /** The service's figures over the floor's: p50, p99 and the machine's CPU per payment. */
  ratios: { p50: number; p99: number; machineCpu: number };
  service: LevelFigures;
  floor: LevelFigures;
}

export interface CloseToFloorResult {
  date: string;
  machine: { cpus: number; model: string };
  rounds: number;
  levels: PairedLevel[];
  /** The floor alone at levels the service is not paired at (the queue's growth). */
  floorOnly: LevelFigures[];
  ledgerInvariant: 'OK';
}

/** What bench/results-close-to-floor.json holds (bench/targets.ts reads it). */
export interface CloseToFloorFile {
  date: string;
  machine: CloseToFloorResult['machine'];
  rounds: number;
  ledgerInvariant: 'OK';
  levels: Array<{
    concurrency: number;
    payments: number;
    ratios: PairedLevel['ratios'];
    service: Pick<LevelFigures, 'p50Ms' | 'p99Ms' | 'machineCpuMsPerPayment'>;
    floor: Pick<LevelFigures, 'p50Ms' | 'p99Ms' | 'machineCpuMsPerPayment'>;
  }>;
}

const headline = (l: LevelFigures): CloseToFloorFile['levels'][number]['service'] => ({
  p50Ms: l.p50Ms,
  p99Ms: l.p99Ms,
  machineCpuMsPerPayment: l.machineCpuMsPerPayment,
});

const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;

/** One level: `rounds` blocks of each side, the side that goes first alternating. */
async function pairedLevel(
  sides: { service: PaymentSide; floor: PaymentSide },
  concurrency: number,
  o: { payments: number; rounds: number },
): Promise<PairedLevel> {
  const blocks: { service: PaidBlock[]; floor: PaidBlock[] } = { service: [], floor: [] };
  const block = Math.ceil(o.payments / o.rounds);
  for (let r = 0; r < o.rounds; r++) {
    const order = r % 2 === 0 ? (['service', 'floor'] as const) : (['floor', 'service'] as const);
    for (const side of order) blocks[side].push(await sides[side].pay(block, concurrency));
  }
  const service = levelFigures(concurrency, blocks.service);
  const floor = levelFigures(concurrency, blocks.floor);
  return {
    concurrency,
    ratios: {
      p50: ratio(service.p50Ms, floor.p50Ms),
      p99: ratio(service.p99Ms, floor.p99Ms),
      machineCpu: ratio(service.machineCpuMsPerPayment, floor.machineCpuMsPerPayment),
    },
    service,
    floor,
  };
}

export async function runCloseToFloor(opts: {
  payments: number;
  levels: number[];
  rounds: number;
  warmup: number;
  floorOnly: number[];
  /** The service's PostgreSQL over its Unix socket instead of loopback TCP. */
  pgSocket?: boolean;
}): Promise<CloseToFloorResult> {
  const floor = await openFloor();
  try {
    const service = await openTimeline({ pgSocket: opts.pgSocket ?? false });
    try {
      // Unmeasured: every process's JIT warms up first (as bench/external.ts --warmup).
      await service.pay(opts.warmup, 8);
      await floor.pay(opts.warmup, 8);
      const levels: PairedLevel[] = [];
      for (const concurrency of opts.levels) {
        const level = await pairedLevel({ service, floor }, concurrency, opts);
        console.log(formatPaired(level));
        levels.push(level);
      }
      if (!(await service.ledgerInvariantOk())) throw new Error('the ledger invariant is violated after the payments');
      console.log('ledger invariant OK');
      await service.close();
      const floorOnly: LevelFigures[] = [];
      for (const concurrency of opts.floorOnly) {
        const level = levelFigures(concurrency, [await floor.pay(opts.payments, concurrency)]);
        console.log(formatLevel('floor alone', level));
        floorOnly.push(level);
      }
      const cpus = os.cpus();
      return {
        date: new Date().toISOString(),
        machine: { cpus: cpus.length, model: cpus[0]?.model ?? 'unknown' },
        rounds: opts.rounds,
        levels,
        floorOnly,
        ledgerInvariant: 'OK',
      };
    } finally {
      await service.close();
    }
  } finally {
    await floor.close();
  }
}

export function formatPaired(l: PairedLevel): string {
  return [
    formatLevel('service', l.service),
    formatLevel('floor', l.floor),
    `ratios at ${l.concurrency} in flight: p50 ${l.ratios.p50}, p99 ${l.ratios.p99}, machine CPU per payment ${l.ratios.machineCpu}`,
  ].join('\n');
}

/** The three files of one run: the service's levels, the floor's (paired, then alone), the ratios. */
export function writeCloseToFloorResults(r: CloseToFloorResult, dir = __dirname): void {
  fs.mkdirSync(dir, { recursive: true });
  const write = (name: string, data: unknown): void =>
    fs.writeFileSync(path.join(dir, name), `${JSON.stringify(data, null, 2)}\n`);
  write(
    'results-timeline.json',
    r.levels.map((l) => l.service),
  );
  write('results-floor.json', [...r.levels.map((l) => l.floor), ...r.floorOnly]);
  const file: CloseToFloorFile = {
    date: r.date,
    machine: r.machine,
    rounds: r.rounds,
    ledgerInvariant: r.ledgerInvariant,
    levels: r.levels.map((l) => ({
      concurrency: l.concurrency,
      payments: l.service.payments,
      ratios: l.ratios,
      service: headline(l.service),
      floor: headline(l.floor),
    })),
  };
  write('results-close-to-floor.json', file);
}

async function main(): Promise<void> {
  const arg = (name: string, dflt: string): string => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? String(process.argv[i + 1]) : dflt;
  };
  const list = (s: string): number[] =>
    s
      .split(',')
      .map(Number)
      .filter((n) => n > 0);
  const result = await runCloseToFloor({
    payments: Number(arg('payments', '300')),
    levels: list(arg('concurrency', '1,8')),
    rounds: Number(arg('rounds', '6')),
    warmup: Number(arg('warmup', '100')),
    floorOnly: list(arg('floor-only', '64')),
    pgSocket: process.argv.includes('--pg-socket'),
  });
  writeCloseToFloorResults(result, path.resolve(arg('out', __dirname)));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
