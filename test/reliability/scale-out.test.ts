/**
 * Scale-out: two API processes and two worker processes (`src/cli/api.ts`, `src/cli/worker.ts`)
 * against one PostgreSQL (the run's) and one Temporal server (the project's, real time). Under a
 * bounded load — every charge and withdrawal request sent to both APIs at once with one
 * idempotency key, payments whose callbacks reach both APIs (and arrive twice) — every charge,
 * payment, withdrawal, transfer and webhook delivery happens exactly once, and a per-credential
 * rate limit holds across the two processes (docs/api.md "Rate limits"): adding processes needs no code.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { paymentCredits, postingsTo } from '../support/ledger-postings';
import { isolatedTestDb, type TestDb } from '../support/db';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { startStack, waitUntil, type ApiProc, type Stack } from '../../tools/harness/src/stack';
import {
  call,
  readyMerchant,
  registerWebhook,
  withdrawalBody,
  type ReadyMerchant,
} from '../../tools/harness/src/client';
import { startCountingReceiver, type CountingReceiver } from '../../tools/harness/src/receiver';
import { assertErrorBody } from '../support/errors';

const MERCHANTS = 3;
const CHARGES_PER_MERCHANT = 6;
const WITHDRAWALS_PER_MERCHANT = 4;
/** Per credential: BURST requests per window of BURST / RPS seconds (60 s here). */
const BURST = 60;

