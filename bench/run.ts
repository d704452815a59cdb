/**
 * `npm run bench`: every benchmark of the project, bounded in count and time, 127.0.0.1 only.
 *   1. QR image cost per charge (bench/qr.ts)
 *   2. Charge creation vs a bare endpoint on the same stack, and where a charge's time goes
 *      (bench/charges.ts)
 * The Temporal test server's own throughput benchmark: tools/temporal-test-server/bench.
 */
import { formatQrBench, runQrBench } from './qr';
import { formatChargesBench, runChargesBench } from './charges';

async function main(): Promise<void> {
  console.log('== QR image per charge ==');
  console.log(formatQrBench(await runQrBench({ count: 2000, seconds: 2 })));
  console.log('\n== Charge creation (HTTP, 127.0.0.1) ==');
  console.log(formatChargesBench(await runChargesBench({ count: 1000, concurrency: 16 })));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
