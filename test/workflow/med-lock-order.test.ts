/**
 * One lock order for a merchant's `blocked` and `fee_revenue` rows in the MED refund paths
 * (docs/operations.md "The money of an infraction"): `failRefund` posts blocked and fee_revenue
 * together, so in kind order; `prepareRefund` must not take fee_revenue before blocked, or two
 * infractions of one merchant deadlock. Shown deterministically: while another transaction holds
 * the merchant's `blocked` row, a waiting `prepareRefund` holds no lock on `fee_revenue`.
 */
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids';
import { createLogger } from '../../src/lib/logger';
import { createInfractionLifecycle } from '../../src/services/med/lifecycle';
import { infractionsStore } from '../../src/stores/infractions';
import { eventually } from '../support/charges';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { medFlows, medStack, type MedStack } from '../support/med';
import { getTestDb } from '../support/db';

describe('MED refund paths: one lock order for blocked and fee_revenue', function () {
  this.timeout(120_000);
  let s: MedStack;
  const flows = medFlows(() => s);
  const knex = () => s.api.knex;

  before(async () => {
    s = await medStack();
  });

  it('prepareRefund waits on blocked without holding fee_revenue', async () => {
    const life = createInfractionLifecycle({
      knex: knex(),
      acquirer: s.acquirer,
      logger: createLogger({ level: 'silent' }),
    });
    const m = await flows.readyMerchant({ feeBps: 500 });
    const charge = await flows.paidCharge(m, { settle: true, amount: 10_000 });
    const row = await infractionsStore(knex()).recordFromAcquirer({
      acquirerId: newId('acqinf'),
      endToEndId: charge.e2eId,
      amount: 10_000,
      reason: 'lock order',
      status: 'OPEN',
    });
    assert.ok(row);
    await life.block(row.id);
    // The acquirer's decision, as its signed callback stores it, then the acceptance.
    await infractionsStore(knex()).recordFromAcquirer({
      acquirerId: row.acquirerInfractionId,
      endToEndId: charge.e2eId,
      amount: 10_000,
      reason: 'lock order',
      status: 'ACCEPTED',
    });
    await life.accept(row.id);

    // The observer holds and probes the rows as the owner role (the service's role locks them only
    // through the ledger's functions).
    const holder = await (await getTestDb()).ownerKnex.transaction();
    let prepared: Promise<unknown> | undefined;
    try {
      await holder('ledger_accounts').where({ merchant_id: m.merchantId, kind: 'blocked' }).forUpdate().first();
      prepared = life.prepareRefund(row.id);
      // prepareRefund is now waiting for the blocked row: one backend waits on a row lock.
      await eventually(async () => {
        const waiting = (await knex().raw(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
        )) as { rows: Array<{ n: number }> };
        return (waiting.rows[0]?.n ?? 0) > 0 ? true : undefined;
      }, 'prepareRefund to wait for the blocked row');
      // NOWAIT: fails at once (55P03) if prepareRefund took fee_revenue before blocked.
      await holder('ledger_accounts')
        .where({ merchant_id: m.merchantId, kind: 'fee_revenue' })
        .forUpdate()
        .noWait()
        .first();
      await holder.commit();
    } catch (err) {
      await holder.rollback();
      throw err;
    } finally {
      await prepared;
    }
    const after = await life.progress(row.id);
    assert.ok(after.refundId, 'the devolução was chosen once the lock was released');
    await assertLedgerInvariant(knex());
  });
});
