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
 * `npm run bench` drives this stack beside the floor's instead (bench/close-to-floor.ts).
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
import { call, readyMerchant, registerWebhook, type ReadyMerchant } from '../tools/harness/src/client';
import { startCountingReceiver } from '../tools/harness/src/receiver';
import { cpuSnapshot, processCpuSeconds } from './external';
import { historyOf, paymentHops } from './hops';
import { formatLevel, levelFigures, once, payBlock, type LevelFigures, type PaymentSide } from './payment-sides';

/** The service's stack as a payment side, and the ledger invariant over what it booked. */
export interface TimelineSide extends PaymentSide {
  /** Every payment booked once and balanced (docs/performance.md "Method"). */
  ledgerInvariantOk(): Promise<boolean>;
}

/**
 * The service's stack, running: API, worker and the dev server as their own processes, its own
 * PostgreSQL, and this process's simulator and signature-verifying receiver. Each `pay` creates
 * its charges through the API first, then pays them at the simulator from closed loops.
 */
export async function openTimeline(
  opts: { settlementDelaySeconds?: number; pgSocket?: boolean } = {},
): Promise<TimelineSide> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-bench-tl-'));
  fs.chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    persistent: false,
    database: 'pixflow_tl',
    // PostgreSQL over its Unix socket instead of loopback TCP (docs/performance.md "Close to the floor").
    ...(opts.pgSocket ? { socketDir: path.join(dir, 'socket') } : {}),
  });
  const knex = createKnex(pg.url, 2);
  const receiver = await startCountingReceiver();
  let stack: Awaited<ReturnType<typeof startStack>> | undefined;
  let connection: Connection | undefined;
  const close = once(async () => {
    await connection?.close();
    await stack?.stop();
    await receiver.close();
    await knex.destroy();
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  try {
    // Migrations run as the owner role; the service's role owns nothing (docs/production.md "Database roles").
    await migrateAsOwner({ migrationUrl: pg.ownerUrl });
    stack = await startStack({
      databaseUrl: pg.url,
      env: { RATE_LIMIT_BURST: '1000000', RATE_LIMIT_RPS: '1000000', LOG_LEVEL: 'error' },
      simulator: { transferDelayMs: 0 },
    });
    const s = stack;
    const [api, worker] = await Promise.all([s.startApi(), s.startWorker()]);
    // Each process's share of a payment: where the machine CPU goes.
    const byProcess = (): Record<string, number> => {
      const self = process.cpuUsage();
      return {
        api: processCpuSeconds(api.child.pid ?? 0),
        worker: processCpuSeconds(worker.child.pid ?? 0),
        temporal: processCpuSeconds(s.temporalPid),
        postgres: cpuSnapshot(undefined, path.join(dir, 'pg')).postgres,
        'bench (simulator, receiver)': (self.user + self.system) / 1e6,
      };
    };
    connection = await Connection.connect({ address: s.temporalAddress });
    const client = new Client({ connection });
    // The merchant settles at once by default, so each payment's settlement runs beside the next
    // payments; the platform's default delay (86400) moves it a day later.
    const m = await readyMerchant(api.url, { fund: 1_000, settlementDelaySeconds: opts.settlementDelaySeconds ?? 0 });
    const hook = await registerWebhook(api.url, m.apiKey, receiver.url('/tl'), ['charge.paid']);
    receiver.expect('/tl', hook.secret);
    const hopsOf = async (chargeId: string, deliveryId: string, t0: number, at: number): Promise<number[]> => {
      const charge = await historyOf(client, `charge-${chargeId}`);
      const delivery = await historyOf(client, `webhook-delivery-${deliveryId}`);
      return paymentHops({ charge, delivery, recordActivity: 'recordPayment' }, t0, at);
    };
    let made = 0;
    return {
      close,
      ledgerInvariantOk: async () => (await checkLedgerInvariant(knex)).ok,
      async pay(count, concurrency) {
        const charges = await createCharges(api.url, m, knex, count, () => made++);
        return payBlock(
          charges,
          concurrency,
          async ({ chargeId, txid }) => {
            const arrival = receiver.arrival((d) => d.answered === 200 && d.data.chargeId === chargeId);
            const t0 = Date.now();
            await s.simulator.control.payCob(txid);
            const d = await arrival;
            return { t0, at: d.at, hops: () => hopsOf(chargeId, d.deliveryId, t0, d.at) };
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

/** `count` PENDING charges of the merchant, each with the txid its payment needs. */
async function createCharges(
  apiUrl: string,
  m: ReadyMerchant,
  knex: ReturnType<typeof createKnex>,
  count: number,
  next: () => number,
): Promise<Array<{ chargeId: string; txid: string }>> {
  const charges: Array<{ chargeId: string; txid: string }> = [];
  for (let k = 0; k < count; k++) {
    const n = next();
    const res = await call<{ charge: { id: string } }>(apiUrl, 'POST', '/v1/charges', {
      token: m.apiKey,
      body: { amount: 1_000 + n, description: `timeline ${n}` },
    });
    if (res.status !== 201) throw new Error(`charge: ${res.status} ${res.text}`);
    const chargeId = res.body.charge.id;
    const { txid } = (await knex('charges').where({ id: chargeId }).first('txid')) as { txid: string };
    charges.push({ chargeId, txid });
  }
  return charges;
}

async function main(): Promise<void> {
  const arg = (name: string, dflt: number): number => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const at = process.argv.indexOf('--concurrency');
  // One level or several (`--concurrency 1,8`): each pays its own charges, one after the other.
  const levels = (at > 0 ? String(process.argv[at + 1]) : '1')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const side = await openTimeline({ settlementDelaySeconds: arg('settlement-delay', 0) });
  try {
    // Unmeasured: the processes' JIT warms up first, as the floor's (bench/payment-floor.ts).
    await side.pay(arg('warmup', 100), 8);
    const results: LevelFigures[] = [];
    for (const concurrency of levels) {
      const level = levelFigures(concurrency, [await side.pay(arg('payments', 50), concurrency)]);
      console.log(formatLevel('service', level));
      results.push(level);
    }
    const ok = await side.ledgerInvariantOk();
    console.log(`ledger invariant ${ok ? 'OK' : 'VIOLATED'}`);
    if (!ok) throw new Error('the ledger invariant is violated after the timeline');
    fs.writeFileSync(path.join(__dirname, 'results-timeline.json'), JSON.stringify(results, null, 2) + '\n');
  } finally {
    await side.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
