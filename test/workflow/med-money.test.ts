/**
 * The money edges of MED (docs/operations.md "The money of an infraction", "Operator cases"), through the HTTP
 * API, the simulator's signed callbacks and the real workflows: an infraction never takes more than
 * its payment, a closed one never blocks again, a refused devolução becomes an operator's case
 * that the ops CLI shows and resolves, and the payer gets what was paid (the fee covering a
 * merchant's shortfall). The ledger invariant is checked after each case.
 */
import assert from 'node:assert/strict';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import * as ledger from '../../src/services/ledger/ledger';
import { acquirerRefundId } from '../../src/acquirer/wire';
import { chargeWorkflowId, infractionWorkflowId } from '../../src/temporal/workflow-ids';
import { infractionStateQuery } from '../../workflows/infraction';
import { eventually } from '../support/charges';
import { medFlows, medStack, type MedStack } from '../support/med';
import { runOps } from '../support/ops-cli';
import { getTestDb } from '../support/db';
import type { MerchantFixture } from '../support/api';
import type { OperatorCaseView } from '../../src/services/platform/operator-cases';

const MINUTE = 60_000;
const DEST = { pixKeyType: 'CHAVE_ALEATORIA', pixKey: '123e4567-e89b-42d3-a456-426614174000' };

describe('MED money edges', function () {
  this.timeout(180_000);
  let s: MedStack;
  const flows = medFlows(() => s);
  const { paidCharge, balance, untilBalance, raise, infractionRow } = flows;
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
  const infractionResult = (id: string) => s.client.workflow.getHandle(infractionWorkflowId(id)).result();
  const casesOf = (subjectId: string): Promise<OperatorCaseView[]> => s.cases.list({ subjectId });
  const chargeRow = (id: string) =>
    knex()('charges').where({ id }).first() as Promise<{ status: string; refunded_amount: string | number }>;

  /** The charge's MED devolução, once the acquirer has been asked for it. */
  const devolucaoAsked = (chargeId: string) =>
    eventually(async () => {
      const r = await knex()('charge_refunds').where({ charge_id: chargeId, kind: 'INFRACTION' }).first();
      return r?.rtr_id ? (r as { id: string }) : undefined;
    }, 'the devolução asked at the acquirer');

  async function withdraw(m: MerchantFixture, amount: number): Promise<void> {
    const res = await s.api.request('POST', '/v1/merchants/me/withdrawals', {
      token: m.token,
      body: { amount, ...DEST },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }

  async function refund(m: MerchantFixture, chargeId: string, amount?: number) {
    return s.api.request<{ message: string }>('POST', `/v1/charges/${chargeId}/refund`, {
      token: m.token,
      body: amount === undefined ? {} : { amount },
    });
  }

  it('an accepted infraction that blocked nothing closes with a case; a later refund of its charge leaves blocked at zero for good', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true });
    await withdraw(m, 10_000);
    assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 0, total: 0 });

    const inf = await raise(m, a.id);
    await accept(m, inf.id);
    assert.deepEqual(await infractionResult(inf.id), { status: 'ACCEPTED' });
    const row = await infractionRow(inf.id);
    assert.ok(row.closed_at, 'closed: nothing of the merchant to return');
    const [opened] = await casesOf(inf.id);
    assert.equal(opened?.kind, 'MED_NOTHING_TO_RETURN');
    assert.equal(opened?.status, 'OPEN');
    assert.equal(opened?.details.owed, 10_000);

    // Money arrives later, and the acquirer announces the decision again (a duplicate callback):
    // a fresh run of the closed infraction blocks nothing.
    await paidCharge(m, { settle: true });
    await s.infractions.acquirerUpdate({ id: inf.id, merchantId: m.merchantId }, { status: 'ACCEPTED' });
    assert.deepEqual(await infractionResult(inf.id), { status: 'ACCEPTED' });
    assert.deepEqual(await balance(m), { available: 10_000, pending: 0, blocked: 0, total: 10_000 });
    // The merchant refunds A itself: the devolução settling makes the acquirer announce the
    // infraction REFUNDED, which starts another fresh run.
    const refunded = await refund(m, a.id);
    assert.equal(refunded.status, 202, JSON.stringify(refunded.body));
    await eventually(
      async () => ((await chargeRow(a.id)).status === 'REFUNDED' ? true : undefined),
      'charge A refunded',
    );
    await eventually(
      async () => ((await infractionRow(inf.id)).acquirer_status === 'REFUNDED' ? true : undefined),
      'the acquirer to announce REFUNDED',
    );
    assert.deepEqual(await infractionResult(inf.id), { status: 'ACCEPTED' });
    await s.env.sleep(2 * 24 * 60 * MINUTE); // any top-up would have happened by now
    assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 0, total: 0 });
    await assertLedgerHolds(m.merchantId);
  });

  it('two infractions on one charge take at most the charge', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true });
    await paidCharge(m, { settle: true });
    const first = await raise(m, a.id, 'golpe 1');
    const second = await raise(m, a.id, 'golpe 2');
    // Both runs have taken their first step (the state query answers once it is done).
    for (const inf of [first, second]) {
      await eventually(
        () =>
          s.client.workflow
            .getHandle(infractionWorkflowId(inf.id))
            .query(infractionStateQuery)
            .then(
              (p) => p ?? undefined,
              () => undefined,
            ),
        'the infraction opened',
      );
    }
    assert.deepEqual(
      await balance(m),
      { available: 10_000, pending: 0, blocked: 10_000, total: 20_000 },
      'one charge blocked once',
    );
    await Promise.all([accept(m, first.id), accept(m, second.id)]);
    const results = await Promise.all([infractionResult(first.id), infractionResult(second.id)]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['ACCEPTED', 'REFUNDED']);
    await untilBalance(m, { available: 10_000, pending: 0, blocked: 0, total: 10_000 }, 'the payment returned once');
    const charge = await chargeRow(a.id);
    assert.equal(charge.status, 'REFUNDED');
    assert.equal(Number(charge.refunded_amount), 10_000);
    const medRefunds = await knex()('charge_refunds').where({ charge_id: a.id, kind: 'INFRACTION' });
    assert.deepEqual(
      medRefunds.map((r: { amount: string | number; status: string }) => [Number(r.amount), r.status]),
      [[10_000, 'CONFIRMED']],
    );
    await assertLedgerHolds(m.merchantId);
  });

  it('a merchant refund while the payment is blocked or its MED devolução travels cannot exceed the payment', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true });
    await paidCharge(m, { settle: true });
    const inf = await raise(m, a.id);
    await untilBalance(m, { available: 10_000, pending: 0, blocked: 10_000, total: 20_000 }, 'blocked');
    const whileBlocked = await refund(m, a.id, 1);
    assert.equal(whileBlocked.status, 400);
    assert.equal(whileBlocked.body.message, 'Nothing left to refund on this charge');

    s.simulator.control.setAutoSettleRefunds(false);
    await accept(m, inf.id);
    const devolucao = await devolucaoAsked(a.id);
    const whileTravelling = await refund(m, a.id);
    assert.equal(whileTravelling.status, 400);
    assert.equal(whileTravelling.body.message, 'Nothing left to refund on this charge');

    s.simulator.control.settleRefund(acquirerRefundId(devolucao.id), 'DEVOLVIDO');
    assert.deepEqual(await infractionResult(inf.id), { status: 'REFUNDED' });
    assert.equal((await chargeRow(a.id)).status, 'REFUNDED');
    assert.deepEqual(await balance(m), { available: 10_000, pending: 0, blocked: 0, total: 10_000 });
    await assertLedgerHolds(m.merchantId);
  });

  it('a refused devolução re-blocks its money into an operator case the ops CLI lists; retry sends a new one and the charge ends REFUNDED', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true, amount: 7_000 });
    const inf = await raise(m, a.id);
    await untilBalance(m, { available: 0, pending: 0, blocked: 7_000, total: 7_000 }, 'blocked');
    s.simulator.control.setAutoSettleRefunds(false);
    await accept(m, inf.id);
    const first = await devolucaoAsked(a.id);
    s.simulator.control.settleRefund(acquirerRefundId(first.id), 'NAO_REALIZADO', 'conta do pagador encerrada');
    await s.env.sleep(2 * MINUTE); // the workflow asks for its devolução's outcome
    const opened = await eventually(
      async () => (await casesOf(inf.id)).find((c) => c.kind === 'MED_REFUND_REFUSED'),
      'the case',
    );
    assert.deepEqual(opened.actions, ['retry', 'release']);
    assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 7_000, total: 7_000 });
    assert.equal((await knex()('charge_refunds').where({ id: first.id }).first()).status, 'FAILED');
    await assertLedgerHolds(m.merchantId);

    // The operator sees it and decides, from the ops CLI (no Temporal address: the workflow finds
    // the decision on its hourly check).
    const dbUrl = (await getTestDb()).url;
    const listed = await runOps(dbUrl, 'cases', 'list', '--kind', 'MED_REFUND_REFUSED');
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok((JSON.parse(listed.stdout) as { cases: OperatorCaseView[] }).cases.some((c) => c.id === opened.id));
    const wrong = await runOps(dbUrl, 'cases', 'resolve', opened.id, '--action', 'acknowledge');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /accepts retry, release, not acknowledge/);
    s.simulator.control.setAutoSettleRefunds(true);
    const resolved = await runOps(
      dbUrl,
      'cases',
      'resolve',
      opened.id,
      '--action',
      'retry',
      '--note',
      'payer reopened the account',
    );
    assert.equal(resolved.code, 0, resolved.stderr);
    assert.equal((JSON.parse(resolved.stdout) as { case: OperatorCaseView }).case.status, 'RESOLVED');
    const again = await runOps(dbUrl, 'cases', 'resolve', opened.id, '--action', 'retry');
    assert.equal(again.code, 1, 'a decision is applied once');

    await s.env.sleep(61 * MINUTE);
    assert.deepEqual(await infractionResult(inf.id), { status: 'REFUNDED' });
    assert.equal((await chargeRow(a.id)).status, 'REFUNDED');
    const refunds = await knex()('charge_refunds').where({ charge_id: a.id, kind: 'INFRACTION' }).orderBy('created_at');
    assert.deepEqual(
      refunds.map((r: { status: string }) => r.status),
      ['FAILED', 'CONFIRMED'],
    );
    assert.deepEqual(await balance(m), { available: 0, pending: 0, blocked: 0, total: 0 });
    await assertLedgerHolds(m.merchantId);
  });

  it('release: the re-blocked money goes back to the merchant and the infraction closes', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true, amount: 3_000 });
    const inf = await raise(m, a.id);
    await untilBalance(m, { available: 0, pending: 0, blocked: 3_000, total: 3_000 }, 'blocked');
    s.simulator.control.setFaults({ failNext: { route: 'refund', times: 1, status: 422 } });
    await accept(m, inf.id);
    const opened = await eventually(
      async () => (await casesOf(inf.id)).find((c) => c.kind === 'MED_REFUND_REFUSED'),
      'the case',
    );
    s.simulator.control.setFaults({});
    await s.cases.resolve(
      { userId: null, email: 'ops@pixflow.test' },
      opened.id,
      'release',
      'acquirer returned it itself',
    );
    assert.deepEqual(await infractionResult(inf.id), { status: 'ACCEPTED' });
    assert.deepEqual(await balance(m), { available: 3_000, pending: 0, blocked: 0, total: 3_000 });
    assert.equal((await chargeRow(a.id)).status, 'PAID');
    const audit = await knex()('audit_log').where({ target_id: inf.id }).orderBy('created_at').pluck('action');
    assert.deepEqual(audit, ['case.opened', 'case.resolved']);
    await assertLedgerHolds(m.merchantId);
  });

  it("the payer gets what was paid: the platform's fee covers the merchant's shortfall, and the charge ends REFUNDED", async () => {
    const m = await flows.readyMerchant({ feeBps: 100 });
    const a = await paidCharge(m, { settle: true, amount: 5_000 }); // fee 50, net 4,950
    assert.deepEqual(await balance(m), { available: 4_950, pending: 0, blocked: 0, total: 4_950 });
    const inf = await raise(m, a.id);
    await untilBalance(m, { available: 0, pending: 0, blocked: 4_950, total: 4_950 }, 'all of it blocked');
    await accept(m, inf.id);
    assert.deepEqual(await infractionResult(inf.id), { status: 'REFUNDED' });
    const row = await infractionRow(inf.id);
    assert.equal(Number(row.refund_amount), 5_000);
    assert.equal(Number(row.fee_returned), 50);
    assert.equal(s.simulator.control.getRefund(acquirerRefundId(row.refund_id))?.amount, 5_000);
    assert.equal((await chargeRow(a.id)).status, 'REFUNDED');
    assert.equal((await ledger.getAccounts(knex(), m.merchantId)).fee_revenue, 0);
    assert.deepEqual(await casesOf(inf.id), [], 'nothing short: no case');
    await assertLedgerHolds(m.merchantId);
  });

  it('what neither the merchant nor the fee covers is returned in part and the remainder is an operator case; the charge stays PAID', async () => {
    const m = await flows.readyMerchant({ feeBps: 0 });
    const a = await paidCharge(m, { settle: true });
    await withdraw(m, 4_000);
    const inf = await raise(m, a.id);
    await untilBalance(m, { available: 0, pending: 0, blocked: 6_000, total: 6_000 }, 'what is there blocked');
    await accept(m, inf.id);
    assert.deepEqual(await infractionResult(inf.id), { status: 'REFUNDED' });
    const [shortfall] = await casesOf(inf.id);
    assert.equal(shortfall?.kind, 'MED_SHORTFALL');
    assert.deepEqual(
      [shortfall?.details.owed, shortfall?.details.returned, shortfall?.details.shortfall],
      [10_000, 6_000, 4_000],
    );
    const charge = await chargeRow(a.id);
    assert.deepEqual([charge.status, Number(charge.refunded_amount)], ['PAID', 6_000]);
    await s.client.workflow.getHandle(chargeWorkflowId(a.id)).result();
    await assertLedgerHolds(m.merchantId);
  });
});
