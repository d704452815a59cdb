/**
 * A variable subscription (`maxAmount`) on skipped time, through the API, the simulator and a real
 * worker (docs/api.md "Variable amounts"): the merchant sets cycle 1 and cycle 2 to different
 * amounts, sets none for cycle 3, which is skipped; each paid cycle is booked on its own amount
 * with the fee on it, and an amount set after the cobr exists is refused (409).
 */
import assert from 'node:assert/strict';
import { cycleDate } from '../../src/domain/recurrence';
import { eventually, readyMerchant } from '../support/charges';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { sleepTo as sleepToDay, subscriptionsStack, type SubscriptionsStack } from '../support/subscriptions';

const DAY_MS = 86_400_000;

interface Sub {
  id: string;
  status: string;
  cycles?: Array<{ number: number; amount: number; status: string; chargeId: string | null }>;
}

describe('subscription workflow: variable amounts set by the merchant per cycle', function () {
  this.timeout(300_000);
  let s: SubscriptionsStack;
  before(async () => {
    s = await subscriptionsStack('subscription_variable');
  });

  let idle: () => Promise<void> = () => Promise.resolve();
  const sleepTo = (date: string, days: number) => sleepToDay(s, date, days, { idle: () => idle() });

  it('two cycles of different amounts booked with the fee on each, a third with none skipped', async () => {
    const { api, simulator, db } = s;
    const m = await readyMerchant(api, { feeBps: 100 });
    const firstDate = new Date((await s.env.currentTimeMs()) + 5 * DAY_MS).toISOString().slice(0, 10);
    const created = await api.request<{ subscription: Sub }>('POST', '/v1/subscriptions', {
      token: m.token,
      body: {
        payer: { name: 'Ana Pagadora', document: '52998224725' },
        periodicity: 'MONTHLY',
        maxAmount: 20_000,
        firstDate,
        description: 'Conta de luz',
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.subscription.id;
    const setAmount = (n: number, amount: number) =>
      api.request<{ subscription: Sub; message?: string }>('POST', `/v1/subscriptions/${id}/cycles/${n}/amount`, {
        token: m.token,
        body: { amount },
      });
    assert.equal((await setAmount(1, 3_000)).status, 200);
    assert.equal((await setAmount(2, 7_550)).status, 200);

    const { id_rec: idRec } = (await db.knex('subscriptions').where({ id }).first('id_rec')) as { id_rec: string };
    simulator.control.recurrences.approveRec(idRec);
    const get = async () =>
      (await api.request<{ subscription: Sub }>('GET', `/v1/subscriptions/${id}`, { token: m.token })).body
        .subscription;
    await eventually(async () => ((await get()).status === 'ACTIVE' ? true : undefined), 'approval', 60_000);
    const handle = s.env.client.workflow.getHandle(`subscription-${id}`);
    idle = async () => {
      await eventually(
        async () => ((await handle.describe()).raw.pendingActivities?.length ? undefined : true),
        'idle',
      );
    };

    await sleepTo(cycleDate(firstDate, 'MONTHLY', 1), 1);
    const late = await setAmount(1, 5_000);
    assert.equal(late.status, 409, 'cycle 1 has its cobr');
    assert.match(late.body.message ?? '', /cycle 1 is PAID/i);
    await sleepTo(cycleDate(firstDate, 'MONTHLY', 3), 1);
    assert.equal((await setAmount(3, 1_000)).status, 409, 'cycle 3 was skipped');
    assert.equal((await setAmount(5, 4_000)).status, 200, 'cycle 5 set ahead: SCHEDULED until the cancel');

    const canceled = await api.request('POST', `/v1/subscriptions/${id}/cancel`, { token: m.token });
    assert.equal(canceled.status, 200);
    assert.equal(((await handle.result()) as { status: string }).status, 'CANCELED');

    const cycles = (await get()).cycles ?? [];
    assert.deepEqual(
      cycles.filter((c) => c.number <= 3).map((c) => [c.number, c.amount, c.status, c.chargeId !== null]),
      [
        [1, 3_000, 'PAID', true],
        [2, 7_550, 'PAID', true],
        [3, 0, 'SKIPPED', false],
      ],
    );
    assert.deepEqual(
      cycles.filter((c) => c.status === 'SCHEDULED' || c.status === 'PENDING'),
      [],
      'no cycle is left open by the cancel',
    );
    const fifth = cycles.find((c) => c.number === 5);
    assert.deepEqual([fifth?.amount, fifth?.status, fifth?.chargeId], [4_000, 'CANCELED', null]);
    const charges = (await db
      .knex('charges')
      .where({ subscription_id: id })
      .orderBy('subscription_cycle')
      .select('subscription_cycle', 'status', 'amount', 'fee_amount')) as Array<Record<string, unknown>>;
    assert.deepEqual(
      charges.map((c) => [c.subscription_cycle, c.status, Number(c.amount), Number(c.fee_amount)]),
      [
        [1, 'PAID', 3_000, 30],
        [2, 'PAID', 7_550, 76],
      ],
      'a RECURRING charge per paid cycle, the 1 % fee on its own amount; none for the skipped cycle',
    );
    const paidEvents = (await db
      .knex('events')
      .where({ merchant_id: m.merchantId, type: 'subscription.charge.paid' })
      .select('data')) as Array<{ data: { cycle: number; amount: number } }>;
    assert.deepEqual(
      paidEvents.map((e) => [e.data.cycle, e.data.amount]).sort((x, y) => Number(x[0]) - Number(y[0])),
      [
        [1, 3_000],
        [2, 7_550],
      ],
    );
    await assertLedgerInvariant(db.knex);
  });
});
