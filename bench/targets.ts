/**
 * The targets of docs/performance.md "Close to the floor", each beside its floor, read from the
 * files one `npm run bench` wrote (bench/results-close-to-floor.json, bench/results.json,
 * bench/results-one-connection.json) and written to bench/results-targets.json.
 *
 *   npx tsx bench/targets.ts     (recomputes from the files as they are)
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CloseToFloorFile } from './close-to-floor';
import type { ExternalBenchResult, ExternalRow } from './external';

export interface TargetRow {
  target: string;
  /** Ours, and the floor it is held against. */
  figure: number;
  floor: number;
  /** The ratio to the floor, or the absolute figure where the target is absolute. */
  value: number;
  limit: number;
  direction: 'at most' | 'at least';
  met: boolean;
}

const row = (r: Omit<TargetRow, 'met'>): TargetRow => ({
  ...r,
  met: r.direction === 'at most' ? r.value <= r.limit : r.value >= r.limit,
});

function paymentTargets(paired: CloseToFloorFile): TargetRow[] {
  const level = (c: number) => {
    const l = paired.levels.find((x) => x.concurrency === c);
    if (!l) throw new Error(`bench/results-close-to-floor.json has no level ${c}`);
    return l;
  };
  const one = level(1);
  const eight = level(8);
  return [
    row({
      target: 'payment → verified charge.paid, 1 in flight: p50 ÷ floor',
      figure: one.service.p50Ms,
      floor: one.floor.p50Ms,
      value: one.ratios.p50,
      limit: 1.25,
      direction: 'at most',
    }),
    row({
      target: '8 in flight: p50 ÷ floor',
      figure: eight.service.p50Ms,
      floor: eight.floor.p50Ms,
      value: eight.ratios.p50,
      limit: 1.5,
      direction: 'at most',
    }),
    row({
      target: '8 in flight: p99 ÷ floor',
      figure: eight.service.p99Ms,
      floor: eight.floor.p99Ms,
      value: eight.ratios.p99,
      limit: 2,
      direction: 'at most',
    }),
    row({
      target: '8 in flight: machine CPU per payment ÷ floor',
      figure: eight.service.machineCpuMsPerPayment,
      floor: eight.floor.machineCpuMsPerPayment,
      value: eight.ratios.machineCpu,
      limit: 2,
      direction: 'at most',
    }),
  ];
}

function chargeRow(r: ExternalBenchResult, file: string): ExternalRow & Required<Pick<ExternalRow, 'durableBaseline'>> {
  const found = r.rows.find((x) => x.endpoint === 'POST /v1/charges');
  if (!found?.durableBaseline) throw new Error(`${file} has no POST /v1/charges row with its durable baseline`);
  return found as ExternalRow & Required<Pick<ExternalRow, 'durableBaseline'>>;
}

function chargeTargets(many: ExternalBenchResult, one: ExternalBenchResult): TargetRow[] {
  const c32 = chargeRow(many, 'bench/results.json');
  const c1 = chargeRow(one, 'bench/results-one-connection.json');
  const rps = Math.round((c32.service.reqPerSec / c32.durableBaseline.reqPerSec) * 100) / 100;
  return [
    row({
      target: `POST /v1/charges req/s ÷ /insert-and-start, ${many.connections} connections`,
      figure: c32.service.reqPerSec,
      floor: c32.durableBaseline.reqPerSec,
      value: rps,
      limit: 0.6,
      direction: 'at least',
    }),
    row({
      target: `its p99 ms, ${many.connections} connections`,
      figure: c32.service.p99Ms,
      floor: c32.durableBaseline.p99Ms,
      value: c32.service.p99Ms,
      limit: 50,
      direction: 'at most',
    }),
    row({
      target: `its p99 ms, ${one.connections} connection`,
      figure: c1.service.p99Ms,
      floor: c1.durableBaseline.p99Ms,
      value: c1.service.p99Ms,
      limit: 8,
      direction: 'at most',
    }),
  ];
}

export function computeTargets(dir = __dirname): { date: string; rows: TargetRow[] } {
  const read = <T>(name: string): T => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as T;
  const paired = read<CloseToFloorFile>('results-close-to-floor.json');
  const rows = [
    ...paymentTargets(paired),
    ...chargeTargets(
      read<ExternalBenchResult>('results.json'),
      read<ExternalBenchResult>('results-one-connection.json'),
    ),
  ];
  return { date: paired.date, rows };
}

export function formatTargets(t: { rows: TargetRow[] }): string {
  return t.rows
    .map(
      (r) =>
        `${r.met ? 'met    ' : 'NOT met'}  ${r.target.padEnd(64)} ${r.value} (${r.direction} ${r.limit}; ours ${r.figure}, floor ${r.floor})`,
    )
    .join('\n');
}

export function writeTargets(dir = __dirname): string {
  const t = computeTargets(dir);
  fs.writeFileSync(path.join(dir, 'results-targets.json'), `${JSON.stringify(t, null, 2)}\n`);
  return formatTargets(t);
}

if (require.main === module) console.log(writeTargets());
