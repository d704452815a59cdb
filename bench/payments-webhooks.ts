/**
 * The service in production shape under load: `src/cli/api.ts` and `src/cli/worker.ts` as child
 * processes over a fresh embedded PostgreSQL and the official Temporal dev server (`temporal server start-dev`, real time), the
 * acquirer simulator and a webhook receiver in this process, all on 127.0.0.1.
 *
 *   npx tsx bench/payments-webhooks.ts [--payments N] [--withdrawals N] [--concurrency N]
 *
 *   1. Payment callback → webhook: `payments` charges are created, then paid one after another by
 *      `concurrency` closed loops; each latency runs from the simulator's payment (which sends the
 *      signed callback) to the moment the receiver has the verified `charge.paid` (p50/p99).
 *   2. `withdrawals` withdrawals of one merchant requested at once, twice: with the worker stopped
 *      (201s per second of the request path alone; the held sagas run when it is back), then with
 *      the worker running the sagas meanwhile (201s per second, then the rate until every one is
 *      COMPLETED: transfer sent, callback, ledger, `withdraw.completed`).
 *   3. 20 requests at once with one idempotency key (one withdrawal, one id answered), then the
 *      ledger invariant over the whole database.
 *   4. Peak RSS of the API and the worker process (the kernel's high-water mark, VmHWM).
 * Bounded: the counts above (defaults 1,000 and 500), every wait capped.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { createKnex } from '../src/db/knex';
import { migrateAsOwner } from '../src/db';
import { checkLedgerInvariant } from '../src/services/ledger/invariant';
import { startStack, waitUntil } from '../tools/harness/src/stack';
import { call, readyMerchant, registerWebhook, withdrawalBody } from '../tools/harness/src/client';
import { startCountingReceiver } from '../tools/harness/src/receiver';
import { percentile } from './stats';

export interface PaymentsWebhooksResult {
  payments: number;
  concurrency: number;
  callbackToWebhookP50Ms: number;
  callbackToWebhookP99Ms: number;
  withdrawals: number;
  /** 201s per second with the worker stopped: the request path alone. */
  withdrawalRequestsPerSecondSagasHeld: number;
  /** 201s per second while the worker runs the sagas of the withdrawals being accepted. */
  withdrawalRequestsPerSecond: number;
  withdrawalsCompletedPerSecond: number;
  /** 20 requests at once with one idempotency key: withdrawals made, and distinct withdrawal ids answered. */
  oneKeyTwentyRequests: { withdrawals: number; distinctAnswers: number };
  withdrawalErrors: number;
  /** How the withdrawal requests were answered, by status (0: no answer within 120 s). */
  withdrawalStatuses: Record<string, number>;
  ledgerInvariantOk: boolean;
  apiPeakRssMb: number;
  workerPeakRssMb: number;
}

const round = (n: number): number => Math.round(n * 10) / 10;

function peakRssMb(pid: number | undefined): number {
  if (!pid) return NaN;
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? round(Number(m[1]) / 1024) : NaN;
}

async function inBatches<T>(count: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) out[i] = await fn(i);
    }),
  );
  return out;
}

