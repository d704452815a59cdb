/**
 * The money rules of every charge on the two billing kinds (docs/api.md "Due-date charges",
 * "Subscriptions"): a due-date charge paid late (fine and interest: more than the nominal amount) and
 * a subscription's cycle (a RECURRING charge) are booked in the statement as paid with the fee on it,
 * a cycle takes a merchant's refund, and under a MED infraction the payer gets back what was paid,
 * the fee covering the merchant's shortfall. Figures are worked out by hand here; the ledger invariant closes each case.
 */
import assert from 'node:assert/strict';
import { createStatementService } from '../../src/services/ledger/statement';
import { eventually, readyMerchant, saoPauloDay, tuitionCharge } from '../support/charges';
import type { Balance } from '../support/med';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { sleepTo, subscriptionsStack, type SubscriptionsStack } from '../support/subscriptions';
import type { MerchantFixture, TestApi } from '../support/api';

const DAY_MS = 86_400_000;

describe('billing money: statement and MED on due-date charges and subscription cycles', function () {
  this.timeout(300_000);
  let s: SubscriptionsStack;
  before(async () => {
    s = await subscriptionsStack('billing_money');
  });

  const day = saoPauloDay;

  const balance = async (api: TestApi, m: MerchantFixture): Promise<Balance> =>
    (await api.request<{ balance: Balance }>('GET', '/v1/merchants/me/balance', { token: m.token })).body.balance;

  const untilBalance = (m: MerchantFixture, want: Balance, what: string) =>
    eventually(
      async () => (JSON.stringify(await balance(s.api, m)) === JSON.stringify(want) ? true : undefined),
      `${what}: ${JSON.stringify(want)}`,
    );

  /** The charge's statement lines, as `[type, amount]` in booking order. */
  async function statementOf(m: MerchantFixture, chargeId: string): Promise<Array<[string, number]>> {
    const page = await createStatementService({ knex: s.api.knex }).page(m.merchantId, { page: 1, limit: 100 });
    return page.entries.filter((e) => e.chargeId === chargeId).map((e) => [e.type, e.amount]);
  }

  /**
   * A paid and settled charge's lines once MED returned it: the merchant's net blocked, then paid
   * out; the fee part of the devolução is the platform's, not a line of the merchant's statement.
   */
  const bookedThenMed = (paid: number, fee: number): Array<[string, number]> => [
    ['CHARGE_PAID', paid],
    ['FEE', -fee],
    ['SETTLEMENT', paid - fee],
    ['MED_BLOCK', -(paid - fee)],
    ['MED_REFUND', -(paid - fee)],
  ];

  /** Raises an infraction on the paid charge and has the sandbox accept it; answers the infraction row once REFUNDED. */
  async function medRefunded(m: MerchantFixture, chargeId: string, blockedWhileOpen: Balance) {
    const raised = await s.api.request<{ infraction: { id: string; amount: number } }>(
      'POST',
      '/v1/sandbox/infractions',
      { token: m.token, body: { chargeId, reason: 'Golpe do falso vendedor' } },
    );
    assert.equal(raised.status, 202, JSON.stringify(raised.body));
    const inf = raised.body.infraction;
    await untilBalance(m, blockedWhileOpen, 'all of it blocked');
    const accepted = await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/accept`, { token: m.token });
    assert.equal(accepted.status, 202);
    // Polled, not result(): a time-skipping wait would run the clock on through every open run's timers.
    const row = await eventually(async () => {
      const r = await s.api.knex('infractions').where({ id: inf.id }).first();
      return r?.status === 'REFUNDED' ? r : undefined;
    }, 'the infraction REFUNDED');
    return { inf, row };
  }

  const chargeRefunded = (id: string) =>
    eventually(async () => {
      const c = await s.api.knex('charges').where({ id }).first();
      return c?.status === 'REFUNDED' ? (c as { refunded_amount: string | number }) : undefined;
    }, `charge ${id} REFUNDED`);

  it('a due-date charge paid late: the statement books what was paid, MED returns all of it', async () => {
    const m = await readyMerchant(s.api, { feeBps: 100 });
    const created = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: tuitionCharge({ discount: undefined }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.charge.id;
    const pay = await s.api.request('POST', `/v1/sandbox/charges/${id}/pay`, {
      token: m.token,
      body: { paidOn: day(16) },
    });
    assert.equal(pay.status, 202, JSON.stringify(pay.body));
    // Six days late on 1000.00 − 10.00 abated: fine 2 % = 19.80, interest 1 % × 6/30 = 1.98.
    const paid = 99_000 + 1_980 + 198;
    const fee = 1_012; // 1 % of 1011.78, rounded
    await eventually(async () => {
      const row = await s.api.knex('charges').where({ id }).first('status');
      return row?.status === 'PAID' ? true : undefined;
    }, 'the charge PAID');
    // The charge run settles a day after the payment, which the sandbox dated day 16.
    await s.env.sleep(18 * DAY_MS);
    const settled = { available: paid - fee, pending: 0, blocked: 0, total: paid - fee };
    await untilBalance(m, settled, 'settled');
    assert.deepEqual(await statementOf(m, id), [
      ['CHARGE_PAID', paid],
      ['FEE', -fee],
      ['SETTLEMENT', paid - fee],
    ]);

    const { inf, row } = await medRefunded(m, id, { available: 0, pending: 0, blocked: paid - fee, total: paid - fee });
    assert.equal(inf.amount, paid, 'the infraction is of what was paid, not the nominal 1000.00');
    assert.deepEqual([Number(row.refund_amount), Number(row.fee_returned)], [paid, fee]);
    const charge = await chargeRefunded(id);
    assert.equal(Number(charge.refunded_amount), paid);
    assert.deepEqual(await statementOf(m, id), bookedThenMed(paid, fee));
    assert.deepEqual(await balance(s.api, m), { available: 0, pending: 0, blocked: 0, total: 0 });
    await assertLedgerInvariant(s.api.knex);
  });

  /** A MONTHLY subscription of 89.90 approved and its first cycle debited: the cycle's PAID charge. */
  async function paidCycle(
    m: MerchantFixture,
  ): Promise<{ subscriptionId: string; charge: { id: string; type: string } }> {
    const firstDate = new Date((await s.env.currentTimeMs()) + 5 * DAY_MS).toISOString().slice(0, 10);
    const created = await s.api.request<{ subscription: { id: string } }>('POST', '/v1/subscriptions', {
      token: m.token,
      body: {
        payer: { name: 'Ana Pagadora', document: '52998224725' },
        periodicity: 'MONTHLY',
        amount: 8_990,
        firstDate,
        description: 'Academia',
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const subscriptionId = created.body.subscription.id;
    const approve = await s.api.request('POST', `/v1/sandbox/subscriptions/${subscriptionId}/approve`, {
      token: m.token,
    });
    assert.equal(approve.status, 202, JSON.stringify(approve.body));
    // Waited as long as the subscription suites wait: on busy cores the approval's run is slow.
    const approved = await eventually(
      async () => {
        const sub = await s.api.knex('subscriptions').where({ id: subscriptionId }).first('status');
        return sub?.status === 'PENDING_APPROVAL' ? undefined : (sub?.status as string | undefined);
      },
      'approval',
      60_000,
    );
    assert.equal(approved, 'ACTIVE');
    await sleepTo(s, firstDate, 1);
    const charge = await eventually(async () => {
      const c = await s.api.knex('charges').where({ subscription_id: subscriptionId, subscription_cycle: 1 }).first();
      return c?.status === 'PAID' ? (c as { id: string; type: string }) : undefined;
    }, 'cycle 1 paid');
    return { subscriptionId, charge };
  }

  it("a subscription's paid cycle: booked in the statement with its fee, MED returns all of it", async () => {
    const m = await readyMerchant(s.api, { feeBps: 250 });
    const { subscriptionId, charge } = await paidCycle(m);
    assert.equal(charge.type, 'RECURRING');
    const fee = 225; // 2.5 % of 89.90 = 2.2475, rounded
    await untilBalance(m, { available: 8_990 - fee, pending: 0, blocked: 0, total: 8_990 - fee }, 'cycle 1 settled');
    assert.deepEqual(await statementOf(m, charge.id), [
      ['CHARGE_PAID', 8_990],
      ['FEE', -fee],
      ['SETTLEMENT', 8_990 - fee],
    ]);

    // The cycle's cobr debit is disputed like any payment (docs/api.md "Subscriptions").
    const blocked = { available: 0, pending: 0, blocked: 8_990 - fee, total: 8_990 - fee };
    const { inf, row } = await medRefunded(m, charge.id, blocked);
    assert.equal(inf.amount, 8_990, 'the infraction is of what was debited');
    assert.deepEqual([Number(row.refund_amount), Number(row.fee_returned)], [8_990, fee]);
    assert.equal(Number((await chargeRefunded(charge.id)).refunded_amount), 8_990);
    assert.deepEqual(await statementOf(m, charge.id), bookedThenMed(8_990, fee));
    assert.deepEqual(await balance(s.api, m), { available: 0, pending: 0, blocked: 0, total: 0 });

    const cancel = await s.api.request('POST', `/v1/subscriptions/${subscriptionId}/cancel`, { token: m.token });
    assert.equal(cancel.status, 200);
    await assertLedgerInvariant(s.api.knex);
  });

  it("a subscription's paid cycle refunded in part by the merchant: the devolução finds the debit", async () => {
    const m = await readyMerchant(s.api, { feeBps: 250 });
    const { subscriptionId, charge } = await paidCycle(m);
    const net = 8_990 - 225;
    await untilBalance(m, { available: net, pending: 0, blocked: 0, total: net }, 'cycle 1 settled');
    const asked = await s.api.request('POST', `/v1/charges/${charge.id}/refund`, {
      token: m.token,
      body: { amount: 3_000 },
    });
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    await eventually(async () => {
      const r = await s.api.knex('charge_refunds').where({ charge_id: charge.id }).first('status');
      return r?.status === 'CONFIRMED' ? true : undefined;
    }, 'the refund CONFIRMED');
    assert.deepEqual(await balance(s.api, m), { available: net - 3_000, pending: 0, blocked: 0, total: net - 3_000 });
    assert.deepEqual((await statementOf(m, charge.id)).at(-1), ['REFUND', -3_000]);

    const cancel = await s.api.request('POST', `/v1/subscriptions/${subscriptionId}/cancel`, { token: m.token });
    assert.equal(cancel.status, 200);
    await assertLedgerInvariant(s.api.knex);
  });
});
