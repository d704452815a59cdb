/**
 * Due-date charges at the acquirer (BCB cobv and lotecobv): the client and the simulator exchange
 * bodies that follow the BCB document, and the simulator charges the amount due on the payment
 * date. Expected amounts are worked out here by hand from literal figures, not by the module.
 */
import assert from 'node:assert/strict';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import type { CobvRequest } from '../../src/acquirer/types';
import { startAcquirerSimulator, type RunningSimulator, type SimRoute } from '../../src/acquirer/simulator/server';
import { newTxid } from '../../src/pix/brcode';
import { bcbViolations, itConformsToTheBcbDocument } from '../support/bcb-schema';
import { startReceiver, type Receiver } from './receiver';

const CLIENT = { clientId: 'c1', clientSecret: 's1' };

/** R$ 1,000.00 due 2030-03-10: fine 2 %, interest 1 % a month, R$ 50.00 off until 03-01, 5 % off until 03-05, R$ 10.00 abated. */
const cobvReq = (over: Partial<CobvRequest> = {}): CobvRequest => ({
  txid: newTxid(),
  amount: 100_000,
  key: 'escola@example.com',
  description: 'Mensalidade março',
  debtor: { name: 'Ana Souza', document: '12345678909' },
  rules: {
    dueDate: '2030-03-10',
    validityAfterDue: 30,
    fine: { mode: 'PERCENT', percent: 200 },
    interest: { mode: 'PERCENT_PER_MONTH', percent: 100 },
    discount: {
      mode: 'FIXED_UNTIL',
      until: [
        { date: '2030-03-01', amount: 5_000 },
        { date: '2030-03-05', amount: 2_500 },
      ],
    },
    abatement: { mode: 'FIXED', amount: 1_000 },
  },
  ...over,
});

