/**
 * Where a payment's time goes on its way to the merchant (docs/performance.md "Payment to
 * webhook: the timeline"): the production-shape stack of `bench/payments-webhooks.ts`, payments made
 * by C closed loops, each timed hop by hop from the Temporal histories of its `charge-<id>` and
 * `webhook-delivery-<id>` runs (the server's event times, one wall clock on this machine) between
 * the simulator's payment and the receiver's verified arrival.
 *
 *   npx tsx bench/payment-timeline.ts [--payments N] [--concurrency C] [--settlement-delay S] [--warmup N]
 *   (defaults 50, 1, 0 seconds and 100 unmeasured payments 8 at a time first; bounded, 127.0.0.1 only)
 *
 * Prints the median and p90 of each hop, in milliseconds, and writes bench/results-timeline.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { createKnex } from '../src/db/knex';
import { migrateAsOwner } from '../src/db';
import { checkLedgerInvariant } from '../src/services/ledger/invariant';
import { startStack } from '../tools/harness/src/stack';
import { call, readyMerchant, registerWebhook } from '../tools/harness/src/client';
import { startCountingReceiver } from '../tools/harness/src/receiver';
import { cpuSnapshot, processCpuSeconds } from './external';
import { closedLoops, percentile } from './stats';
import { historyOf, hopFigures, paymentHops } from './hops';

async function main(): Promise<void> {
  const arg = (name: string, dflt: number): number => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const payments = arg('payments', 50);
  const warmup = arg('warmup', 100);
  // One level or several (`--concurrency 1,8`): each pays its own charges, one after the other.
  const levels = String(process.argv[process.argv.indexOf('--concurrency') + 1] ?? '1')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  if (!process.argv.includes('--concurrency')) levels.splice(0, levels.length, 1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-bench-tl-'));
  fs.chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), persistent: false, database: 'pixflow_tl' });
  const knex = createKnex(pg.url, 2);
  const receiver = await startCountingReceiver();
  let stack: Awaited<ReturnType<typeof startStack>> | undefined;
  let connection: Connection | undefined;
  try {
    // Migrations run as the owner role; the service's role owns nothing (docs/production.md "Database roles").
    await migrateAsOwner({ migrationUrl: pg.ownerUrl });
    stack = await startStack({
      databaseUrl: pg.url,
      env: { RATE_LIMIT_BURST: '1000000', RATE_LIMIT_RPS: '1000000', LOG_LEVEL: 'error' },
      simulator: { transferDelayMs: 0 },
    });
    const [api, worker] = await Promise.all([stack.startApi(), stack.startWorker()]);
    const temporalPid = stack.temporalPid;
    // Each process's share of a payment: where the machine CPU goes.
    const byProcess = (): Record<string, number> => {
      const self = process.cpuUsage();
      return {
        api: processCpuSeconds(api.child.pid ?? 0),
        worker: processCpuSeconds(worker.child.pid ?? 0),
        temporal: processCpuSeconds(temporalPid),
        postgres: cpuSnapshot(undefined, path.join(dir, 'pg')).postgres,
        'bench (simulator, receiver)': (self.user + self.system) / 1e6,
      };
    };
    connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection });
    // The merchant settles at once by default (`--settlement-delay 0`), so each payment's settlement
    // runs beside the next payments; the platform's default delay (86400) moves it a day later.
    const m = await readyMerchant(api.url, { fund: 1_000, settlementDelaySeconds: arg('settlement-delay', 0) });
    const hook = await registerWebhook(api.url, m.apiKey, receiver.url('/tl'), ['charge.paid']);
    receiver.expect('/tl', hook.secret);
    const results = [];
    // Level 0, unmeasured: the processes' JIT warms up first, as the floor's (bench/payment-floor.ts).
    for (const [level, concurrency] of [8, ...levels].entries()) {
      const charges: Array<{ chargeId: string; txid: string }> = [];
      for (let n = 0; n < (level === 0 ? warmup : payments); n++) {
        const res = await call<{ charge: { id: string } }>(api.url, 'POST', '/v1/charges', {
          token: m.apiKey,
          body: { amount: 1_000 + n, description: `timeline ${n}` },
        });
        if (res.status !== 201) throw new Error(`charge: ${res.status} ${res.text}`);
        const chargeId = res.body.charge.id;
        const { txid } = (await knex('charges').where({ id: chargeId }).first('txid')) as { txid: string };
        charges.push({ chargeId, txid });
      }
      // `concurrency` closed loops pay the charges; histories are read once every payment arrived.
      const paid: Array<{ chargeId: string; t0: number; deliveryId: string; at: number }> = [];
      // What a payment costs the whole machine (every process: the stack, PostgreSQL, the simulator
      // and receiver of this process), the figure that bounds how many payments two cores can carry.
      const cost = await closedLoops(
        charges,
        concurrency,
        async ({ chargeId, txid }) => {
          const arrival = receiver.arrival((d) => d.answered === 200 && d.data.chargeId === chargeId);
          const t0 = Date.now();
          await stack!.simulator.control.payCob(txid);
          const d = await arrival;
          paid.push({ chargeId, t0, deliveryId: d.deliveryId, at: d.at });
        },
        byProcess,
      );
      if (level === 0) continue;
      const machineCpuMsPerPayment = cost.machineCpuMsPerItem;
      const cpuMsPerPaymentByProcess = cost.cpuMsPerItemByProcess;
      const rows: number[][] = [];
      for (const { chargeId, t0, deliveryId, at } of paid) {
        const charge = await historyOf(client, `charge-${chargeId}`);
        const delivery = await historyOf(client, `webhook-delivery-${deliveryId}`);
        rows.push(paymentHops({ charge, delivery, recordActivity: 'recordPayment' }, t0, at));
      }
      const totals = paid.map((p) => p.at - p.t0);
      const result = {
        payments,
        concurrency,
        hops: hopFigures(rows),
        totalP50Ms: percentile(totals, 50),
        totalP90Ms: percentile(totals, 90),
        totalP99Ms: percentile(totals, 99),
        machineCpuMsPerPayment,
        cpuMsPerPaymentByProcess,
      };
      for (const h of result.hops) console.log(`${h.hop.padEnd(56)} p50 ${h.p50Ms} ms  p90 ${h.p90Ms} ms`);
      console.log(
        `${'total (payment → verified webhook)'.padEnd(56)} p50 ${result.totalP50Ms} ms  p90 ${result.totalP90Ms} ms  p99 ${result.totalP99Ms} ms`,
      );
      console.log(`${'machine CPU per payment (all processes)'.padEnd(56)} ${machineCpuMsPerPayment} ms`);
      for (const [k, v] of Object.entries(cpuMsPerPaymentByProcess)) console.log(`  ${k.padEnd(54)} ${v} ms`);
      console.log(`(${payments} payments, ${concurrency} at a time)`);
      results.push(result);
    }
    // Every payment was booked once and balanced (docs/performance.md "Method").
    const invariant = await checkLedgerInvariant(knex);
    console.log(`ledger invariant ${invariant.ok ? 'OK' : 'VIOLATED'}`);
    if (!invariant.ok) throw new Error('the ledger invariant is violated after the timeline');
    fs.writeFileSync(path.join(__dirname, 'results-timeline.json'), JSON.stringify(results, null, 2) + '\n');
  } finally {
    await connection?.close();
    await stack?.stop();
    await receiver.close();
    await knex.destroy();
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
