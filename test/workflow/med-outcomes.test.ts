/**
 * MED outcomes booked by rule (docs/operations.md "The money of an infraction", "Operator cases"),
 * through the HTTP API, the simulator's signed callbacks and the real workflows. Each case ends with
 * the ledger invariant.
 */
import assert from 'node:assert/strict';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { acquirerRefundId } from '../../src/acquirer/wire';
import { infractionWorkflowId } from '../../src/temporal/workflow-ids';
import { eventually } from '../support/charges';
import { MED_CALLBACK_SECRET, medFlows, medStack, type MedStack } from '../support/med';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import { centsToWire } from '../../src/acquirer/money-wire';
import type { MerchantFixture } from '../support/api';
import type { OperatorCaseView } from '../../src/services/platform/operator-cases';

describe('MED outcomes booked by rule', function () {
  this.timeout(180_000);
  let s: MedStack;
  const flows = medFlows(() => s);
  const { paidCharge, balance, raise } = flows;
  const knex = () => s.api.knex;

  before(async () => {
    s = await medStack();
  });
  afterEach(() => {
    s.simulator.control.setAutoSettleRefunds(true);
    s.simulator.control.setFaults({});
  });

  async function assertLedgerHolds(merchantId: string): Promise<void> {
    const report = await checkLedgerInvariant(knex(), { merchantIds: [merchantId] });
    assert.deepEqual(report.violations, []);
  }
  const accept = async (m: MerchantFixture, infractionId: string) =>
    assert.equal(
      (await s.api.request('POST', `/v1/sandbox/infractions/${infractionId}/accept`, { token: m.token })).status,
      202,
    );
  const casesOf = (subjectId: string): Promise<OperatorCaseView[]> => s.cases.list({ subjectId });
  /** The charge's devolução of this kind, once the acquirer has been asked for it. */
  const devolucaoAsked = (chargeId: string, kind: 'MERCHANT' | 'INFRACTION') =>
    eventually(async () => {
      const r = await knex()('charge_refunds').where({ charge_id: chargeId, kind }).first();
      return r?.rtr_id ? (r as { id: string; amount: string | number; rtr_id: string }) : undefined;
    }, `the ${kind} devolução asked at the acquirer`);

  it('a merchant refund counted as on its way to the payer fails after the MED devolução: MED_SHORTFALL', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true });
    await paidCharge(m, { settle: true });
    s.simulator.control.setAutoSettleRefunds(false);
    const asked = await s.api.request('POST', `/v1/charges/${a.id}/refund`, {
      token: m.token,
      body: { amount: 4_000 },
    });
    assert.ok(asked.status < 300, JSON.stringify(asked.body));
    const merchantRefund = await devolucaoAsked(a.id, 'MERCHANT');

    const inf = await raise(m, a.id);
    await eventually(async () => {
      const r = await flows.infractionRow(inf.id);
      return r && Number(r.blocked_amount) === 6_000 ? r : undefined;
    }, 'what the payment has left blocked');
    await accept(m, inf.id);
    const med = await devolucaoAsked(a.id, 'INFRACTION');
    assert.equal(Number(med.amount), 6_000, 'the merchant refund in transit is counted as on its way to the payer');
    s.simulator.control.settleRefund(acquirerRefundId(med.id), 'DEVOLVIDO');
    await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result();

    // The merchant's refund then fails: its money goes back to the merchant, the payer is short.
    s.simulator.control.settleRefund(
      acquirerRefundId(merchantRefund.id),
      'NAO_REALIZADO',
      'conta do pagador encerrada',
    );
    const shortfall = await eventually(
      async () => (await casesOf(inf.id)).find((c) => c.kind === 'MED_SHORTFALL'),
      'the MED_SHORTFALL case',
    );
    assert.equal((shortfall.details as { shortfall: number }).shortfall, 4_000);
    assert.deepEqual(shortfall.actions, ['acknowledge']);
    assert.equal((await knex()('charge_refunds').where({ id: merchantRefund.id }).first()).status, 'FAILED');
    assert.deepEqual(await balance(m), { available: 14_000, pending: 0, blocked: 0, total: 14_000 });
    await assertLedgerHolds(m.merchantId);
  });
  it('a devolução whose outcome cannot be asked for six hours stays in transit with a case, and pays once when it settles', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true, amount: 7_000 });
    const inf = await raise(m, a.id);
    await flows.untilBalance(m, { available: 0, pending: 0, blocked: 7_000, total: 7_000 }, 'blocked');
    s.simulator.control.setAutoSettleRefunds(false);
    s.simulator.control.setFaults({ failNext: { route: 'getRefund', times: 1_000_000, status: 503 } });
    await accept(m, inf.id);
    const med = await devolucaoAsked(a.id, 'INFRACTION');
    await s.env.sleep(7 * 60 * 60_000); // the whole window of asking, and more
    const unknown = await eventually(
      async () => (await casesOf(inf.id)).find((c) => c.kind === 'MED_REFUND_UNKNOWN'),
      'the MED_REFUND_UNKNOWN case',
    );
    assert.deepEqual(unknown.actions, ['acknowledge'], 'nothing offered that could pay twice');
    assert.equal((await knex()('charge_refunds').where({ id: med.id }).first()).status, 'REQUESTED');
    assert.equal((await flows.infractionRow(inf.id)).status, 'ACCEPTED');
    assert.deepEqual(
      await balance(m),
      { available: 0, pending: 0, blocked: 0, total: 0 },
      'in transit, not re-blocked',
    );
    assert.equal((await casesOf(inf.id)).filter((c) => c.kind === 'MED_REFUND_REFUSED').length, 0);
    await assertLedgerHolds(m.merchantId);

    // The acquirer answers again and the devolução settles: booked once, the case closed.
    s.simulator.control.setFaults({});
    s.simulator.control.settleRefund(acquirerRefundId(med.id), 'DEVOLVIDO');
    assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result(), { status: 'REFUNDED' });
    const refunds = await knex()('charge_refunds').where({ charge_id: a.id, kind: 'INFRACTION' });
    assert.deepEqual(
      refunds.map((r: { status: string }) => r.status),
      ['CONFIRMED'],
    );
    assert.equal((await casesOf(inf.id)).find((c) => c.id === unknown.id)?.status, 'RESOLVED');
    assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 0, total: 0 });
    await assertLedgerHolds(m.merchantId);
  });
  it("the acquirer's own devolução is booked once: REFUNDED, no case offering release", async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true, amount: 8_000 });
    const inf = await raise(m, a.id);
    await flows.untilBalance(m, { available: 0, pending: 0, blocked: 8_000, total: 8_000 }, 'blocked');
    const simId = (await flows.infractionRow(inf.id)).acquirer_infraction_id as string;
    // The acquirer accepts and returns the payment itself; its REFUNDED callback comes first.
    s.simulator.control.setFaults({ outOfOrderCallbacks: true });
    s.simulator.control.acceptInfraction(simId);
    s.simulator.control.refundInfraction(simId);
    s.simulator.control.setFaults({});
    await s.simulator.control.callbacks.idle();
    assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result(), { status: 'REFUNDED' });

    const cases = await casesOf(inf.id);
    assert.deepEqual(
      cases.filter((c) => c.actions.includes('release')),
      [],
      'no case offers to give the merchant money the payer already has',
    );
    const refunds = await knex()('charge_refunds').where({ charge_id: a.id, kind: 'INFRACTION' });
    assert.deepEqual(
      refunds.map((r: { status: string }) => r.status),
      ['CONFIRMED'],
    );
    const own = s.simulator.control.getInfraction(simId)?.refund;
    assert.equal((refunds[0] as { rtr_id: string }).rtr_id, own?.rtrId, "booked as the acquirer's devolução");
    assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 0, total: 0 });
    const out = await knex()('ledger_transactions').where({
      merchant_id: m.merchantId,
      kind: 'infraction_refund_confirmed',
    });
    assert.equal(out.length, 1, 'booked once');
    assert.equal((await knex()('charges').where({ id: a.id }).first()).status, 'REFUNDED');
    await assertLedgerHolds(m.merchantId);
  });
  it('a DEVOLVIDO after the refund was FAILED opens a contradiction case and pays nothing twice', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true, amount: 6_000 });
    s.simulator.control.setAutoSettleRefunds(false);
    const asked = await s.api.request('POST', `/v1/charges/${a.id}/refund`, {
      token: m.token,
      body: { amount: 2_500 },
    });
    assert.ok(asked.status < 300, JSON.stringify(asked.body));
    const refund = await devolucaoAsked(a.id, 'MERCHANT');
    s.simulator.control.settleRefund(acquirerRefundId(refund.id), 'NAO_REALIZADO', 'conta do pagador encerrada');
    await eventually(async () => {
      const r = await knex()('charge_refunds').where({ id: refund.id }).first();
      return r?.status === 'FAILED' ? r : undefined;
    }, 'the refund FAILED');
    assert.deepEqual(await balance(m), { available: 6_000, pending: 0, blocked: 0, total: 6_000 });

    // The acquirer then says, signed, that the same devolução settled.
    const now = new Date().toISOString();
    const body = JSON.stringify({
      pix: [
        {
          endToEndId: a.e2eId,
          txid: a.txid,
          valor: centsToWire(6_000),
          horario: now,
          devolucoes: [
            {
              id: acquirerRefundId(refund.id),
              rtrId: refund.rtr_id,
              valor: centsToWire(2_500),
              horario: { solicitacao: now, liquidacao: now },
              status: 'DEVOLVIDO',
            },
          ],
        },
      ],
    });
    const res = await fetch(`${s.api.baseUrl}/v1/acquirer/pix`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [CALLBACK_SIGNATURE_HEADER]: signCallback(MED_CALLBACK_SECRET, body),
      },
      body,
    });
    assert.ok(res.status < 300, String(res.status));
    const contradiction = await eventually(
      async () => (await casesOf(a.id)).find((c) => c.kind === 'REFUND_CONTRADICTION'),
      'the REFUND_CONTRADICTION case',
    );
    assert.deepEqual(contradiction.actions, ['acknowledge']);
    assert.equal((await knex()('charge_refunds').where({ id: refund.id }).first()).status, 'FAILED');
    assert.deepEqual(await balance(m), { available: 6_000, pending: 0, blocked: 0, total: 6_000 }, 'nothing moved');
    await assertLedgerHolds(m.merchantId);
  });
});