describe('acquirer: due-date charges (cobv, lotecobv)', () => {
  let receiver: Receiver;
  let sim: RunningSimulator;
  let client: HttpAcquirer;
  const lastCall = (route: SimRoute) => [...sim.control.calls].reverse().find((c) => c.route === route);

  before(async () => {
    receiver = await startReceiver();
    sim = await startAcquirerSimulator({
      callbackSecret: 'x',
      callbackBaseUrl: receiver.url,
      ...CLIENT,
      autoComplete: false,
    });
    client = new HttpAcquirer({ baseUrl: sim.url, ...CLIENT, timeoutMs: 5_000 });
  });
  after(async () => {
    await sim.close();
    await receiver.close();
  });

  it('creates, reads and removes a cobv; every body follows the BCB schemas', async () => {
    const req = cobvReq();
    const cobv = await client.createCobv(req);
    assert.equal(cobv.status, 'ATIVA');
    assert.equal(cobv.amount, 100_000);
    assert.equal(cobv.dueDate, '2030-03-10');
    assert.equal(cobv.validityAfterDue, 30);
    const created = lastCall('createCobv');
    assert.deepEqual(bcbViolations('CobVSolicitada', created?.request), []);
    assert.deepEqual(bcbViolations('CobVGerada', created?.response), []);
    assert.deepEqual((created?.request as { valor: unknown }).valor, {
      original: '1000.00',
      multa: { modalidade: 2, valorPerc: '2.00' },
      juros: { modalidade: 3, valorPerc: '1.00' },
      abatimento: { modalidade: 1, valorPerc: '10.00' },
      desconto: {
        modalidade: 1,
        descontoDataFixa: [
          { data: '2030-03-01', valorPerc: '50.00' },
          { data: '2030-03-05', valorPerc: '25.00' },
        ],
      },
    });
    assert.deepEqual(await client.createCobv(req), cobv, 'a replayed PUT is the same cobv');

    assert.deepEqual((await client.getCobv(req.txid)).pix, []);
    assert.deepEqual(bcbViolations('CobVCompleta', lastCall('getCobv')?.response), []);

    const removed = await client.removeCobv(req.txid);
    assert.equal(removed.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    assert.deepEqual(bcbViolations('CobVRevisada', lastCall('removeCobv')?.request), []);
    assert.deepEqual(bcbViolations('CobVGerada', lastCall('removeCobv')?.response), []);
  });

  it('the payer pays the amount due on the payment date, as the payer bank computes it', async () => {
    // Base after the R$ 10.00 abatement: 990.00.
    const cases: Array<[paidOn: string, expected: number]> = [
      ['2030-02-20', 100_000 - 1_000 - 5_000], // first discount date not passed: 1000 − 10 − 50 = 940.00
      ['2030-03-01', 94_000], // on the first discount date: still 50 off
      ['2030-03-02', 100_000 - 1_000 - 2_500], // second discount: 1000 − 10 − 25 = 965.00
      ['2030-03-10', 99_000], // on the due date: no discount, no fine: 990.00
      // 5 days late: fine 2 % of 990.00 = 19.80; interest 1 %/month × 5/30 of 990.00 = 1.65.
      ['2030-03-15', 99_000 + 1_980 + 165],
      // 30 days late (the last day of validity): interest 1 % of 990.00 = 9.90.
      ['2030-04-09', 99_000 + 1_980 + 990],
    ];
    for (const [paidOn, expected] of cases) {
      const req = cobvReq();
      await client.createCobv(req);
      const { endToEndId } = await sim.control.payCob(req.txid, { paidOn });
      const paid = await client.getCobv(req.txid);
      assert.equal(paid.status, 'CONCLUIDA');
      assert.deepEqual(
        paid.pix.map((p) => [p.endToEndId, p.amount]),
        [[endToEndId, expected]],
        paidOn,
      );
      assert.deepEqual(bcbViolations('CobVCompleta', lastCall('getCobv')?.response), [], paidOn);
    }
    const late = cobvReq();
    await client.createCobv(late);
    await assert.rejects(sim.control.payCob(late.txid, { paidOn: '2030-04-10' }), /past its validity/);
  });

  it('interest per day and percent fine/discount/abatement modalities', async () => {
    const req = cobvReq({
      amount: 20_000,
      rules: {
        dueDate: '2030-05-31',
        validityAfterDue: 10,
        fine: { mode: 'FIXED', amount: 300 },
        interest: { mode: 'AMOUNT_PER_DAY', amount: 7 },
        discount: { mode: 'PERCENT_UNTIL', until: [{ date: '2030-05-20', percent: 1_000 }] },
        abatement: { mode: 'PERCENT', percent: 250 },
      },
    });
    await client.createCobv(req);
    assert.deepEqual(bcbViolations('CobVSolicitada', lastCall('createCobv')?.request), []);
    // 3 days late: 200.00 − 2.5 % (5.00) + 3.00 fine + 3 × 0.07 = 198.21.
    await sim.control.payCob(req.txid, { paidOn: '2030-06-03' });
    assert.equal((await client.getCobv(req.txid)).pix[0]?.amount, 20_000 - 500 + 300 + 21);
    const early = cobvReq({ rules: { ...req.rules }, amount: 20_000 });
    await client.createCobv(early);
    // Before the discount date: 200.00 − 5.00 abated − 10 % of 200.00 = 175.00.
    await sim.control.payCob(early.txid, { paidOn: '2030-05-19' });
    assert.equal((await client.getCobv(early.txid)).pix[0]?.amount, 17_500);
  });

  it('a lotecobv of 1,000 decides each cobv on its own; the bodies follow the BCB schemas', async function () {
    this.timeout(60_000);
    const items = Array.from({ length: 1_000 }, () => cobvReq());
    const batchId = Date.now();
    await client.createCobvBatch(batchId, 'Mensalidades de março', items);
    const sent = lastCall('createLoteCobv');
    assert.equal(sent?.status, 202);
    const body = sent?.request as { descricao: string; cobsv: unknown[] };
    for (const [i, item] of body.cobsv.entries()) {
      if (i % 100 === 0) assert.deepEqual(bcbViolations('CobVSolicitada', item), [], `item ${i}`);
    }
    const outcomes = await client.getCobvBatch(batchId);
    assert.equal(outcomes.length, 1_000);
    assert.ok(outcomes.every((o) => o.status === 'CRIADA'));
    assert.deepEqual(bcbViolations('LoteCobVConsultado', lastCall('getLoteCobv')?.response), []);

    // A txid already taken by another cobv is refused (NEGADA) alone.
    const again = [cobvReq(), { ...cobvReq({ amount: 100_001 }), txid: items[0]?.txid ?? '' }, cobvReq()];
    await client.createCobvBatch(batchId + 1, 'Segunda chamada', again);
    const second = await client.getCobvBatch(batchId + 1);
    assert.deepEqual(
      second.map((o) => o.status),
      ['CRIADA', 'NEGADA', 'CRIADA'],
    );
    assert.match(second[1]?.reason ?? '', /txid/);
    assert.deepEqual(bcbViolations('LoteCobVConsultado', lastCall('getLoteCobv')?.response), []);
  });

  itConformsToTheBcbDocument();
});
