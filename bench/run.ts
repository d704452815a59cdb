/**
 * `npm run bench`: every benchmark of the project, bounded in count and time, 127.0.0.1 only.
 *   1. The service (real `npm start` process) against an external bare Koa + pg insert server,
 *      driven by autocannon in its own process (bench/external.ts) → bench/results.json
 *   1a. POST /v1/charges and the durable baseline at one connection (bench/external.ts
 *      --connections 1 --only 'POST /v1/charges') → bench/results-one-connection.json
 *   1b. GET /v1/charges for a merchant with 1,000,000 charges, list cache off (bench/external.ts
 *      --deep-list) → bench/results-deep-list.json
 *   2. QR image cost per charge (bench/qr.ts)
 *   3. Charge creation vs a bare endpoint on the same stack, and where a charge's time goes
 *      (bench/charges.ts)
 *   4. Payment callback → webhook latency, 500 concurrent withdrawals of one merchant (sagas held,
 *      then running), one idempotency key 20 times at once, peak RSS of the API and worker
 *      processes (bench/payments-webhooks.ts) → bench/results-payments.json
 *   5. A merchant's workflows listed by MerchantId over 20,000 runs on the official dev server,
 *      over gRPC and the UI's HTTP API (bench/visibility.ts)
 *      → bench/results-visibility.json
 *   6. Payment → verified webhook, hop by hop, the service's stack and its floor's (the Temporal
 *      steps alone: no database, no API) both running and paid in alternating blocks, 1 and 8 at a
 *      time, then the floor alone at 64 (bench/close-to-floor.ts) → bench/results-timeline.json,
 *      bench/results-floor.json, bench/results-close-to-floor.json
 *   7. The merchant's statement: the CSV of 1,000,000 lines (lines/s, the service's RSS growth)
 *      and a page at depth, beside the bare insert (bench/statement.ts) → bench/results-statement.json
 *   8. The JavaScript and CSS of the dashboard's first load, gzip, against the 300 KB budget
 *      (bench/dashboard-size.ts; builds the dashboard if needed) → bench/results-dashboard.json
 *   9. The targets of docs/performance.md "Close to the floor", each beside its floor, from the
 *      files above (bench/targets.ts) → bench/results-targets.json
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { formatQrBench, runQrBench } from './qr';
import { formatChargesBench, runChargesBench } from './charges';
import { formatDashboardSizeBench, runDashboardSizeBench, writeDashboardSizeResults } from './dashboard-size';
import { DEFAULT_WARMUP_SECONDS, formatExternalBench, runExternalBench } from './external';
import { formatPaymentsWebhooksBench, runPaymentsWebhooksBench } from './payments-webhooks';
import { formatStatementBench, runStatementBench } from './statement';
import { formatVisibilityBench, runVisibilityBench } from './visibility';
import { writeTargets } from './targets';

/** Where the figures go, and whether only the targets' benchmarks run. */
interface RunOptions {
  out: string;
  /** Only what bench/targets.ts reads: the charge at 32 and 1 connections, the paired payments. */
  targetsOnly: boolean;
}

const write = (o: RunOptions, name: string, data: unknown): void =>
  fs.writeFileSync(path.join(o.out, name), `${JSON.stringify(data, null, 2)}\n`);

/** The service against the bare insert (every endpoint, or only the charge), then the charge at one connection. */
async function runExternal(o: RunOptions): Promise<void> {
  console.log('== Service vs external baseline (autocannon, separate processes, 127.0.0.1) ==');
  const external = await runExternalBench({
    seconds: 8,
    warmup: DEFAULT_WARMUP_SECONDS,
    connections: 32,
    ...(o.targetsOnly ? { only: 'POST /v1/charges' } : {}),
  });
  console.log(formatExternalBench(external));
  write(o, 'results.json', external);
  console.log('\n== POST /v1/charges and the durable baseline, one connection ==');
  const one = await runExternalBench({
    seconds: 8,
    warmup: DEFAULT_WARMUP_SECONDS,
    connections: 1,
    only: 'POST /v1/charges',
  });
  console.log(formatExternalBench(one));
  write(o, 'results-one-connection.json', one);
}

/** Payment → webhook beside its floor, in its own process (the stacks' clients and runtimes are process-wide). */
function runPaired(o: RunOptions): void {
  console.log(
    '\n== Payment → webhook hop by hop beside its floor (alternating blocks, 1 and 8 at a time; the floor alone at 64) ==',
  );
  const paired = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'close-to-floor.ts'), '--out', o.out],
    { stdio: 'inherit' },
  );
  if (paired.status !== 0) throw new Error(`bench/close-to-floor.ts exited with ${paired.status}`);
}

async function runTheRest(o: RunOptions): Promise<void> {
  console.log('\n== GET /v1/charges with 1,000,000 charges for one merchant, list cache off ==');
  const deep = await runExternalBench({ seconds: 8, warmup: DEFAULT_WARMUP_SECONDS, connections: 32, deepList: true });
  console.log(formatExternalBench(deep));
  write(o, 'results-deep-list.json', deep);
  console.log('\n== QR image per charge ==');
  console.log(formatQrBench(await runQrBench({ count: 2000, seconds: 2 })));
  console.log('\n== Charge creation (HTTP, 127.0.0.1) ==');
  console.log(formatChargesBench(await runChargesBench({ count: 1000, concurrency: 16 })));
  console.log('\n== Payments → webhooks, 500 withdrawals, peak RSS (api + worker processes) ==');
  const paymentsWebhooks = await runPaymentsWebhooksBench({ payments: 1000, withdrawals: 500 });
  console.log(formatPaymentsWebhooksBench(paymentsWebhooks));
  write(o, 'results-payments.json', paymentsWebhooks);
  console.log('\n== Workflows of a merchant by MerchantId, 20,000 runs (official dev server: gRPC, HTTP API) ==');
  const visibility = await runVisibilityBench({ runs: 20_000, merchants: 200, iterations: 200 });
  console.log(formatVisibilityBench(visibility));
  write(o, 'results-visibility.json', visibility);
}

async function runLast(o: RunOptions): Promise<void> {
  console.log('\n== The statement: CSV of 1,000,000 lines, a page at depth, the bare insert ==');
  const statement = await runStatementBench({ entries: 1_000_000, seconds: 5 });
  console.log(formatStatementBench(statement));
  write(o, 'results-statement.json', statement);
  console.log("\n== The dashboard's first load: JavaScript and CSS, gzip, against 300 KB ==");
  const dashboard = await runDashboardSizeBench();
  console.log(formatDashboardSizeBench(dashboard));
  writeDashboardSizeResults(dashboard);
}

/**
 * `npm run bench` (every benchmark, into bench/); `npm run bench -- --targets-only --out DIR`
 * re-measures only the targets, into DIR (docs/performance.md "Close to the floor": three runs).
 */
async function main(): Promise<void> {
  const at = process.argv.indexOf('--out');
  const o: RunOptions = {
    out: at > 0 ? path.resolve(String(process.argv[at + 1])) : __dirname,
    targetsOnly: process.argv.includes('--targets-only'),
  };
  fs.mkdirSync(o.out, { recursive: true });
  await runExternal(o);
  if (!o.targetsOnly) await runTheRest(o);
  runPaired(o);
  if (!o.targetsOnly) await runLast(o);
  console.log('\n== Targets, each beside its floor (docs/performance.md "Close to the floor") ==');
  console.log(writeTargets(o.out));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