describe('reliability: scale-out (2 APIs + 2 workers, one PostgreSQL, one Temporal)', function () {
  this.timeout(400_000);
  let stack: Stack;
  let apis: ApiProc[];
  let receiver: CountingReceiver;

  // A database of its own: the stack's reconcilers walk every row, and earlier suites leave
  // deliveries and workflows pending on purpose (test/support/db.ts isolatedTestDb).
  let db: TestDb;

  before(async () => {
    db = await isolatedTestDb('scale_out');
    const { url } = db;
    stack = await startStack({
      databaseUrl: url,
      env: { RATE_LIMIT_BURST: String(BURST), RATE_LIMIT_RPS: '1' },
      simulator: { transferDelayMs: 200 },
    });
    receiver = await startCountingReceiver();
    const [a, b] = await Promise.all([stack.startApi(), stack.startApi()]);
    apis = [a, b];
    await Promise.all([stack.startWorker(), stack.startWorker()]);
  });

  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('does every charge, payment, withdrawal and delivery exactly once', async () => {
    const { knex } = db;
    const [a, b] = apis as [ApiProc, ApiProc];
    const merchants: ReadyMerchant[] = [];
    for (let i = 0; i < MERCHANTS; i++) {
      const m = await readyMerchant((i % 2 === 0 ? a : b).url, { fund: 50_000 });
      const hook = await registerWebhook((i % 2 === 0 ? b : a).url, m.apiKey, receiver.url(`/m${i}`), []);
      receiver.expect(`/m${i}`, hook.secret);
      merchants.push(m);
    }
    // Every callback arrives twice; payments alternate between the two APIs.
    stack.simulator.control.setFaults({ duplicateCallbacks: true });

    const twice = async <T>(
      path: string,
      token: string,
      body: unknown,
    ): Promise<Array<{ status: number; body: T }>> => {
      const key = crypto.randomUUID();
      return Promise.all(
        [a, b].map((api) => call<T>(api.url, 'POST', path, { token, body, headers: { 'x-idempotency-key': key } })),
      );
    };
    const chargeIds = new Map<string, string>(); // charge id → merchant id
    await Promise.all(
      merchants.map(async (m) => {
        for (let i = 0; i < CHARGES_PER_MERCHANT; i++) {
          const answers = await twice<{ charge: { id: string } }>('/v1/charges', m.apiKey, {
            amount: 1_000 + i,
            description: `scale-out ${i}`,
          });
          const statuses = answers.map((x) => x.status).sort();
          assert.ok(
            statuses.includes(201) && statuses.every((s) => s === 201 || s === 200 || s === 409),
            `charge answers ${statuses}`,
          );
          const ids = new Set(answers.filter((x) => x.status < 300).map((x) => x.body.charge.id));
          assert.equal(ids.size, 1, 'one charge per idempotency key');
          chargeIds.set([...ids][0] as string, m.merchantId);
        }
      }),
    );
    let n = 0;
    for (const id of chargeIds.keys()) {
      const row: { txid: string } = await knex('charges').where({ id }).first('txid');
      stack.simulator.control.setCallbackBaseUrl((n++ % 2 === 0 ? a : b).url);
      await stack.simulator.control.payCob(row.txid);
    }
    const withdrawalIds = new Map<string, string>();
    await Promise.all(
      merchants.map(async (m) => {
        for (let i = 0; i < WITHDRAWALS_PER_MERCHANT; i++) {
          const answers = await twice<{ withdraw: { id: string } }>(
            '/v1/merchants/me/withdrawals',
            m.apiKey,
            withdrawalBody(1_000),
          );
          const ids = new Set(answers.filter((x) => x.status < 300).map((x) => x.body.withdraw.id));
          assert.equal(ids.size, 1, `one withdrawal per idempotency key (${answers.map((x) => x.status)})`);
          withdrawalIds.set([...ids][0] as string, m.merchantId);
        }
      }),
    );

    const merchantIds = merchants.map((m) => m.merchantId);
    await waitUntil(
      async () =>
        (
          await knex('charges')
            .whereIn('id', [...chargeIds.keys()])
            .where({ status: 'PAID' })
        ).length === chargeIds.size,
      120_000,
      'every charge PAID',
      250,
    );
    await waitUntil(
      async () =>
        (
          await knex('withdrawals')
            .whereIn('id', [...withdrawalIds.keys()])
            .where({ status: 'COMPLETED' })
        ).length === withdrawalIds.size,
      120_000,
      'every withdrawal COMPLETED',
      250,
    );
    const expectedDeliveries = chargeIds.size + withdrawalIds.size;
    await waitUntil(
      async () =>
        (await knex('webhook_deliveries').whereIn('merchant_id', merchantIds).where({ status: 'SUCCEEDED' })).length ===
        expectedDeliveries,
      120_000,
      'every delivery SUCCEEDED',
      250,
    );

    // Exactly once, everywhere.
    assert.equal(
      (await knex('charges').whereIn('merchant_id', merchantIds)).length,
      MERCHANTS * CHARGES_PER_MERCHANT,
      'charges',
    );
    assert.equal(
      (await knex('withdrawals').whereIn('merchant_id', merchantIds)).length,
      MERCHANTS * WITHDRAWALS_PER_MERCHANT,
      'withdrawals',
    );
    // Counted by what reached the accounts, not by reference (unique in the database, so a second
    // credit under another reference would not show): each payment leaves the acquirer account once
    // with its amount, and its net enters the merchant's pending account once.
    for (const m of merchants) {
      const amounts = (await knex('charges').where({ merchant_id: m.merchantId }).pluck('amount'))
        .map(Number)
        .sort((x, y) => x - y);
      const gross = (await postingsTo(knex, m.merchantId, 'acquirer', 'out')).map((x) => -x).sort((x, y) => x - y);
      assert.deepEqual(gross, amounts, `one payment posting per charge of ${m.merchantId}`);
      assert.equal(
        (await paymentCredits(knex, m.merchantId)).length,
        amounts.length,
        `one pending credit per charge of ${m.merchantId}`,
      );
    }
    const transfers = stack.simulator.control.calls.filter((c) => c.route === 'transfer' && c.status === 201);
    assert.equal(transfers.length, withdrawalIds.size, 'one transfer per withdrawal at the acquirer');
    assert.equal(
      (await knex('webhook_deliveries').whereIn('merchant_id', merchantIds)).length,
      expectedDeliveries,
      'one delivery per event',
    );
    const received = merchants.flatMap((_, i) => receiver.received(`/m${i}`));
    assert.ok(received.every((d) => d.signatureValid));
    const byEntity = new Map<string, Set<string>>();
    for (const d of received) {
      const entity = `${d.event}:${String(d.data.chargeId ?? d.data.withdrawId)}`;
      byEntity.set(entity, (byEntity.get(entity) ?? new Set()).add(d.deliveryId));
    }
    assert.equal(byEntity.size, expectedDeliveries, 'every event reached its receiver');
    for (const [entity, set] of byEntity) assert.equal(set.size, 1, `${entity}: one delivery id`);
    const successes = merchants.flatMap((_, i) => [...receiver.successesByDelivery(`/m${i}`).values()]);
    assert.equal(successes.length, expectedDeliveries);
    assert.ok(
      successes.every((x) => x === 1),
      'each delivery accepted once',
    );

    const report = await checkLedgerInvariant(knex, { merchantIds });
    assert.ok(report.ok, JSON.stringify(report.violations));
  });

  it('holds one per-credential rate limit across both API processes', async () => {
    const [a, b] = apis as [ApiProc, ApiProc];
    const m = await readyMerchant(a.url);
    // A fresh API key: BURST requests per 60 s window, whichever process answers.
    const statuses = await Promise.all(
      Array.from({ length: BURST * 2 }, (_, i) =>
        call((i % 2 === 0 ? a : b).url, 'GET', '/v1/merchants/me/balance', { token: m.apiKey }).then((r) => r.status),
      ),
    );
    const ok = statuses.filter((s) => s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    assert.equal(ok + limited, BURST * 2, `only 200 and 429: ${statuses.join(',')}`);
    assert.equal(ok, BURST, 'exactly the burst is served across the two processes');
    const again = await call(b.url, 'GET', '/v1/merchants/me/balance', { token: m.apiKey });
    assert.equal(again.status, 429);
    assert.ok(Number(again.headers.get('retry-after')) > 0);
    assertErrorBody(again.body);
  });
});
