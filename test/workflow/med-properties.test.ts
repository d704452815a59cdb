/**
 * MED's money rules under random interleavings (fast-check; docs/operations.md "The money of an infraction"):
 * for one merchant with two paid charges, a random sequence of infractions raised on them, their
 * steps taken in any order and any number of times (a retried activity, a duplicated or reordered
 * callback is the same step again), devoluções confirmed or refused, operator decisions, merchant
 * refunds (carried by the real charge workflow to the simulator) and withdrawals. The steps are the
 * lifecycle service's own functions, which the infraction workflow's activities wrap one to one.
 *
 * After every step: no negative balance, and no payment with more blocked, travelling or returned
 * than was paid. After every infraction is driven to its end: nothing blocked, never more out than
 * in, and the ledger invariant holds.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { newId } from '../../src/lib/ids';
import { createLogger } from '../../src/lib/logger';
import { isAppError } from '../../src/lib/errors';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { createInfractionLifecycle } from '../../src/services/med/lifecycle';
import { infractionsStore } from '../../src/stores/infractions';
import { eventually } from '../support/charges';
import { medFlows, medStack, type MedStack } from '../support/med';
import type { MerchantFixture } from '../support/api';

type Step =
  | { op: 'raise'; charge: number; share: number }
  | { op: 'block' | 'accept' | 'reject' | 'prepare' | 'devolvido' | 'refused'; inf: number }
  | { op: 'decide'; inf: number; action: 'retry' | 'release' }
  | { op: 'merchantRefund'; charge: number; amount: number }
  | { op: 'withdraw'; amount: number };

const infStep = (op: 'block' | 'accept' | 'reject' | 'prepare' | 'devolvido' | 'refused') =>
  fc.record({ op: fc.constant(op), inf: fc.nat(3) });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('raise' as const),
      charge: fc.nat(1),
      share: fc.integer({ min: 1, max: 100 }),
    }),
  },
  { weight: 2, arbitrary: infStep('block') },
  { weight: 2, arbitrary: infStep('accept') },
  infStep('reject'),
  { weight: 2, arbitrary: infStep('prepare') },
  infStep('devolvido'),
  infStep('refused'),
  fc.record({
    op: fc.constant('decide' as const),
    inf: fc.nat(3),
    action: fc.constantFrom('retry' as const, 'release' as const),
  }),
  fc.record({
    op: fc.constant('merchantRefund' as const),
    charge: fc.nat(1),
    amount: fc.integer({ min: 1, max: 6_000 }),
  }),
  fc.record({ op: fc.constant('withdraw' as const), amount: fc.integer({ min: 1, max: 8_000 }) }),
);

describe('MED money under random interleavings (fast-check)', function () {
  this.timeout(600_000);
  let s: MedStack;
  const flows = medFlows(() => s);
  const knex = () => s.api.knex;

  before(async () => {
    s = await medStack();
  });

  const lifecycle = () =>
    createInfractionLifecycle({ knex: knex(), acquirer: s.acquirer, logger: createLogger({ level: 'silent' }) });

  /** Every payment's claims within what was paid; no negative balance. */
  async function assertBounds(m: MerchantFixture, chargeIds: string[]): Promise<void> {
    for (const id of chargeIds) {
      const row = (await knex()
        .select(
          knex().raw(
            `c.amount, c.refunded_amount,
             (select coalesce(sum(amount), 0) from charge_refunds where charge_id = c.id and status = 'REQUESTED' and kind in ('MERCHANT', 'INFRACTION')) as travelling,
             (select coalesce(sum(blocked_amount), 0) from infractions where charge_id = c.id) as blocked`,
          ),
        )
        .from('charges as c')
        .where('c.id', id)
        .first()) as { amount: string; refunded_amount: string; travelling: string; blocked: string };
      const claimed = Number(row.refunded_amount) + Number(row.travelling) + Number(row.blocked);
      assert.ok(
        claimed <= Number(row.amount),
        `charge ${id}: ${claimed} claimed of ${row.amount} (${JSON.stringify(row)})`,
      );
    }
    const negative = await knex()('ledger_accounts')
      .where({ merchant_id: m.merchantId })
      .whereNotIn('kind', ['acquirer', 'adjustments'])
      .where('balance', '<', 0);
    assert.deepEqual(negative, []);
  }

  async function apply(
    step: Step,
    m: MerchantFixture,
    charges: Array<{ id: string; e2eId: string; amount: number }>,
    infs: string[],
  ): Promise<void> {
    const life = lifecycle();
    const inf = 'inf' in step ? infs[step.inf % Math.max(infs.length, 1)] : undefined;
    switch (step.op) {
      case 'raise': {
        const c = charges[step.charge] as { id: string; e2eId: string; amount: number };
        const row = await infractionsStore(knex()).recordFromAcquirer({
          acquirerId: newId('acqinf'),
          endToEndId: c.e2eId,
          amount: Math.max(1, Math.round((c.amount * step.share) / 100)),
          reason: 'property',
          status: 'OPEN',
        });
        if (row) infs.push(row.id);
        return;
      }
      case 'merchantRefund': {
        const c = charges[step.charge] as { id: string };
        await s.charges.refund(m.merchantId, c.id, { amount: step.amount }).catch((err: unknown) => {
          if (!isAppError(err)) throw err;
        });
        return;
      }
      case 'withdraw': {
        const res = await s.api.request('POST', '/v1/merchants/me/withdrawals', {
          token: m.token,
          body: { amount: step.amount, pixKeyType: 'CHAVE_ALEATORIA', pixKey: '123e4567-e89b-42d3-a456-426614174000' },
        });
        assert.ok(res.status === 201 || res.status === 400, JSON.stringify(res.body));
        return;
      }
    }
    if (!inf) return;
    switch (step.op) {
      case 'block':
        await life.block(inf);
        return;
      case 'accept':
        await decide(inf, 'ACCEPTED');
        await life.accept(inf);
        return;
      case 'reject':
        await decide(inf, 'REJECTED');
        await life.reject(inf);
        return;
      case 'prepare':
        await life.prepareRefund(inf);
        return;
      case 'devolvido':
        await life.completeRefund(inf, null);
        return;
      case 'refused':
        await life.failRefund(inf, 'NAO_REALIZADO');
        return;
      case 'decide': {
        // What `ops cases resolve` writes, then the workflow's next step.
        await knex()('infractions')
          .where({ id: inf, operator_action: 'pending' })
          .update({ operator_action: step.action });
        await life.applyOperatorAction(inf);
        return;
      }
    }
  }

  /**
   * The acquirer's decision, as its signed callback stores it on the row (advance only): accepting
   * or rejecting applies only that (docs/architecture.md "Workflows carry intent; activities check facts").
   */
  async function decide(id: string, status: 'ACCEPTED' | 'REJECTED'): Promise<void> {
    const row = await infractionsStore(knex()).find(id);
    if (!row?.e2eId) return;
    await infractionsStore(knex()).recordFromAcquirer({
      acquirerId: row.acquirerInfractionId,
      endToEndId: row.e2eId,
      amount: row.amount,
      reason: row.reason ?? 'property',
      status,
    });
  }

  /** Drives one infraction to its end as the workflow would, with every decision made. */
  async function finish(id: string): Promise<void> {
    const life = lifecycle();
    for (let i = 0; i < 10; i++) {
      const p = await life.progress(id);
      if (p.closed) return;
      if (p.status === 'OPEN') {
        await decide(id, 'ACCEPTED');
        await life.accept(id);
        // The acquirer rejected it earlier: the rejection is what it decided.
        if ((await life.progress(id)).status === 'OPEN') await life.reject(id);
      } else if (p.operatorAction === 'pending') {
        await knex()('infractions').where({ id }).update({ operator_action: 'release' });
        await life.applyOperatorAction(id);
      } else if (p.refundId) await life.completeRefund(id, null);
      else await life.prepareRefund(id);
    }
    assert.fail(`infraction ${id} did not come to an end`);
  }

  it('never a negative balance, never more out than in, nothing blocked once every case closes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 4, maxLength: 24 }), async (steps) => {
        const m = await flows.readyMerchant({ feeBps: 100 });
        const charges = [
          { ...(await flows.paidCharge(m, { settle: true, amount: 6_000 })), amount: 6_000 },
          { ...(await flows.paidCharge(m, { settle: true, amount: 4_000 })), amount: 4_000 },
        ];
        const ids = charges.map((c) => c.id);
        const infs: string[] = [];
        for (const step of steps) {
          await apply(step, m, charges, infs);
          await assertBounds(m, ids);
        }
        for (const id of infs) await finish(id);
        // Merchant refunds travel through the real charge workflow and the simulator.
        await eventually(
          async () =>
            (await knex()('charge_refunds').whereIn('charge_id', ids).where({ status: 'REQUESTED' }).first())
              ? undefined
              : true,
          'every merchant refund settled',
          60_000,
        );
        await assertBounds(m, ids);
        const blocked = await knex()('ledger_accounts').where({ merchant_id: m.merchantId, kind: 'blocked' }).first();
        assert.equal(Number(blocked?.balance ?? 0), 0, 'nothing blocked after every case closed');
        const out = (await knex()('charge_refunds')
          .whereIn('charge_id', ids)
          .where({ status: 'CONFIRMED' })
          .sum({ s: 'amount' })
          .first()) as { s: string | null };
        assert.ok(Number(out.s ?? 0) <= 10_000, `returned ${out.s} of 10,000 paid`);
        const report = await checkLedgerInvariant(knex(), { merchantIds: [m.merchantId] });
        assert.deepEqual(report.violations, []);
      }),
      { numRuns: Number(process.env.MED_PROPERTY_RUNS ?? 25) },
    );
  });
});
