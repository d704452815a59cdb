/**
 * A monthly subscription over twelve cycles on the time-skipping server, end to end through the
 * API, the simulator's signed callbacks and a real worker: the payer approves, eleven cycles are
 * debited on their date, one is rejected then retried the next day and paid, and the merchant
 * cancels; the worker is restarted after cycle 6 and on each day around cycle 9's debit. Every paid cycle is a RECURRING charge booked once, every event recorded once, and the
 * ledger invariant holds.
 */
import assert from 'node:assert/strict';
import { cycleDate } from '../../src/domain/recurrence';
import { eventually, readyMerchant } from '../support/charges';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { sleepTo as sleepToDay, subscriptionsStack, type SubscriptionsStack } from '../support/subscriptions';

const DAY_MS = 86_400_000;

interface Cycle {
  number: number;
  dueDate: string;
  status: string;
  attempts: number;
  chargeId: string | null;
}
interface Sub {
  id: string;
  status: string;
  qrCode: string | null;
  imageBase64?: string | null;
  cycles?: Cycle[];
}

describe('subscription workflow: twelve monthly cycles on skipped time', function () {
  this.timeout(300_000);
  let s: SubscriptionsStack;
  before(async () => {
    s = await subscriptionsStack('subscription_flow');
  });

  let idle: () => Promise<void> = () => Promise.resolve();
  /** Steps of `sleepTo` on these days (YYYY-MM-DD) restart the worker before their callbacks are answered. */
  let restartOn = new Set<string>();
  let restarts = 0;
  const sleepTo = (date: string, days: number) =>
    sleepToDay(s, date, days, {
      idle: () => idle(),
      onDay: async (day) => {
        if (!restartOn.delete(day)) return;
        // Timers of the day have fired: a cobr request or a debit's callback may be in flight.
        await s.restartWorker();
        restarts++;
      },
    });

  it('approval, 11 paid cycles, one failed then retried and paid, a cancellation; all booked once', async () => {
    const { api, simulator, db } = s;
    const m = await readyMerchant(api);
    const startMs = await s.env.currentTimeMs();
    const firstDate = new Date(startMs + 5 * DAY_MS).toISOString().slice(0, 10);
    const body = {
      payer: { name: 'Ana Pagadora', document: '52998224725' },
      periodicity: 'MONTHLY',
      amount: 4_990,
      firstDate,
      retryPolicy: 'THREE_IN_SEVEN_DAYS',
      description: 'Academia plano mensal',
    };
    const created = await api.request<{ subscription: Sub }>('POST', '/v1/subscriptions', {
      token: m.token,
      headers: { 'x-idempotency-key': 'monthly-1' },
      body,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const sub = created.body.subscription;
    assert.equal(sub.status, 'PENDING_APPROVAL');
    assert.match(sub.qrCode ?? '', /^000201.*80\d\d0014br\.gov\.bcb\.pix25/);
    assert.match(sub.imageBase64 ?? '', /^data:image\/png;base64,/);

    const { id_rec: idRec } = (await db.knex('subscriptions').where({ id: sub.id }).first('id_rec')) as {
      id_rec: string;
    };
    simulator.control.recurrences.failFirstDebitDue(idRec, cycleDate(firstDate, 'MONTHLY', 5));
    simulator.control.recurrences.approveRec(idRec);
    const get = async () =>
      (await api.request<{ subscription: Sub }>('GET', `/v1/subscriptions/${sub.id}`, { token: m.token })).body
        .subscription;
    await eventually(async () => ((await get()).status === 'ACTIVE' ? true : undefined), 'approval', 60_000);
    const handle = s.env.client.workflow.getHandle(`subscription-${sub.id}`);
    idle = async () => {
      await eventually(
        async () => ((await handle.describe()).raw.pendingActivities?.length ? undefined : true),
        'idle',
      );
    };
    await sleepTo(cycleDate(firstDate, 'MONTHLY', 6), 2);
    const half = await get();
    assert.deepEqual(
      half.cycles?.map((c) => [c.number, c.status]),
      [1, 2, 3, 4, 5, 6].map((n) => [n, 'PAID']),
    );
    // A deploy between cycles, then one on each day around cycle 9's cobr and debit (docs/api.md
    // "Subscriptions"): restarts of the worker change nothing.
    await s.restartWorker();
    const ninth = Date.parse(`${cycleDate(firstDate, 'MONTHLY', 9)}T00:00:00Z`);
    restartOn = new Set([-4, -3, -2, -1, 0].map((d) => new Date(ninth + d * DAY_MS).toISOString().slice(0, 10)));
    await sleepTo(cycleDate(firstDate, 'MONTHLY', 12), 5);
    assert.equal(restarts, 5, 'every restart day was stepped on');

    const canceled = await api.request<{ subscription: Sub }>('POST', `/v1/subscriptions/${sub.id}/cancel`, {
      token: m.token,
    });
    assert.equal(canceled.status, 200);
    assert.equal(canceled.body.subscription.status, 'CANCELED');
    const result = (await s.env.client.workflow.getHandle(`subscription-${sub.id}`).result()) as { status: string };
    assert.equal(result.status, 'CANCELED');

    const final = await get();
    const cycles = final.cycles ?? [];
    assert.equal(cycles.filter((c) => c.status === 'PAID').length, 12);
    assert.deepEqual(
      cycles.filter((c) => c.attempts > 1).map((c) => [c.number, c.attempts]),
      [[5, 2]],
      'cycle 5: rejected on its date, paid on the retry',
    );
    assert.ok(cycles.every((c) => c.number <= 12 || c.status === 'CANCELED'));
    const charges = (await db
      .knex('charges')
      .where({ subscription_id: sub.id, status: 'PAID' })
      .select('type', 'amount', 'fee_amount')) as Array<{ type: string; amount: number }>;
    assert.equal(charges.length, 12);
    assert.ok(charges.every((c) => c.type === 'RECURRING' && c.amount === 4_990));

    const events = (await db
      .knex('events')
      .where({ merchant_id: m.merchantId })
      .select('type')
      .count('* as n')
      .groupBy('type')) as Array<{ type: string; n: string }>;
    const count = Object.fromEntries(events.map((e) => [e.type, Number(e.n)]));
    assert.equal(count['subscription.approved'], 1);
    assert.equal(count['subscription.charge.paid'], 12);
    assert.equal(count['subscription.charge.failed'], 1);
    assert.equal(count['subscription.canceled'], 1);
    assert.equal(count['charge.paid'], 12);
    assert.equal(simulator.control.recurrences.recByContract(sub.id), idRec);
    await assertLedgerInvariant(db.knex);
  });
});
