/**
 * Due-date charges end to end: created through the API (a cobv at the simulator), paid through the
 * sandbox on a chosen day, the payment booked by the real worker; time skipping brings the end of
 * validity. Expected amounts are worked out here by hand from literal figures, never by the
 * module the service and the simulator share (src/domain/due-date-amount.ts).
 */
import assert from 'node:assert/strict';
import * as ledger from '../../src/services/ledger/ledger';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { createStatementService } from '../../src/services/ledger/statement';
import { chargeWorkflowId } from '../../src/temporal/workflow-ids';
import { bcbViolations, itConformsToTheBcbDocument } from '../support/bcb-schema';
import {
  eventually,
  ownChargesStack,
  readyMerchant,
  saoPauloDay,
  tuitionCharge,
  type ChargesStack,
} from '../support/charges';

const day = saoPauloDay;

interface Created {
  id: string;
  type: string;
  txid: string;
  qrCode: string;
  amount: number;
  status: string;
}

describe('due-date charges (cobv) end to end', function () {
  this.timeout(180_000);
  let s: ChargesStack;

  before(async () => {
    s = await ownChargesStack('due_date_flow');
  });

  const body = tuitionCharge;

  async function create(token: string, b: Record<string, unknown> = body()): Promise<Created> {
    const res = await s.api.request<{ charge: Created }>('POST', '/v1/charges', { token, body: b });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.charge;
  }

  const lastCall = (route: string) => [...s.simulator.control.calls].reverse().find((c) => c.route === route);
  const untilStatus = (id: string, status: string) =>
    eventually(async () => {
      const row = await s.api.knex('charges').where({ id }).first();
      return row?.status === status ? row : undefined;
    }, `charge ${id} to be ${status}`);

  async function payOn(token: string, charge: Created, paidOn: string) {
    const res = await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token, body: { paidOn } });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return untilStatus(charge.id, 'PAID');
  }

  it('creates a DUE_DATE charge as a cobv that follows the BCB document', async () => {
    const m = await readyMerchant(s.api);
    const charge = await create(m.token);
    assert.equal(charge.type, 'DUE_DATE');
    assert.equal(charge.status, 'PENDING');
    assert.ok(charge.qrCode.length > 0);
    assert.deepEqual(bcbViolations('CobVSolicitada', lastCall('createCobv')?.request), []);
    assert.deepEqual(bcbViolations('CobVGerada', lastCall('createCobv')?.response), []);
    const list = await s.api.request<{ total: number; charges: Created[] }>('GET', '/v1/charges?type=DUE_DATE', {
      token: m.token,
    });
    assert.deepEqual(
      list.body.charges.map((c) => [c.id, c.type]),
      [[charge.id, 'DUE_DATE']],
    );
  });

  it('refuses what a due-date charge cannot be, with a clear 4xx', async () => {
    const m = await readyMerchant(s.api);
    const refused = async (b: Record<string, unknown>, status: number, match: RegExp) => {
      const res = await s.api.request<{ message: string; code: string }>('POST', '/v1/charges', {
        token: m.token,
        body: b,
      });
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.match(res.body.message, match);
    };
    const { payer: _payer, ...withoutPayer } = body();
    await refused(withoutPayer, 400, /payer/);
    await refused(body({ expiresIn: 3600 }), 400, /expiresIn/);
    await refused(body({ dueDate: day(-1) }), 400, /dueDate is in the past/);
    await refused(body({ payer: { name: 'Ana', document: '12345678900' } }), 422, /payer.document/);
    await refused(body({ interest: { mode: 'PERCENT_PER_DAY', percent: 1 } }), 400, /interest/);
    await refused(
      body({ discount: { mode: 'FIXED_UNTIL', until: [{ date: day(11), amount: 10 }] } }),
      400,
      /after dueDate/,
    );
    await refused(body({ abatement: { mode: 'FIXED', amount: 100_000 } }), 400, /abatement/);
  });

  it('paid before, on and after the due date: what the payer paid is booked, with the fee on it', async () => {
    const m = await readyMerchant(s.api, { feeBps: 100 });
    // [paid on, expected total, fine, interest, discount]; the abatement is 10.00 every day.
    const cases: Array<[string, number, number, number, number]> = [
      // Before the discount date: 1000.00 − 10.00 − 50.00.
      [day(1), 94_000, 0, 0, 5_000],
      // On the due date: no discount left, nothing added: 990.00.
      [day(10), 99_000, 0, 0, 0],
      // Six days late: fine 2 % of 990.00 = 19.80; interest 1 % × 6/30 of 990.00 = 1.98.
      [day(16), 99_000 + 1_980 + 198, 1_980, 198, 0],
    ];
    let expectedNet = 0;
    let late: Created | undefined;
    const booked: Array<[string, number, number]> = [];
    for (const [paidOn, total, fine, interest, discount] of cases) {
      const charge = await create(m.token);
      late = charge;
      booked.push([charge.id, total, -Math.round(total / 100)]);
      const row = await payOn(m.token, charge, paidOn);
      const fee = Math.round(total / 100); // 1 % of what was paid
      assert.equal(Number(row.amount), 100_000, paidOn);
      assert.equal(Number(row.amount_paid), total, paidOn);
      assert.equal(Number(row.fee_amount), fee, paidOn);
      expectedNet += total - fee;
      const event = await s.api
        .knex('events')
        .where({ reference: `charge.paid:${charge.id}` })
        .first();
      assert.deepEqual(
        [event.data.nominalAmount, event.data.paidAmount, event.data.breakdown],
        [100_000, total, { fine, interest, discount, abatement: 1_000 }],
        paidOn,
      );
      const detail = await s.api.request<{ charge: { fee: number; dueDate: Record<string, unknown> } }>(
        'GET',
        `/v1/charges/${charge.id}`,
        { token: m.token },
      );
      assert.deepEqual(detail.body.charge.dueDate, {
        dueDate: day(10),
        validityAfterDue: 20,
        paidAmount: total,
        breakdown: { fine, interest, discount, abatement: 1_000 },
      });
      assert.equal(detail.body.charge.fee, fee);
      const balance = await ledger.getBalance(s.api.knex, m.merchantId);
      assert.equal(balance.total, expectedNet, paidOn);
    }
    // The statement (docs/api.md "Statement") books each payment as paid, and its fee on that amount.
    const statement = await createStatementService({ knex: s.api.knex }).page(m.merchantId, { page: 1, limit: 100 });
    const lines = (type: string) =>
      statement.entries.filter((e) => e.type === type).map((e) => [e.chargeId, e.amount] as const);
    const byCharge = (a: readonly [string | null, number], b: readonly [string | null, number]) =>
      String(a[0]).localeCompare(String(b[0]));
    assert.deepEqual(
      lines('CHARGE_PAID').sort(byCharge),
      booked.map(([id, total]) => [id, total] as const).sort(byCharge),
    );
    assert.deepEqual(lines('FEE').sort(byCharge), booked.map(([id, , fee]) => [id, fee] as const).sort(byCharge));
    // Refunds are of what was paid (1011.78), more than the nominal 1000.00.
    const refund = (amount: number) =>
      s.api.request<{ refund: { amount: number } }>('POST', `/v1/charges/${late?.id}/refund`, {
        token: m.token,
        body: { amount },
      });
    assert.equal((await refund(101_179)).status, 400, 'past the paid amount');
    assert.equal((await refund(100_500)).status, 202);
    await eventually(async () => {
      const r = await s.api.knex('charge_refunds').where({ charge_id: late?.id, status: 'CONFIRMED' }).first();
      return r ?? undefined;
    }, 'the first refund to be confirmed');
    assert.equal((await refund(678)).status, 202);
    const refunded = await untilStatus(late?.id ?? '', 'REFUNDED');
    assert.equal(Number(refunded.refunded_amount), 101_178);
    assert.deepEqual((await checkLedgerInvariant(s.api.knex, { merchantIds: [m.merchantId] })).violations, []);
  });

  it('an unpaid charge waits until the end of validity, then expires and its cobv is removed', async () => {
    const m = await readyMerchant(s.api);
    const charge = await create(m.token, body({ dueDate: day(2), validityAfterDue: 3, discount: undefined }));
    const handle = s.client.workflow.getHandle(chargeWorkflowId(charge.id));
    await handle.result(); // time skipping: to the end of day(5) in São Paulo
    const row = await untilStatus(charge.id, 'CANCELED');
    assert.equal(row.amount_paid, null);
    assert.equal(s.simulator.control.getCob(charge.txid)?.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    assert.deepEqual(bcbViolations('CobVRevisada', lastCall('removeCobv')?.request), []);
    assert.deepEqual((await ledger.getBalance(s.api.knex, m.merchantId)).total, 0);
    assert.deepEqual((await checkLedgerInvariant(s.api.knex, { merchantIds: [m.merchantId] })).violations, []);
  });

  it('a batch of 1,000 with a few invalid items: each accepted or refused on its own', async function () {
    this.timeout(300_000);
    const m = await readyMerchant(s.api);
    const invalid = new Map<number, RegExp>([
      [7, /amount/],
      [250, /dueDate is in the past/],
      [999, /payer.document/],
      [500, /customer/],
    ]);
    const items = Array.from({ length: 1_000 }, (_, i) => {
      if (i === 7) return body({ amount: -1 });
      if (i === 250) return body({ dueDate: day(-3) });
      if (i === 999) return body({ payer: { name: 'Ana', document: '11111111111' } });
      if (i === 500)
        return body({
          customer: { name: 'Ana', email: 'ana@example.com', phone: '11999990000', document: '12345678909' },
        });
      return body({ amount: 10_000 + i, discount: undefined });
    });
    const key = `batch-${Date.now()}`;
    const res = await s.api.request<{ batch: BatchView }>('POST', '/v1/charges/batch', {
      token: m.token,
      headers: { 'x-idempotency-key': key },
      body: { description: 'Mensalidades', items },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body).slice(0, 500));
    const batch = res.body.batch;
    assert.deepEqual([batch.total, batch.accepted, batch.refused, batch.status], [1_000, 996, 4, 'COMPLETED']);
    for (const item of batch.items) {
      const why = invalid.get(item.index);
      if (why) {
        assert.equal(item.status, 'REFUSED', `item ${item.index}`);
        assert.match(item.error?.message ?? '', why);
        assert.ok(item.error?.code, `item ${item.index} has a code`);
      } else assert.equal(item.status, 'ACCEPTED', `item ${item.index}: ${JSON.stringify(item.error)}`);
    }
    const sent = lastCall('createLoteCobv')?.request as { cobsv: unknown[] };
    assert.equal(sent.cobsv.length, 996);
    for (const cobv of sent.cobsv) assert.deepEqual(bcbViolations('CobVSolicitada', cobv), []);
    assert.deepEqual(bcbViolations('LoteCobVConsultado', lastCall('getLoteCobv')?.response), []);

    const again = await s.api.request<{ batch: BatchView; idempotent: boolean }>('POST', '/v1/charges/batch', {
      token: m.token,
      headers: { 'x-idempotency-key': key },
      body: { items: [body()] },
    });
    assert.equal(again.status, 200);
    assert.equal(again.body.batch.id, batch.id);
    const read = await s.api.request<{ batch: BatchView }>('GET', `/v1/charge-batches/${batch.id}`, { token: m.token });
    assert.deepEqual(read.body.batch, batch);
    const list = await s.api.request<{ total: number }>('GET', '/v1/charges?type=DUE_DATE&status=PENDING', {
      token: m.token,
    });
    assert.equal(list.body.total, 996);
    const tooMany = await s.api.request('POST', '/v1/charges/batch', {
      token: m.token,
      body: { items: Array.from({ length: 1_001 }, () => ({})) },
    });
    assert.equal(tooMany.status, 400);
  });

  itConformsToTheBcbDocument();
});

interface BatchView {
  id: string;
  status: string;
  total: number;
  accepted: number;
  refused: number;
  items: Array<{
    index: number;
    status: string;
    chargeId: string | null;
    error: { message: string; code: string } | null;
  }>;
}
