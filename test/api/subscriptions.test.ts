/**
 * Subscriptions over real HTTP (docs/api.md "Subscriptions"): the 4xx of bad input, the
 * idempotent creation, a variable cycle's amount, and another merchant sees none of it.
 */
import assert from 'node:assert/strict';
import { readyMerchant } from '../support/charges';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { SIMULATOR_CLIENT, subscriptionsStack, type SubscriptionsStack } from '../support/subscriptions';
import { holdClock } from '../support/temporal';

const inDays = (n: number): string => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

describe('subscriptions API', function () {
  this.timeout(60_000);
  let s: SubscriptionsStack;
  before(async () => {
    s = await subscriptionsStack('subscriptions_api');
  });
  /**
   * A test whose subscriptions must stay as created holds the shared skipped clock: were it to run
   * free, the approval window (up to the first cycle's date) would end in an instant.
   */
  const held = (test: () => Promise<void>) => async () => {
    const clock = await holdClock(s.env);
    try {
      await test();
    } finally {
      await clock.release();
    }
  };
  /**
   * Twenty years and `n` days ahead of the later of the real clock and the run's shared skipped
   * clock, which the workflow reads and which earlier suites may have moved years ahead: a
   * subscription dated so stays PENDING_APPROVAL while a test runs.
   */
  const farDay = async (n = 0): Promise<string> => {
    const now = Math.max(Date.now(), await s.env.currentTimeMs());
    return new Date(now + (7_300 + n) * 86_400_000).toISOString().slice(0, 10);
  };
  const valid = () => ({
    payer: { name: 'Bruno Pagador', document: '52998224725' },
    periodicity: 'MONTHLY',
    amount: 1_990,
    firstDate: inDays(10),
    description: 'Streaming mensal',
  });

  it('answers 400/422 naming the field, never a 500', async () => {
    const m = await readyMerchant(s.api);
    const cases: Array<[string, Record<string, unknown>, number, string | undefined]> = [
      ['no amount', { ...valid(), amount: undefined }, 400, 'amount'],
      ['both amounts', { ...valid(), maxAmount: 5_000 }, 400, 'amount'],
      ['string amount', { ...valid(), amount: '1990' }, 400, 'amount'],
      ['bad periodicity', { ...valid(), periodicity: 'DAILY' }, 400, 'periodicity'],
      ['bad date', { ...valid(), firstDate: '2026-02-30x' }, 400, 'firstDate'],
      ['too soon', { ...valid(), firstDate: inDays(1) }, 400, 'firstDate'],
      ['end before first', { ...valid(), endDate: inDays(5) }, 400, 'endDate'],
      ['long description', { ...valid(), description: 'x'.repeat(36) }, 400, 'description'],
      ['bad retry policy', { ...valid(), retryPolicy: 'ALWAYS' }, 400, 'retryPolicy'],
      ['invalid CPF', { ...valid(), payer: { name: 'Bruno', document: '12345678900' } }, 422, 'payer.document'],
    ];
    for (const [what, body, status, param] of cases) {
      const r = await s.api.request('POST', '/v1/subscriptions', { token: m.token, body });
      assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
      assert.equal(typeof r.body.message, 'string', what);
      if (param) assert.equal((r.body as { param?: string }).param, param, what);
    }
    const unknown = await s.api.request('GET', '/v1/subscriptions?status=NOPE', { token: m.token });
    assert.equal(unknown.status, 400);
    const cancelUnknown = await s.api.request('POST', '/v1/subscriptions/sub_nope/cancel', { token: m.token });
    assert.equal(cancelUnknown.status, 404);
  });

  it(
    'replays a creation by its idempotency key; another merchant sees nothing of it',
    held(async () => {
      const a = await readyMerchant(s.api);
      const b = await readyMerchant(s.api);
      const body = { ...valid(), firstDate: await farDay() };
      const opts = { token: a.token, headers: { 'x-idempotency-key': 'sub-once' }, body };
      const first = await s.api.request<{ subscription: { id: string } }>('POST', '/v1/subscriptions', opts);
      assert.equal(first.status, 201);
      const again = await s.api.request<{ subscription: { id: string }; idempotent: boolean }>(
        'POST',
        '/v1/subscriptions',
        opts,
      );
      assert.equal(again.status, 200);
      assert.deepEqual([again.body.subscription.id, again.body.idempotent], [first.body.subscription.id, true]);
      const id = first.body.subscription.id;

      assert.equal((await s.api.request('GET', `/v1/subscriptions/${id}`, { token: b.token })).status, 404);
      assert.equal((await s.api.request('POST', `/v1/subscriptions/${id}/cancel`, { token: b.token })).status, 404);
      const listB = await s.api.request<{ total: number }>('GET', '/v1/subscriptions', { token: b.token });
      assert.equal(listB.body.total, 0);
      const listA = await s.api.request<{ total: number; subscriptions: Array<{ id: string }> }>(
        'GET',
        '/v1/subscriptions?status=PENDING_APPROVAL',
        { token: a.token },
      );
      assert.deepEqual(
        listA.body.subscriptions.map((x) => x.id),
        [id],
      );

      const canceled = await s.api.request<{ subscription: { status: string } }>(
        'POST',
        `/v1/subscriptions/${id}/cancel`,
        { token: a.token },
      );
      assert.equal(canceled.body.subscription.status, 'CANCELED');
      assert.equal((await s.api.request('POST', `/v1/subscriptions/${id}/cancel`, { token: a.token })).status, 400);
    }),
  );

  it(
    'a variable cycle takes an amount up to maxAmount until its cobr exists; bad input is a 4xx',
    held(async () => {
      const a = await readyMerchant(s.api);
      const b = await readyMerchant(s.api);
      const create = async (over: Record<string, unknown>) => {
        const r = await s.api.request<{ subscription: { id: string } }>('POST', '/v1/subscriptions', {
          token: a.token,
          body: { ...valid(), amount: undefined, maxAmount: 10_000, endDate: await farDay(62), ...over },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        return r.body.subscription.id;
      };
      // Far ahead, as below: the shared skipped clock must not reach the cycles while this runs.
      const id = await create({ firstDate: await farDay() });
      type Cycles = { subscription: { cycles: Array<{ number: number; amount: number; status: string }> } };
      const set = (sub: string, n: number | string, body: unknown, token = a.token) =>
        s.api.request<Cycles & { message: string; param?: string }>(
          'POST',
          `/v1/subscriptions/${sub}/cycles/${n}/amount`,
          { token, body },
        );
      const first = await set(id, 2, { amount: 7_500 });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal((await set(id, 3, { amount: 10_000 })).status, 200, 'maxAmount itself');
      const changed = await set(id, 2, { amount: 8_000 });
      assert.deepEqual(
        changed.body.subscription.cycles.map((c) => [c.number, c.amount, c.status]),
        [
          [2, 8_000, 'SCHEDULED'],
          [3, 10_000, 'SCHEDULED'],
        ],
      );
      const refused: Array<[string, number | string, unknown, number, RegExp]> = [
        ['over maxAmount', 2, { amount: 10_001 }, 400, /maxAmount the payer authorised \(10000\)/],
        ['zero', 2, { amount: 0 }, 400, /amount/],
        ['a string', 2, { amount: '50' }, 400, /amount/],
        ['no body', 2, undefined, 400, /./],
        ['cycle 0', 0, { amount: 100 }, 400, /number/],
        ['cycle x', 'x', { amount: 100 }, 400, /number/],
        ['after endDate', 4, { amount: 100 }, 400, /after endDate/],
      ];
      for (const [what, n, body, status, why] of refused) {
        const r = await set(id, n, body);
        assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
        assert.match(`${r.body.message} ${r.body.param ?? ''}`, why, what);
      }
      assert.equal((await set(id, 2, { amount: 100 }, b.token)).status, 404, 'another merchant');
      assert.equal((await set('sub_nope', 2, { amount: 100 })).status, 404);
      const fixed = await s.api.request<{ subscription: { id: string } }>('POST', '/v1/subscriptions', {
        token: a.token,
        body: { ...valid(), firstDate: await farDay() },
      });
      const onFixed = await set(fixed.body.subscription.id, 2, { amount: 100 });
      assert.equal(onFixed.status, 400);
      assert.match(onFixed.body.message, /fixed amount/);
      await s.api.request('POST', `/v1/subscriptions/${id}/cancel`, { token: a.token });
      const onCanceled = await set(id, 2, { amount: 100 });
      assert.equal(onCanceled.status, 400);
      assert.match(onCanceled.body.message, /CANCELED/);
    }),
  );

  it('the sandbox payer approves the rec at the acquirer; a second approval, bad input and another merchant are refused', async () => {
    const a = await readyMerchant(s.api);
    const b = await readyMerchant(s.api);
    // Twenty years ahead: the run's shared time-skipping clock, which the workflow reads, is ahead
    // of the real one by what earlier suites skipped; its approval deadline must not pass meanwhile.
    // (The approval's way on, callback → workflow → ACTIVE, is test/workflow/subscription-flow's.)
    const created = await s.api.request<{ subscription: { id: string } }>('POST', '/v1/subscriptions', {
      token: a.token,
      body: { ...valid(), firstDate: await farDay() },
    });
    assert.equal(created.status, 201);
    const id = created.body.subscription.id;
    const approve = `/v1/sandbox/subscriptions/${id}/approve`;
    assert.equal((await s.api.request('POST', approve, { token: b.token })).status, 404);
    const badTimes = await s.api.request('POST', `/v1/sandbox/subscriptions/${id}/fail-debits`, {
      token: a.token,
      body: { times: 0 },
    });
    assert.equal(badTimes.status, 400);
    assert.equal((badTimes.body as { param?: string }).param, 'times');

    const approved = await s.api.request<{ subscription: { id: string } }>('POST', approve, { token: a.token });
    assert.equal(approved.status, 202, JSON.stringify(approved.body));
    assert.equal(approved.body.subscription.id, id);
    const { id_rec: idRec } = (await s.db.knex('subscriptions').where({ id }).first('id_rec')) as { id_rec: string };
    const acquirer = new HttpAcquirer({ baseUrl: s.simulator.url, ...SIMULATOR_CLIENT, timeoutMs: 5_000 });
    assert.equal((await acquirer.getRec(idRec)).status, 'APROVADA');
    const again = await s.api.request<{ message: string }>('POST', approve, { token: a.token });
    assert.equal(again.status, 400);
    assert.match(again.body.message, /sandbox acquirer cannot do this/);
  });
});
