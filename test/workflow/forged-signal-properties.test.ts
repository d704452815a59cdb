/**
 * Forged signals interleaved with the acquirer's real, signed callbacks (fast-check;
 * docs/architecture.md "Workflows carry intent; activities check facts"): for one merchant with two
 * charges, a random sequence of real payments (the simulator pays the cob and calls back, signed),
 * forged `paid` signals (invented end-to-end ids, another charge's real one, wrong amounts),
 * merchant refunds (their devoluções settled by the simulator, signed) and forged `refundSettled`
 * outcomes, withdrawals, the acquirer completing or rejecting their transfers (signed callbacks),
 * and forged `transfer` signals of any outcome — sent straight to Temporal, signal-with-start as
 * anyone who can reach it could. Once every run has ended: our books follow the acquirer (a charge
 * is paid exactly when its cob was paid, with that payment; a refund and a withdrawal end exactly
 * as the acquirer says), never more out than in, nothing paid twice, and the ledger invariant holds.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { chargeWorkflowId, withdrawalWorkflowId } from '../../src/temporal/workflow-ids';
import type { MerchantFixture } from '../support/api';
import { eventually } from '../support/charges';
import { acquirerRefundId } from '../../src/acquirer/wire';
import {
  assertBooksReconcile,
  DEST,
  withdrawalsStack,
  type WithdrawBody,
  type WithdrawalsStack,
} from '../support/withdrawals';

type Step =
  | { op: 'pay'; charge: number }
  | { op: 'forgePaid'; charge: number; e2e: 'invented' | 'otherCharges'; amountDelta: number }
  | { op: 'withdraw'; amount: number }
  | { op: 'complete' | 'reject'; w: number }
  | { op: 'forgeTransfer'; w: number; status: 'COMPLETED' | 'REJECTED' | 'RETURNED' }
  | { op: 'refund'; charge: number; amount: number }
  | { op: 'settleRefund'; charge: number; outcome: 'DEVOLVIDO' | 'NAO_REALIZADO' }
  | { op: 'forgeRefundSettled'; charge: number; outcome: 'CONFIRMED' | 'FAILED' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('pay' as const), charge: fc.nat(1) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('forgePaid' as const),
      charge: fc.nat(1),
      e2e: fc.constantFrom('invented' as const, 'otherCharges' as const),
      amountDelta: fc.constantFrom(0, 0, 1, -1, 5_000),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('withdraw' as const), amount: fc.integer({ min: 100, max: 6_000 }) }),
  },
  fc.record({ op: fc.constant('complete' as const), w: fc.nat(3) }),
  fc.record({ op: fc.constant('reject' as const), w: fc.nat(3) }),
  fc.record({ op: fc.constant('refund' as const), charge: fc.nat(1), amount: fc.integer({ min: 1, max: 3_000 }) }),
  fc.record({
    op: fc.constant('settleRefund' as const),
    charge: fc.nat(1),
    outcome: fc.constantFrom('DEVOLVIDO' as const, 'NAO_REALIZADO' as const),
  }),
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('forgeRefundSettled' as const),
      charge: fc.nat(1),
      outcome: fc.constantFrom('CONFIRMED' as const, 'FAILED' as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('forgeTransfer' as const),
      w: fc.nat(3),
      status: fc.constantFrom('COMPLETED' as const, 'REJECTED' as const, 'RETURNED' as const),
    }),
  },
);

const AMOUNT = 5_000;
let e2eSeq = 0;
const inventedE2e = (): string => `E99999999${Date.now()}${++e2eSeq}`.padEnd(32, '0').slice(0, 32);

describe('forged signals among real callbacks (fast-check)', function () {
  this.timeout(600_000);
  let s: WithdrawalsStack;

  before(async () => {
    s = await withdrawalsStack();
    // Devoluções settle only when a step (or the end of a run) says so.
    s.simulator.control.setAutoSettleRefunds(false);
  });
  after(() => s.simulator.control.setAutoSettleRefunds(true));

  /** The charge's refund still travelling at the acquirer, if any. */
  const travelling = async (chargeId: string): Promise<string | undefined> => {
    const rows = (await s.knex('charge_refunds').where({ charge_id: chargeId }).select('id')) as Array<{ id: string }>;
    return rows
      .map((r) => r.id)
      .find((id) => s.simulator.control.getRefund(acquirerRefundId(id))?.status === 'EM_PROCESSAMENTO');
  };

  interface Run {
    m: MerchantFixture;
    charges: Array<{ id: string; txid: string }>;
    withdrawals: string[];
  }

  async function newRun(): Promise<Run> {
    const m = await s.api.createMerchant();
    await s.api.makeReady(m.merchantId);
    // Paid money is available at once, so withdrawals can spend it.
    await s.knex('merchants').where({ id: m.merchantId }).update({ settlement_delay_seconds: 0 });
    const charges: Run['charges'] = [];
    for (let i = 0; i < 2; i++) {
      const res = await s.api.request<{ charge: { id: string; txid: string } }>('POST', '/v1/charges', {
        token: m.token,
        body: { amount: AMOUNT, description: 'Pedido' },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      charges.push(res.body.charge);
    }
    return { m, charges, withdrawals: [] };
  }

  const paymentAt = (txid: string) => s.simulator.control.getCob(txid)?.payments[0];

  async function transferOf(withdrawalId: string): Promise<string | undefined> {
    const row = (await s.knex('withdrawals').where({ id: withdrawalId }).first('transfer_id')) as
      { transfer_id: string | null } | undefined;
    return row?.transfer_id ?? undefined;
  }

  async function apply(step: Step, run: Run): Promise<void> {
    switch (step.op) {
      case 'pay': {
        const c = run.charges[step.charge] as Run['charges'][number];
        if (paymentAt(c.txid)) return;
        await s.simulator.control.payCob(c.txid);
        // Its signed callback is applied before the next step (a refund needs a paid charge).
        await eventually(async () => {
          const row = (await s.knex('charges').where({ id: c.id }).first('status')) as { status: string };
          return row.status === 'PAID' ? true : undefined;
        }, 'the real payment applied');
        return;
      }
      case 'forgePaid': {
        const c = run.charges[step.charge] as Run['charges'][number];
        const other = run.charges[1 - step.charge] as Run['charges'][number];
        const e2e = step.e2e === 'otherCharges' ? (paymentAt(other.txid)?.e2eId ?? inventedE2e()) : inventedE2e();
        await s.client.workflow.signalWithStart('chargeWorkflow', {
          workflowId: chargeWorkflowId(c.id),
          taskQueue: s.taskQueue,
          args: [{ chargeId: c.id }],
          signal: 'paid',
          signalArgs: [
            {
              endToEndId: e2e,
              txid: c.txid,
              amount: AMOUNT + step.amountDelta,
              paidAt: new Date().toISOString(),
              payer: { name: 'Quem Forjou', document: '12345678909' },
            },
          ],
        });
        return;
      }
      case 'refund': {
        // A merchant refund: its devolução travels until a step (or the end) settles it.
        const c = run.charges[step.charge] as Run['charges'][number];
        const res = await s.api.request('POST', `/v1/charges/${c.id}/refund`, {
          token: run.m.token,
          body: { amount: step.amount },
        });
        assert.ok(res.status < 300 || res.status === 400, JSON.stringify(res.body));
        if (res.status < 300) await eventually(() => travelling(c.id), 'the devolução asked at the acquirer');
        return;
      }
      case 'settleRefund': {
        const id = await travelling((run.charges[step.charge] as Run['charges'][number]).id);
        if (id) s.simulator.control.settleRefund(acquirerRefundId(id), step.outcome, 'conta encerrada');
        return;
      }
      case 'forgeRefundSettled': {
        const c = run.charges[step.charge] as Run['charges'][number];
        const open = (await s.knex('charge_refunds').where({ charge_id: c.id, status: 'REQUESTED' }).first('id')) as
          { id: string } | undefined;
        if (!open) return;
        await s.client.workflow.signalWithStart('chargeWorkflow', {
          workflowId: chargeWorkflowId(c.id),
          taskQueue: s.taskQueue,
          args: [{ chargeId: c.id }],
          signal: 'refundSettled',
          signalArgs: [{ refundId: open.id, outcome: step.outcome, reason: 'forjado' }],
        });
        return;
      }
      case 'withdraw': {
        const res = await s.api.request<WithdrawBody>('POST', '/v1/merchants/me/withdrawals', {
          token: run.m.token,
          body: { amount: step.amount, ...DEST },
        });
        assert.ok(res.status === 201 || res.status === 400, JSON.stringify(res.body));
        if (res.status === 201) run.withdrawals.push(res.body.withdraw.id);
        return;
      }
    }
    const id = run.withdrawals[step.w % Math.max(run.withdrawals.length, 1)];
    if (!id) return;
    const transferId = await eventually(() => transferOf(id), 'the transfer to be sent');
    if (step.op === 'forgeTransfer') {
      await s.client.workflow.signalWithStart('withdrawalWorkflow', {
        workflowId: withdrawalWorkflowId(id),
        taskQueue: s.taskQueue,
        args: [{ withdrawalId: id }],
        signal: 'transfer',
        signalArgs: [{ status: step.status, transferId, reason: 'forjado' }],
      });
      return;
    }
    if (s.simulator.control.getTransfer(transferId)?.status !== 'PROCESSING') return;
    if (step.op === 'complete') s.simulator.control.completeTransfer(transferId);
    else s.simulator.control.failTransfer(transferId, 'conta inexistente');
  }

  /** Every transfer the acquirer still holds is completed, and every run is waited for to its end. */
  async function finish(run: Run): Promise<void> {
    for (const id of run.withdrawals) {
      const transferId = await eventually(() => transferOf(id), 'the transfer to be sent');
      if (s.simulator.control.getTransfer(transferId)?.status === 'PROCESSING')
        s.simulator.control.completeTransfer(transferId);
    }
    const ids = run.charges.map((c) => c.id);
    await eventually(
      async () =>
        (await s
          .knex('charge_refunds')
          .whereIn('charge_id', ids)
          .where({ status: 'REQUESTED' })
          .whereNull('rtr_id')
          .first())
          ? undefined
          : true,
      'every refund asked at the acquirer',
    );
    for (const c of run.charges)
      for (let id = await travelling(c.id); id; id = await travelling(c.id))
        s.simulator.control.settleRefund(acquirerRefundId(id), 'DEVOLVIDO');
    await s.simulator.control.callbacks.idle();
    // result() lets time skip (polls, expiry); a signal sent before is taken before a run ends.
    for (const id of run.withdrawals) await s.client.workflow.getHandle(withdrawalWorkflowId(id)).result();
    for (const c of run.charges) await s.client.workflow.getHandle(chargeWorkflowId(c.id)).result();
  }

  async function assertBooksFollowTheAcquirer(run: Run): Promise<void> {
    let credited = 0;
    for (const c of run.charges) {
      const row = (await s.knex('charges').where({ id: c.id }).first()) as {
        status: string;
        e2e_id: string | null;
        amount: number | string;
        fee_amount: number | string | null;
      };
      const paid = paymentAt(c.txid);
      assert.equal(row.e2e_id, paid?.e2eId ?? null, `charge ${c.id}: credited only the acquirer's payment`);
      assert.equal(
        row.status === 'PAID' || row.status === 'REFUNDED',
        paid !== undefined,
        `charge ${c.id} is ${row.status}`,
      );
      if (paid) credited += Number(row.amount) - Number(row.fee_amount ?? 0);
    }
    const refunds = (await s
      .knex('charge_refunds')
      .whereIn(
        'charge_id',
        run.charges.map((c) => c.id),
      )
      .select('id', 'kind', 'status', 'amount')) as Array<{
      id: string;
      kind: string;
      status: string;
      amount: number | string;
    }>;
    assert.deepEqual(
      refunds.filter((r) => r.kind !== 'MERCHANT'),
      [],
      'no forged payment taken as one to return',
    );
    let refunded = 0;
    for (const r of refunds) {
      const atAcquirer = s.simulator.control.getRefund(acquirerRefundId(r.id))?.status;
      const expected =
        atAcquirer === 'DEVOLVIDO' ? 'CONFIRMED' : atAcquirer === 'NAO_REALIZADO' ? 'FAILED' : 'REQUESTED';
      assert.equal(r.status, expected, `refund ${r.id}: the acquirer says ${atAcquirer}`);
      if (r.status === 'CONFIRMED') refunded += Number(r.amount);
    }
    let out = 0;
    for (const id of run.withdrawals) {
      const w = (await s.knex('withdrawals').where({ id }).first()) as { status: string; amount: number | string };
      const transferId = await transferOf(id);
      const atAcquirer = transferId ? s.simulator.control.getTransfer(transferId)?.status : 'REJECTED';
      const expected = atAcquirer === 'COMPLETED' ? 'COMPLETED' : 'FAILED';
      assert.equal(w.status, expected, `withdrawal ${id}: the acquirer says ${atAcquirer}`);
      if (w.status === 'COMPLETED') out += Number(w.amount);
    }
    assert.ok(out + refunded <= credited, `${out} withdrawn and ${refunded} refunded of ${credited} in`);
    const accounts = (await s.knex('ledger_accounts').where({ merchant_id: run.m.merchantId })) as Array<{
      kind: string;
      balance: number | string;
    }>;
    const balance = (kind: string) => Number(accounts.find((a) => a.kind === kind)?.balance ?? 0);
    assert.equal(balance('available'), credited - out - refunded, 'available is what came in less what went out');
    assert.equal(balance('in_transit'), 0);
    for (const a of accounts)
      if (a.kind !== 'acquirer' && a.kind !== 'adjustments') assert.ok(Number(a.balance) >= 0, `${a.kind} < 0`);
    await assertBooksReconcile(s.knex, [run.m.merchantId]);
  }

  it('never more out than in, nothing paid twice, the books follow the acquirer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 4, maxLength: 12 }), async (steps) => {
        const run = await newRun();
        for (const step of steps) await apply(step, run);
        await finish(run);
        await assertBooksFollowTheAcquirer(run);
      }),
      {
        numRuns: Number(process.env.FORGED_SIGNAL_PROPERTY_RUNS ?? 10),
        // The sketches of the issue, always run: a forged outcome of each kind where money travels.
        examples: [
          [
            [
              { op: 'pay', charge: 0 },
              { op: 'refund', charge: 0, amount: 1_000 },
              { op: 'forgeRefundSettled', charge: 0, outcome: 'FAILED' },
              { op: 'withdraw', amount: 2_000 },
              { op: 'forgeTransfer', w: 0, status: 'REJECTED' },
              { op: 'forgePaid', charge: 1, e2e: 'otherCharges', amountDelta: 0 },
            ],
          ],
        ],
      },
    );
  });
});
