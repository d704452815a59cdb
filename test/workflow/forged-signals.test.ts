/**
 * Workflows carry intent; activities check facts (docs/architecture.md "Workflows carry intent;
 * activities check facts"): a signal sent straight to Temporal — as anyone who can reach it could,
 * with the run's own type, queue and input — moves no money. A `paid` signal with no signed callback
 * and no payment at the acquirer changes nothing and is audited and counted, whether it starts the
 * run (signal-with-start, which also ends its start delay) or reaches it running. Each case ends
 * with the ledger invariant.
 */
import assert from 'node:assert/strict';
import { chargeWorkflowId, infractionWorkflowId, withdrawalWorkflowId } from '../../src/temporal/workflow-ids';
import { paymentReceivedSignal, refundSettledSignal } from '../../workflows/charge';
import { acquirerRefundId } from '../../src/acquirer/wire';
import type { PaymentNotice } from '../../workflows/charge-types';
import { chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { counter } from '../support/metrics';
import * as ledger from '../../src/services/ledger/ledger';
import { transferSignal } from '../../workflows/withdrawal';
import { acquirerUpdateSignal } from '../../workflows/infraction';
import { medFlows, medStack, type MedStack } from '../support/med';
import {
  assertBooksReconcile,
  DEST,
  fundedMerchant,
  withdrawalsStack,
  type WithdrawBody,
  type WithdrawalsStack,
} from '../support/withdrawals';

/** A well-formed end-to-end id nobody paid. */
const inventedE2e = (n: number): string => `E00000000${Date.now()}${n}`.padEnd(32, '7').slice(0, 32);

describe('forged signals move no money', function () {
  this.timeout(120_000);

  describe('charges: `paid`', () => {
    let s: ChargesStack;
    before(async () => {
      s = await chargesStack();
    });

    const auditOf = (chargeId: string) =>
      s.api
        .knex('audit_log')
        .where({ action: 'signal.unconfirmed', target_type: 'charge', target_id: chargeId })
        .orderBy('created_at');

    it('signal-with-start and a signal to the running charge, with no inbox row and no acquirer payment, change nothing and are audited', async () => {
      const m = await readyMerchant(s.api);
      const created = await s.api.request<{ charge: { id: string; txid: string } }>('POST', '/v1/charges', {
        token: m.token,
        body: { amount: 7_777, description: 'Pedido' },
      });
      assert.equal(created.status, 201);
      const charge = created.body.charge;
      const counted = await counter('pixflow_signals_unconfirmed_total', {
        workflow: 'charge',
        signal: 'paid',
        verdict: 'no_source',
      });
      const forged = (n: number): PaymentNotice => ({
        endToEndId: inventedE2e(n),
        txid: charge.txid,
        amount: 7_777,
        paidAt: new Date().toISOString(),
        payer: { name: 'Quem Forjou', document: '12345678909' },
      });

      // As over gRPC: the charge run's own workflow type, task queue and input.
      const handle = await s.client.workflow.signalWithStart('chargeWorkflow', {
        workflowId: chargeWorkflowId(charge.id),
        taskQueue: s.taskQueue,
        args: [{ chargeId: charge.id }],
        signal: 'paid',
        signalArgs: [forged(1)],
      });
      await eventually(
        async () => ((await auditOf(charge.id)).length === 1 ? true : undefined),
        'the first audit entry',
      );
      await handle.signal(paymentReceivedSignal, forged(2));
      const entries = await eventually(async () => {
        const rows = await auditOf(charge.id);
        return rows.length === 2 ? rows : undefined;
      }, 'the second audit entry');

      assert.deepEqual(
        entries.map((e: { details: { verdict: string; signal: string; source: unknown } }) => [
          e.details.signal,
          e.details.verdict,
          e.details.source,
        ]),
        [
          ['paid', 'no_source', null],
          ['paid', 'no_source', null],
        ],
      );
      const row = await s.api.knex('charges').where({ id: charge.id }).first();
      assert.equal(row.status, 'PENDING');
      assert.equal(row.e2e_id, null);
      const postings = await s.api.knex('ledger_transactions').where({ merchant_id: m.merchantId });
      assert.deepEqual(postings, [], 'no ledger movement for the merchant');
      const refunds = await s.api.knex('charge_refunds').where({ charge_id: charge.id });
      assert.deepEqual(refunds, [], 'nothing taken as a payment to return either');
      const inbox = await s.api
        .knex('acquirer_callbacks')
        .whereIn('external_id', [forged(1).endToEndId, forged(2).endToEndId]);
      assert.deepEqual(inbox, [], 'no inbox row that would look like a callback');
      assert.equal(
        await counter('pixflow_signals_unconfirmed_total', {
          workflow: 'charge',
          signal: 'paid',
          verdict: 'no_source',
        }),
        counted + 2,
      );
      const state = await handle.query<{ chargeStatus: string }>('state');
      assert.equal(state.chargeStatus, 'PENDING');
      await assertLedgerInvariant(s.api.knex);
    });

    it('a forged refundSettled (CONFIRMED, then FAILED) for a devolução the acquirer still holds changes nothing; the real one settles it once', async () => {
      const m = await readyMerchant(s.api);
      const created = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
        token: m.token,
        body: { amount: 4_000, description: 'Pedido' },
      });
      const charge = created.body.charge;
      assert.equal(
        (await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} })).status,
        202,
      );
      await eventually(async () => {
        const r = await s.api.knex('charges').where({ id: charge.id }).first();
        return r?.status === 'PAID' ? r : undefined;
      }, 'the charge to be PAID');
      s.simulator.control.setAutoSettleRefunds(false);
      try {
        const asked = await s.api.request('POST', `/v1/charges/${charge.id}/refund`, {
          token: m.token,
          body: { amount: 1_000 },
        });
        assert.ok(asked.status < 300, JSON.stringify(asked.body));
        const refund = await eventually(async () => {
          const r = await s.api.knex('charge_refunds').where({ charge_id: charge.id, kind: 'MERCHANT' }).first();
          return r?.rtr_id ? (r as { id: string }) : undefined;
        }, 'the devolução asked at the acquirer');
        const handle = s.client.workflow.getHandle(chargeWorkflowId(charge.id));
        await handle.signal(refundSettledSignal, { refundId: refund.id, outcome: 'CONFIRMED' });
        await eventually(
          async () => ((await auditOf(charge.id)).length === 1 ? true : undefined),
          'the first audit entry',
        );
        await handle.signal(refundSettledSignal, { refundId: refund.id, outcome: 'FAILED', reason: 'forjado' });
        await eventually(
          async () => ((await auditOf(charge.id)).length === 2 ? true : undefined),
          'the second audit entry',
        );
        assert.equal((await s.api.knex('charge_refunds').where({ id: refund.id }).first()).status, 'REQUESTED');
        assert.equal((await ledger.getAccounts(s.api.knex, m.merchantId)).in_transit, 1_000, 'still in transit');

        s.simulator.control.settleRefund(acquirerRefundId(refund.id), 'DEVOLVIDO');
        await eventually(async () => {
          const r = await s.api.knex('charge_refunds').where({ id: refund.id }).first();
          return r?.status === 'CONFIRMED' ? r : undefined;
        }, 'the refund CONFIRMED by the real callback');
        const events = await s.api.knex('events').where({ reference: `charge.refunded:${refund.id}` });
        assert.equal(events.length, 1);
        assert.equal((await ledger.getAccounts(s.api.knex, m.merchantId)).in_transit, 0);
      } finally {
        s.simulator.control.setAutoSettleRefunds(true);
      }
      await assertLedgerInvariant(s.api.knex);
    });

    it('a real payment still pays once through its signed callback', async () => {
      const m = await readyMerchant(s.api);
      const created = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
        token: m.token,
        body: { amount: 5_000, description: 'Pedido' },
      });
      const charge = created.body.charge;
      const pay = await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
      assert.equal(pay.status, 202);
      await eventually(async () => {
        const r = await s.api.knex('charges').where({ id: charge.id }).first();
        return r?.status === 'PAID' ? r : undefined;
      }, 'the charge to be PAID');
      assert.deepEqual(await auditOf(charge.id), []);
      await assertLedgerInvariant(s.api.knex);
    });
  });
  describe('withdrawals: `transfer`', () => {
    let s: WithdrawalsStack;
    before(async () => {
      s = await withdrawalsStack();
    });

    const auditOf = (id: string) =>
      s
        .knex('audit_log')
        .where({ action: 'signal.unconfirmed', target_type: 'withdrawal', target_id: id })
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);

    it('a forged REJECTED, while the acquirer holds the transfer and after it completed it, restores nothing', async () => {
      const m = await fundedMerchant(s.api, 10_000);
      const res = await s.api.request<WithdrawBody>('POST', '/v1/merchants/me/withdrawals', {
        token: m.token,
        body: { amount: 500, ...DEST },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const id = res.body.withdraw.id;
      const transferId = await eventually(
        async () => ((await s.knex('withdrawals').where({ id }).first())?.transfer_id as string | null) ?? undefined,
        'the transfer to be sent',
      );
      const rejection = { status: 'REJECTED' as const, transferId, reason: 'conta inexistente' };
      const handle = s.client.workflow.getHandle(withdrawalWorkflowId(id));

      // 1. The acquirer still holds the transfer.
      await handle.signal(transferSignal, rejection);
      await eventually(async () => ((await auditOf(id)).length === 1 ? true : undefined), 'the first audit entry');
      assert.equal((await s.knex('withdrawals').where({ id }).first()).status, 'PROCESSING');
      assert.equal((await ledger.getBalance(s.knex, m.merchantId)).available, 9_500);

      // 2. The acquirer completes it (its callback held back), and the forged rejection comes again.
      s.simulator.control.setFaults({ outOfOrderCallbacks: true });
      try {
        s.simulator.control.completeTransfer(transferId);
        await handle.signal(transferSignal, rejection);
        const done = await handle.result(); // time skips to the poll, which asks the acquirer
        assert.equal(done.status, 'COMPLETED');
      } finally {
        s.simulator.control.setFaults({});
      }
      const entries = (await auditOf(id)) as Array<{ details: { verdict: string; source: { status: string } } }>;
      assert.deepEqual(entries.map((e) => [e.details.verdict, e.details.source.status]).sort(), [
        ['disagrees', 'COMPLETED'],
        ['disagrees', 'PROCESSING'],
      ]);
      assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), {
        available: 9_500,
        pending: 0,
        blocked: 0,
        total: 9_500,
      });
      assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 0);
      const failed = await s
        .knex('ledger_transactions')
        .where({ merchant_id: m.merchantId, kind: 'withdrawal_failed' });
      assert.deepEqual(failed, []);
      await assertBooksReconcile(s.knex, [m.merchantId]);
    });
  });
  describe('infractions: `acquirerUpdate`', () => {
    let s: MedStack;
    const flows = medFlows(() => s);
    before(async () => {
      s = await medStack();
    });

    it("a forged decision (REJECTED, then ACCEPTED) moves nothing; the acquirer's own decision then applies", async () => {
      const m = await flows.readyMerchant();
      const charge = await flows.paidCharge(m, { settle: true, amount: 10_000 });
      const raised = await flows.raise(m, charge.id);
      await eventually(async () => {
        const r = await flows.infractionRow(raised.id);
        return r && Number(r.blocked_amount) > 0 ? r : undefined;
      }, 'the disputed amount blocked (what the merchant has of it)');
      const before = await flows.balance(m);
      const auditOf = () =>
        s.api
          .knex('audit_log')
          .where({ action: 'signal.unconfirmed', target_type: 'infraction', target_id: raised.id });
      const handle = s.client.workflow.getHandle(infractionWorkflowId(raised.id));

      await handle.signal(acquirerUpdateSignal, { status: 'REJECTED' });
      await eventually(async () => ((await auditOf()).length === 1 ? true : undefined), 'the first audit entry');
      await handle.signal(acquirerUpdateSignal, { status: 'ACCEPTED' });
      const entries = await eventually(async () => {
        const rows = (await auditOf()) as Array<{ details: { claimed: { status: string }; verdict: string } }>;
        return rows.length === 2 ? rows : undefined;
      }, 'the second audit entry');
      assert.deepEqual(entries.map((e) => [e.details.claimed.status, e.details.verdict]).sort(), [
        ['ACCEPTED', 'disagrees'],
        ['REJECTED', 'disagrees'],
      ]);
      const row = await flows.infractionRow(raised.id);
      assert.equal(row.status, 'OPEN');
      assert.equal(row.refund_id, null, 'no devolução chosen');
      assert.deepEqual(await flows.balance(m), before, 'nothing unblocked, nothing sent');

      // The acquirer's own rejection, through its signed callback.
      const rejected = await s.api.request('POST', `/v1/sandbox/infractions/${raised.id}/reject`, { token: m.token });
      assert.equal(rejected.status, 202);
      await flows.untilInfraction(raised.id, 'REJECTED');
      await flows.untilBalance(m, { ...before, available: before.available + before.blocked, blocked: 0 }, 'unblocked');
      await assertLedgerInvariant(s.api.knex);
    });
  });
});
