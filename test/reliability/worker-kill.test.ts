/**
 * SIGKILL of the worker process mid-withdrawal and mid-webhook retry, then a new worker: every
 * withdrawal completes with exactly one transfer at the acquirer (counted at the simulator), every
 * `withdraw.completed` event reaches a real receiver that verifies its signature and is accepted
 * there exactly once (one delivery id per withdrawal, one 2xx per delivery), and the books
 * reconcile. Real child processes: `src/cli/api.ts`, `src/cli/worker.ts`, the project's Temporal
 * server in real time; the run's PostgreSQL.
 */
import assert from 'node:assert/strict';
import { isolatedTestDb, type TestDb } from '../support/db';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { startStack, waitUntil, type Stack, type ApiProc, type Proc } from '../../tools/harness/src/stack';
import { call, readyMerchant, registerWebhook, withdrawalBody } from '../../tools/harness/src/client';
import { startCountingReceiver, type CountingReceiver } from '../../tools/harness/src/receiver';

const WITHDRAWALS = 6;

describe('reliability: worker SIGKILLed mid-withdrawal and mid-webhook retry', function () {
  this.timeout(300_000);
  let stack: Stack;
  let api: ApiProc;
  let receiver: CountingReceiver;

  // A database of its own: the stack's reconcilers walk every row, and earlier suites leave
  // deliveries and workflows pending on purpose (test/support/db.ts isolatedTestDb).
  let db: TestDb;

  before(async () => {
    db = await isolatedTestDb('worker_kill');
    const { url } = db;
    // Transfers complete 300 ms after they are sent; a failed delivery is retried after 4 s, then 4 s.
    stack = await startStack({
      databaseUrl: url,
      env: { WEBHOOK_RETRY_DELAYS_SECONDS: '4,4' },
      simulator: { transferDelayMs: 300 },
    });
    receiver = await startCountingReceiver();
    api = await stack.startApi();
  });

  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('completes every withdrawal and delivers every webhook exactly once across two kills', async () => {
    const { knex } = db;
    const m = await readyMerchant(api.url, { fund: 100_000 });
    const hook = await registerWebhook(api.url, m.apiKey, receiver.url('/kill'), ['withdraw.completed']);
    receiver.expect('/kill', hook.secret, { failFirstAttempt: true });

    const worker1 = await stack.startWorker();
    // Slow acquirer: transfers are in flight (or not yet sent) when the worker dies.
    stack.simulator.control.setFaults({ latencyMs: 1_500 });
    const created = await Promise.all(
      Array.from({ length: WITHDRAWALS }, () =>
        call<{ withdraw: { id: string } }>(api.url, 'POST', '/v1/merchants/me/withdrawals', {
          token: m.apiKey,
          body: withdrawalBody(1_000),
        }),
      ),
    );
    for (const r of created) assert.equal(r.status, 201, r.text);
    const ids = created.map((r) => r.body.withdraw.id);
    const transferCalls = (): number => stack.simulator.control.calls.filter((c) => c.route === 'transfer').length;
    await waitUntil(() => transferCalls() >= 1, 60_000, 'the first transfer at the acquirer');
    await worker1.kill();
    const completedAtKill = await knex('withdrawals')
      .whereIn('id', ids)
      .where({ status: 'COMPLETED' })
      .count<{ count: string }[]>('* as count');
    assert.ok(Number(completedAtKill[0]?.count) < WITHDRAWALS, 'the kill came mid-withdrawal');
    stack.simulator.control.setFaults({});

    const worker2 = await stack.startWorker();
    await waitUntil(
      async () => (await knex('withdrawals').whereIn('id', ids).where({ status: 'COMPLETED' })).length === WITHDRAWALS,
      120_000,
      'every withdrawal COMPLETED after the restart',
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${worker2.output.join('')}`);
    });

    // Every first attempt is refused by the receiver and logged; kill the worker while the
    // deliveries wait for their retry.
    const deliveryIds = async (): Promise<string[]> =>
      (await knex('webhook_deliveries').where({ webhook_id: hook.id }).select('id')).map((r: { id: string }) => r.id);
    await waitUntil(async () => (await deliveryIds()).length === WITHDRAWALS, 60_000, 'one delivery per withdrawal');
    await waitUntil(
      async () =>
        Number(
          (
            await knex('webhook_delivery_logs')
              .where({ webhook_id: hook.id, attempt: 1 })
              .countDistinct<{ n: string }[]>('delivery_id as n')
          )[0]?.n,
        ) === WITHDRAWALS,
      60_000,
      'the first (refused) attempt of every delivery logged',
      50,
    );
    await worker2.kill();
    const succeededAtKill = await knex('webhook_deliveries').where({ webhook_id: hook.id, status: 'SUCCEEDED' });
    assert.ok(succeededAtKill.length < WITHDRAWALS, 'the kill came mid-retry');

    let worker3: Proc | undefined;
    try {
      worker3 = await stack.startWorker();
      await waitUntil(
        async () =>
          (await knex('webhook_deliveries').where({ webhook_id: hook.id, status: 'SUCCEEDED' })).length === WITHDRAWALS,
        120_000,
        'every delivery SUCCEEDED after the second restart',
        250,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${worker3?.output.join('') ?? ''}`, { cause: err });
    }

    // Exactly one transfer per withdrawal at the acquirer.
    const created201 = stack.simulator.control.calls.filter((c) => c.route === 'transfer' && c.status === 201);
    assert.equal(created201.length, WITHDRAWALS, 'transfers created at the acquirer');
    const rows = await knex('withdrawals').whereIn('id', ids).select('id', 'status', 'transfer_id');
    assert.equal(new Set(rows.map((r: { transfer_id: string }) => r.transfer_id)).size, WITHDRAWALS);
    for (const r of rows as Array<{ transfer_id: string }>) {
      assert.equal(stack.simulator.control.getTransfer(r.transfer_id)?.status, 'COMPLETED');
    }

    // Exactly one delivery per withdrawal, accepted exactly once, every request correctly signed.
    const received = receiver.received('/kill');
    assert.ok(
      received.every((d) => d.signatureValid),
      'every delivery is signed with the webhook secret',
    );
    const byWithdrawal = new Map<string, Set<string>>();
    for (const d of received) {
      const wid = String(d.data.withdrawId);
      byWithdrawal.set(wid, (byWithdrawal.get(wid) ?? new Set()).add(d.deliveryId));
    }
    assert.deepEqual([...byWithdrawal.keys()].sort(), [...ids].sort());
    for (const set of byWithdrawal.values()) assert.equal(set.size, 1, 'one delivery id per event');
    const successes = receiver.successesByDelivery('/kill');
    assert.equal(successes.size, WITHDRAWALS);
    for (const n of successes.values()) assert.equal(n, 1, 'each delivery accepted exactly once');

    const balance = await call<{ balance: { available: number } }>(api.url, 'GET', '/v1/merchants/me/balance', {
      token: m.apiKey,
    });
    assert.equal(balance.body.balance.available, 100_000 - WITHDRAWALS * 1_000);
    const report = await checkLedgerInvariant(knex, { merchantIds: [m.merchantId] });
    assert.ok(report.ok, JSON.stringify(report.violations));
  });
});