export async function runPaymentsWebhooksBench(opts: {
  payments: number;
  withdrawals: number;
  concurrency?: number;
}): Promise<PaymentsWebhooksResult> {
  const concurrency = opts.concurrency ?? 8;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-bench-pw-'));
  fs.chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    persistent: false,
    database: 'pixflow_bench',
  });
  const knex = createKnex(pg.url, 4);
  const receiver = await startCountingReceiver();
  let stack: Awaited<ReturnType<typeof startStack>> | undefined;
  try {
    // Migrations run as the owner role; the service's role owns nothing (docs/production.md "Database roles").
    await migrateAsOwner({ migrationUrl: pg.ownerUrl });
    stack = await startStack({
      databaseUrl: pg.url,
      env: { DATABASE_POOL_MAX: '10', RATE_LIMIT_BURST: '1000000', RATE_LIMIT_RPS: '1000000', LOG_LEVEL: 'error' },
      simulator: { transferDelayMs: 0 },
    });
    const api = await stack.startApi();
    let worker = await stack.startWorker();
    const m = await readyMerchant(api.url, { fund: opts.withdrawals * 2 * 100 + 10_000 });
    const hook = await registerWebhook(api.url, m.apiKey, receiver.url('/bench'), ['charge.paid']);
    receiver.expect('/bench', hook.secret);

    // 1. Payment callback → webhook received.
    const txids = await inBatches(opts.payments, concurrency, async (i) => {
      const res = await call<{ charge: { id: string } }>(api.url, 'POST', '/v1/charges', {
        token: m.apiKey,
        body: { amount: 1_000 + i, description: `bench ${i}` },
      });
      if (res.status !== 201) throw new Error(`charge: ${res.status} ${res.text}`);
      const row: { txid: string } = await knex('charges').where({ id: res.body.charge.id }).first('txid');
      return { chargeId: res.body.charge.id, txid: row.txid };
    });
    const latencies = await inBatches(opts.payments, concurrency, async (i) => {
      const { chargeId, txid } = txids[i] as { chargeId: string; txid: string };
      const arrival = receiver.arrival((d) => d.answered === 200 && d.data.chargeId === chargeId);
      const t0 = Date.now();
      await stack!.simulator.control.payCob(txid);
      // From the payment to the receiver's verified arrival, both on this process's wall clock.
      return (await arrival).at - t0;
    });

    // 2. `withdrawals` withdrawals at once, twice: first with the worker stopped, so the answer
    // rate is the request path's alone (API, PostgreSQL, the durable saga start); then with the
    // worker running every saga on the same two cores meanwhile. The held sagas run once the
    // worker is back.
    const requestAll = async (): Promise<{ statuses: number[]; ms: number }> => {
      const t0 = performance.now();
      const statuses = await Promise.all(
        Array.from({ length: opts.withdrawals }, () =>
          call(api.url, 'POST', '/v1/merchants/me/withdrawals', {
            token: m.apiKey,
            body: withdrawalBody(100),
            timeoutMs: 120_000,
          })
            .then((r) => r.status)
            .catch(() => 0),
        ),
      );
      return { statuses, ms: performance.now() - t0 };
    };
    const completed = async (): Promise<number> =>
      Number(
        (
          await knex('withdrawals')
            .where({ merchant_id: m.merchantId, status: 'COMPLETED' })
            .count<{ n: number }[]>('* as n')
        )[0]?.n,
      );
    const allCompleted = (n: number): Promise<void> =>
      waitUntil(async () => (await completed()) === n, 300_000, 'every withdrawal COMPLETED', 100);

    await worker.stop();
    const held = await requestAll();
    const heldAccepted = held.statuses.filter((st) => st === 201).length;
    worker = await stack.startWorker();
    await allCompleted(heldAccepted);

    const w0 = performance.now();
    const live = await requestAll();
    const accepted = live.statuses.filter((st) => st === 201).length;
    await allCompleted(heldAccepted + accepted);
    const completedMs = performance.now() - w0;

    // 3. 20 requests at once with one idempotency key: one withdrawal, every answer naming it.
    const key = `bench-${Date.now()}`;
    const body = withdrawalBody(100);
    const twins = await Promise.all(
      Array.from({ length: 20 }, () =>
        call<{ withdraw: { id: string } }>(api.url, 'POST', '/v1/merchants/me/withdrawals', {
          token: m.apiKey,
          body,
          headers: { 'idempotency-key': key },
          timeoutMs: 60_000,
        }),
      ),
    );
    const twinIds = new Set(
      twins.map((t) => (t.status === 201 || t.status === 200 ? t.body.withdraw.id : `status ${t.status}`)),
    );
    const keyRows = Number(
      (
        await knex('withdrawals')
          .where({ merchant_id: m.merchantId, idempotency_key: key })
          .count<{ n: number }[]>('* as n')
      )[0]?.n,
    );

    const report = await checkLedgerInvariant(knex);

    return {
      payments: opts.payments,
      concurrency,
      callbackToWebhookP50Ms: round(percentile(latencies, 50)),
      callbackToWebhookP99Ms: round(percentile(latencies, 99)),
      withdrawals: opts.withdrawals,
      withdrawalRequestsPerSecondSagasHeld: round(heldAccepted / (held.ms / 1000)),
      withdrawalRequestsPerSecond: round(accepted / (live.ms / 1000)),
      withdrawalsCompletedPerSecond: round(accepted / (completedMs / 1000)),
      withdrawalErrors: 2 * opts.withdrawals - heldAccepted - accepted,
      withdrawalStatuses: [...held.statuses, ...live.statuses].reduce<Record<string, number>>(
        (acc, st) => ({ ...acc, [st]: (acc[st] ?? 0) + 1 }),
        {},
      ),
      oneKeyTwentyRequests: { withdrawals: keyRows, distinctAnswers: twinIds.size },
      ledgerInvariantOk: report.ok,
      apiPeakRssMb: peakRssMb(api.child.pid),
      workerPeakRssMb: peakRssMb(worker.child.pid),
    };
  } finally {
    await stack?.stop();
    await receiver.close();
    await knex.destroy();
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function formatPaymentsWebhooksBench(r: PaymentsWebhooksResult): string {
  return [
    `Payment callback → webhook received (${r.payments} payments, ${r.concurrency} at a time): p50 ${r.callbackToWebhookP50Ms} ms, p99 ${r.callbackToWebhookP99Ms} ms`,
    `${r.withdrawals} concurrent withdrawals of one merchant: ${r.withdrawalRequestsPerSecondSagasHeld} accepted/s with the sagas held (worker stopped), ${r.withdrawalRequestsPerSecond} accepted/s with the worker running them meanwhile (answers by status: ${JSON.stringify(r.withdrawalStatuses)}); all COMPLETED at ${r.withdrawalsCompletedPerSecond}/s`,
    `20 concurrent requests with one idempotency key: ${r.oneKeyTwentyRequests.withdrawals} withdrawal(s), ${r.oneKeyTwentyRequests.distinctAnswers} distinct answer(s); ledger invariant ${r.ledgerInvariantOk ? 'OK' : 'VIOLATED'}`,
    `Peak RSS under this load: API ${r.apiPeakRssMb} MB, worker ${r.workerPeakRssMb} MB`,
  ].join('\n');
}

if (require.main === module) {
  const arg = (name: string, dflt: number): number => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : dflt;
  };
  runPaymentsWebhooksBench({
    payments: arg('payments', 1000),
    withdrawals: arg('withdrawals', 500),
    concurrency: arg('concurrency', 8),
  })
    .then((r) => {
      console.log(formatPaymentsWebhooksBench(r));
      console.log(JSON.stringify(r));
      process.exit(0);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
