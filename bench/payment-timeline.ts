/**
 * Where a payment's time goes on its way to the merchant (docs/performance.md "Payment to
 * webhook: the timeline"): the production-shape stack of `bench/payments-webhooks.ts`, payments made
 * by C closed loops, each timed hop by hop from the Temporal histories of its `charge-<id>` and
 * `webhook-delivery-<id>` runs (the server's event times, one wall clock on this machine) between
 * the simulator's payment and the receiver's verified arrival.
 *
 *   npx tsx bench/payment-timeline.ts [--payments N] [--concurrency C] [--settlement-delay S]
 *   (defaults 50, 1 and 0 seconds; bounded, 127.0.0.1 only)
 *
 * Prints the median and p90 of each hop, in milliseconds, and writes bench/results-timeline.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { createKnex } from '../src/db/knex';
import { migrateAsOwner } from '../src/db';
import { startStack } from '../tools/harness/src/stack';
import { call, readyMerchant, registerWebhook } from '../tools/harness/src/client';
import { startCountingReceiver } from '../tools/harness/src/receiver';
import { cpuSnapshot, processCpuSeconds } from './external';
import { closedLoops, percentile } from './stats';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type EventType = temporal.api.enums.v1.EventType;

const ms = (e: HistoryEvent | undefined): number => {
  const t = e?.eventTime;
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
};

/** The hops, in order; each is the time from the previous mark to this one. */
const HOPS = [
  'callback → charge run signalled',
  '→ its workflow task started',
  '→ recordPayment scheduled',
  '→ recordPayment completed (payment, event, outbox row)',
  '→ delivery run started (NOTIFY, dispatcher)',
  '→ its workflow task started',
  '→ delivery attempt scheduled',
  '→ receiver has the verified webhook',
] as const;

async function history(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  const h = await client.workflow.getHandle(workflowId).fetchHistory();
  return h.events ?? [];
}

function first(events: HistoryEvent[], type: EventType, after = 0): HistoryEvent | undefined {
  return events.find((e) => e.eventType === type && ms(e) >= after);
}

async function main(): Promise<void> {
  const arg = (name: string, dflt: number): number => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const payments = arg('payments', 50);
  // One level or several (`--concurrency 1,8`): each pays its own charges, one after the other.
  const levels = String(process.argv[process.argv.indexOf('--concurrency') + 1] ?? '1')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  if (!process.argv.includes('--concurrency')) levels.splice(0, levels.length, 1);
  const { EventType } = temporal.api.enums.v1;
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
    for (const concurrency of levels) {
      const charges: Array<{ chargeId: string; txid: string }> = [];
      for (let n = 0; n < payments; n++) {
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
      const machineCpuMsPerPayment = cost.machineCpuMsPerItem;
      const cpuMsPerPaymentByProcess = cost.cpuMsPerItemByProcess;
      const rows: number[][] = [];
      for (const { chargeId, t0, deliveryId, at } of paid) {
        const charge = await history(client, `charge-${chargeId}`);
        const delivery = await history(client, `webhook-delivery-${deliveryId}`);
        const signalled = first(charge, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, t0 - 1000);
        const taskStarted = first(charge, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, ms(signalled));
        const recordScheduled = charge.find(
          (e) =>
            e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
            e.activityTaskScheduledEventAttributes?.activityType?.name === 'recordPayment',
        );
        const recorded = charge.find(
          (e) =>
            e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED &&
            String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(recordScheduled?.eventId),
        );
        const deliveryStarted = first(delivery, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
        const deliveryTask = first(delivery, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
        const attemptScheduled = first(delivery, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
        const marks = [
          t0,
          ms(signalled),
          ms(taskStarted),
          ms(recordScheduled),
          ms(recorded),
          ms(deliveryStarted),
          ms(deliveryTask),
          ms(attemptScheduled),
          at,
        ];
        rows.push(marks.slice(1).map((t, k) => t - (marks[k] as number)));
      }
      const totals = rows.map((r) => r.reduce((a, b) => a + b, 0));
      const result = {
        payments,
        concurrency,
        hops: HOPS.map((hop, k) => ({
          hop,
          p50Ms: percentile(
            rows.map((r) => r[k] as number),
            50,
          ),
          p90Ms: percentile(
            rows.map((r) => r[k] as number),
            90,
          ),
        })),
        totalP50Ms: percentile(totals, 50),
        totalP90Ms: percentile(totals, 90),
        machineCpuMsPerPayment,
        cpuMsPerPaymentByProcess,
      };
      for (const h of result.hops) console.log(`${h.hop.padEnd(56)} p50 ${h.p50Ms} ms  p90 ${h.p90Ms} ms`);
      console.log(
        `${'total (payment → verified webhook)'.padEnd(56)} p50 ${result.totalP50Ms} ms  p90 ${result.totalP90Ms} ms`,
      );
      console.log(`${'machine CPU per payment (all processes)'.padEnd(56)} ${machineCpuMsPerPayment} ms`);
      for (const [k, v] of Object.entries(cpuMsPerPaymentByProcess)) console.log(`  ${k.padEnd(54)} ${v} ms`);
      console.log(`(${payments} payments, ${concurrency} at a time)`);
      results.push(result);
    }
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
