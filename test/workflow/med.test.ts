/**
 * MED infractions end to end: the sandbox drives the simulator, which calls the signed infraction
 * callback; the real worker runs `infraction-<id>`; balances are read through the API and the
 * ledger from the database. Time skipping brings the settlement of pending money.
 */
import assert from 'node:assert/strict';
import { acquirerRefundId } from '../../src/acquirer/wire';
import * as ledger from '../../src/services/ledger/ledger';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { chargeWorkflowId, infractionWorkflowId } from '../../src/temporal/workflow-ids';
import { eventually, readyMerchant } from '../support/charges';
import { MED_CALLBACK_SECRET, medFlows, medStack, type MedStack } from '../support/med';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import { counter } from '../support/metrics';

describe('MED infractions', function () {
  this.timeout(120_000);
  let s: MedStack;

  before(async () => {
    s = await medStack();
  });

  afterEach(() => s.simulator.control.setFaults({}));

  // Every merchant of the suite, once more at the end, when every workflow has settled.
  const merchants: string[] = [];
  after(async () => {
    const report = await checkLedgerInvariant(knex(), { merchantIds: merchants });
    assert.deepEqual(report.violations, []);
  });

  const knex = () => s.api.knex;

  const { paidCharge, balance, untilBalance, infractionRow, untilInfraction, raise } = medFlows(() => s);

  /* eslint-disable @typescript-eslint/no-misused-promises -- knex ignores a where callback's return; the builder is thenable, not a query in flight */
  async function eventsOf(merchantId: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
    return knex()('events')
      .where({ merchant_id: merchantId })
      .where((q) => q.where('type', 'like', 'infraction.%').orWhere('type', 'charge.refunded'))
      .orderBy('id')
      .select('type', 'data');
  }
  /* eslint-enable @typescript-eslint/no-misused-promises */

  /** The ledger invariant (src/services/ledger/invariant.ts) over this merchant's books. */
  async function assertLedgerHolds(merchantId: string): Promise<void> {
    merchants.push(merchantId);
    const report = await checkLedgerInvariant(knex(), { merchantIds: [merchantId] });
    assert.deepEqual(report.violations, []);
  }

  it('blocks a paid charge, and accepted refunds the payer: REFUNDED, events in order, ledger intact', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await paidCharge(m, { settle: true });
    assert.deepEqual(await balance(m), { available: 10_000, pending: 0, blocked: 0, total: 10_000 });
    const infractions = (outcome: string): Promise<number> => counter('pixflow_infractions_total', { outcome });
    const [acceptedBefore, refundedBefore] = [await infractions('accepted'), await infractions('refunded')];
    const medRefunds = await counter('pixflow_refunds_total', { outcome: 'confirmed', kind: 'infraction' });

    const inf = await raise(m, charge.id);
    assert.equal(inf.status, 'OPEN');
    assert.equal(inf.chargeId, charge.id);
    assert.equal(inf.endToEndId, charge.e2eId);
    assert.equal(inf.amount, 10_000);
    // The balance shows the disputed amount under blocked.
    await untilBalance(m, { available: 0, pending: 0, blocked: 10_000, total: 10_000 }, 'the amount blocked');

    const accepted = await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/accept`, { token: m.token });
    assert.equal(accepted.status, 202);
    const done = await untilInfraction(inf.id, 'REFUNDED');
    assert.equal(Number(done.refund_amount), 10_000);
    assert.ok(done.refunded_at);
    assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result(), { status: 'REFUNDED' });
    // /metrics: accepted, then refunded, and the devolução confirmed (each once).
    assert.equal((await infractions('accepted')) - acceptedBefore, 1);
    assert.equal((await infractions('refunded')) - refundedBefore, 1);
    assert.equal(
      (await counter('pixflow_refunds_total', { outcome: 'confirmed', kind: 'infraction' })) - medRefunds,
      1,
    );

    // The payer got the money back by a devolução at the acquirer, under the id we chose.
    const devolucao = s.simulator.control.getRefund(acquirerRefundId(done.refund_id));
    assert.equal(devolucao?.status, 'DEVOLVIDO');
    assert.equal(devolucao?.amount, 10_000);
    assert.equal(devolucao?.e2eId, charge.e2eId);

    const row = await knex()('charges').where({ id: charge.id }).first();
    assert.equal(row.status, 'REFUNDED');
    assert.equal(Number(row.refunded_amount), 10_000);
    const refund = await knex()('charge_refunds').where({ id: done.refund_id }).first();
    assert.equal(refund.kind, 'INFRACTION');
    assert.equal(refund.status, 'CONFIRMED');
    assert.ok(refund.rtr_id);

    const base = {
      infractionId: inf.id,
      chargeId: charge.id,
      endToEndId: charge.e2eId,
      amount: 10_000,
      reason: 'Golpe do falso vendedor',
    };
    const events = await eventsOf(m.merchantId);
    assert.deepEqual(
      events.map((e) => e.type),
      ['infraction.received', 'infraction.updated', 'infraction.refund_completed', 'charge.refunded'],
    );
    assert.deepEqual(events[0]?.data, { ...base, status: 'OPEN' });
    assert.deepEqual(events[1]?.data, { ...base, status: 'ACCEPTED' });
    assert.deepEqual(events[2]?.data, {
      ...base,
      status: 'REFUNDED',
      refundedAt: new Date(done.refunded_at).toISOString(),
    });
    assert.deepEqual(events[3]?.data, {
      refundId: done.refund_id,
      txid: charge.txid,
      chargeId: charge.id,
      amount: '100.00',
      status: 'closed',
      reason: 'MED: Golpe do falso vendedor',
      end2endId: charge.e2eId,
    });

    assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 0, total: 0 });
    const accounts = await ledger.getAccounts(knex(), m.merchantId);
    assert.equal(accounts.in_transit, 0);
    assert.equal(accounts.blocked, 0);
    await assertLedgerHolds(m.merchantId);
  });

  it('rejected: the blocked amount goes back to available', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await paidCharge(m, { settle: true, amount: 5_000 });
    const inf = await raise(m, charge.id, 'Suspeita de fraude');
    await untilBalance(m, { available: 0, pending: 0, blocked: 5_000, total: 5_000 }, 'the amount blocked');

    const rejectedBefore = await counter('pixflow_infractions_total', { outcome: 'rejected' });
    const rejected = await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/reject`, { token: m.token });
    assert.equal(rejected.status, 202);
    await untilInfraction(inf.id, 'REJECTED');
    assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result(), { status: 'REJECTED' });
    assert.equal((await counter('pixflow_infractions_total', { outcome: 'rejected' })) - rejectedBefore, 1);
    assert.deepEqual(await balance(m), { available: 5_000, pending: 0, blocked: 0, total: 5_000 });
    assert.equal((await knex()('charges').where({ id: charge.id }).first()).status, 'PAID');

    const base = {
      infractionId: inf.id,
      chargeId: charge.id,
      endToEndId: charge.e2eId,
      amount: 5_000,
      reason: 'Suspeita de fraude',
    };
    assert.deepEqual(await eventsOf(m.merchantId), [
      { type: 'infraction.received', data: { ...base, status: 'OPEN' } },
      { type: 'infraction.updated', data: { ...base, status: 'REJECTED' } },
    ]);
    // Decided already: the simulator refuses a second decision (400).
    const again = await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/accept`, { token: m.token });
    assert.equal(again.status, 400);
    await assertLedgerHolds(m.merchantId);
  });

  it('blocks from pending as it settles: nothing available at first, the whole amount after settlement', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await paidCharge(m, { settle: false, amount: 7_000 });
    const inf = await raise(m, charge.id);
    await eventually(
      async () =>
        (await knex()('events')
          .where({ reference: `infraction.received:${inf.id}` })
          .first())
          ? true
          : undefined,
      'infraction.received',
    );
    assert.deepEqual(await balance(m), { available: 0, pending: 7_000, blocked: 0, total: 7_000 });

    // The charge settles (pending → available) a day later; the infraction blocks it shortly after.
    await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).result();
    await s.env.sleep('1 minute');
    await untilBalance(m, { available: 0, pending: 0, blocked: 7_000, total: 7_000 }, 'the settled amount blocked');

    await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/reject`, { token: m.token });
    await untilInfraction(inf.id, 'REJECTED');
    await untilBalance(m, { available: 7_000, pending: 0, blocked: 0, total: 7_000 }, 'the amount unblocked');
    await assertLedgerHolds(m.merchantId);
  });

  it('survives duplicated and reordered callbacks: the decision before the opening still refunds once', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await paidCharge(m, { settle: true, amount: 3_000 });
    // Hold every callback, raise and accept, then release them newest first (ACCEPTED before OPEN),
    // each delivered twice.
    s.simulator.control.setFaults({ outOfOrderCallbacks: true, duplicateCallbacks: true });
    const inf = await raise(m, charge.id);
    const accepted = await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/accept`, { token: m.token });
    assert.equal(accepted.status, 202);
    s.simulator.control.setFaults({ duplicateCallbacks: true });
    await untilInfraction(inf.id, 'REFUNDED');
    await s.simulator.control.callbacks.idle();
    assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result(), { status: 'REFUNDED' });

    assert.deepEqual(
      (await eventsOf(m.merchantId)).map((e) => e.type),
      ['infraction.received', 'infraction.updated', 'infraction.refund_completed', 'charge.refunded'],
    );
    const devolucoes = (await knex()('charge_refunds').where({ charge_id: charge.id })) as unknown[];
    assert.equal(devolucoes.length, 1);
    assert.equal((await knex()('infractions').where({ charge_id: charge.id })).length, 1);
    assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 0, total: 0 });
    await assertLedgerHolds(m.merchantId);
  });

  it('keeps the books explained while the devolução travels, and polls the acquirer when no callback comes', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await paidCharge(m, { settle: true, amount: 4_000 });
    const inf = await raise(m, charge.id);
    await untilBalance(m, { available: 0, pending: 0, blocked: 4_000, total: 4_000 }, 'the amount blocked');
    s.simulator.control.setAutoSettleRefunds(false);
    try {
      await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/accept`, { token: m.token });
      const refund = await eventually(async () => {
        const r = await knex()('charge_refunds').where({ charge_id: charge.id, kind: 'INFRACTION' }).first();
        return r?.rtr_id ? r : undefined;
      }, 'the devolução asked at the acquirer');
      assert.equal(refund.status, 'REQUESTED');
      // In transit, explained by the REQUESTED refund: the invariant holds mid-flight.
      assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 0, total: 0 });
      assert.equal((await ledger.getAccounts(knex(), m.merchantId)).in_transit, 4_000);
      await assertLedgerHolds(m.merchantId);
      assert.equal((await infractionRow(inf.id)).status, 'ACCEPTED');

      // The devolução settles at the acquirer but its callbacks are lost: the workflow asks itself.
      s.simulator.control.setCallbackBaseUrl('http://127.0.0.1:9');
      s.simulator.control.settleRefund(acquirerRefundId(refund.id), 'DEVOLVIDO');
      await s.simulator.control.callbacks.idle();
      s.simulator.control.setCallbackBaseUrl(s.api.baseUrl);
      assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result(), {
        status: 'REFUNDED',
      });
    } finally {
      s.simulator.control.setAutoSettleRefunds(true);
      s.simulator.control.setCallbackBaseUrl(s.api.baseUrl);
    }
    assert.equal((await knex()('charges').where({ id: charge.id }).first()).status, 'REFUNDED');
    assert.equal(
      (await knex()('charge_refunds').where({ charge_id: charge.id, kind: 'INFRACTION' }).first()).status,
      'CONFIRMED',
    );
    await assertLedgerHolds(m.merchantId);
  });

  it('takes many concurrent deliveries of one infraction callback as one infraction, one block, one event', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await paidCharge(m, { settle: true, amount: 2_000 });
    const body = JSON.stringify({
      infraction: {
        id: `infconc${Date.now()}`,
        endToEndId: charge.e2eId,
        txid: charge.txid,
        valor: '20.00',
        motivo: 'Golpe',
        status: 'OPEN',
        horario: new Date().toISOString(),
      },
    });
    const signature = signCallback(MED_CALLBACK_SECRET, body);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${s.api.baseUrl}/v1/acquirer/infractions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [CALLBACK_SIGNATURE_HEADER]: signature },
          body,
        }).then((r) => r.status),
      ),
    );
    assert.deepEqual(new Set(answers), new Set([202]));
    const rows = (await knex()('infractions').where({ charge_id: charge.id })) as Array<{ id: string }>;
    assert.equal(rows.length, 1);
    await untilBalance(m, { available: 0, pending: 0, blocked: 2_000, total: 2_000 }, 'the amount blocked once');
    const blocks = await knex()('ledger_transactions').where({ merchant_id: m.merchantId, kind: 'infraction_block' });
    assert.equal(blocks.length, 1);
    assert.equal((await eventsOf(m.merchantId)).length, 1);
    // A badly signed one is refused before anything is read.
    const forged = await fetch(`${s.api.baseUrl}/v1/acquirer/infractions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CALLBACK_SIGNATURE_HEADER]: signCallback('wrong', body) },
      body,
    });
    assert.equal(forged.status, 401);
    // An infraction on a payment that is not one of our charges is kept in the inbox, nothing more.
    const stranger = JSON.stringify({
      infraction: {
        ...JSON.parse(body).infraction,
        id: `infstranger${Date.now()}`,
        endToEndId: `E99999999202611231200${'X'.repeat(11)}`,
      },
    });
    const kept = await fetch(`${s.api.baseUrl}/v1/acquirer/infractions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [CALLBACK_SIGNATURE_HEADER]: signCallback(MED_CALLBACK_SECRET, stranger),
      },
      body: stranger,
    });
    assert.equal(kept.status, 202);
    assert.equal((await knex()('infractions').where({ e2e_id: `E99999999202611231200${'X'.repeat(11)}` })).length, 0);
    // Rejected by the acquirer: close it, so nothing is left running.
    const rejected = JSON.stringify({ infraction: { ...JSON.parse(body).infraction, status: 'REJECTED' } });
    const res = await fetch(`${s.api.baseUrl}/v1/acquirer/infractions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [CALLBACK_SIGNATURE_HEADER]: signCallback(MED_CALLBACK_SECRET, rejected),
      },
      body: rejected,
    });
    assert.equal(res.status, 202);
    assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(rows[0]!.id)).result(), {
      status: 'REJECTED',
    });
    await assertLedgerHolds(m.merchantId);
  });

  it('sandbox: scoped to the caller, validated, and only on paid charges', async () => {
    const a = await readyMerchant(s.api, { feeBps: 0 });
    const b = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await paidCharge(a, { settle: false, amount: 1_000 });

    const foreign = await s.api.request('POST', '/v1/sandbox/infractions', {
      token: b.token,
      body: { chargeId: charge.id },
    });
    assert.equal(foreign.status, 404);
    const missing = await s.api.request('POST', '/v1/sandbox/infractions', { token: a.token, body: {} });
    assert.equal(missing.status, 400);
    assert.match((missing.body as { message: string }).message, /chargeId/);

    const unpaid = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: a.token,
      body: { amount: 1_000, description: 'Não paga' },
    });
    const notPaid = await s.api.request('POST', '/v1/sandbox/infractions', {
      token: a.token,
      body: { chargeId: unpaid.body.charge.id },
    });
    assert.equal(notPaid.status, 400);

    const inf = await raise(a, charge.id);
    for (const decision of ['accept', 'reject']) {
      const res = await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/${decision}`, { token: b.token });
      assert.equal(res.status, 404);
    }
    const unknown = await s.api.request('POST', '/v1/sandbox/infractions/inf_nope/accept', { token: a.token });
    assert.equal(unknown.status, 404);
    const anonymous = await s.api.request('POST', '/v1/sandbox/infractions', { body: { chargeId: charge.id } });
    assert.equal(anonymous.status, 401);
  });
});
