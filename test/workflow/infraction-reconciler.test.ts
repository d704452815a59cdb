/**
 * The infraction reconciler walks every open infraction in keyset pages (src/lib/keyset.ts), not
 * only the oldest page: with pages of two, three lost workflows sharing one creation instant (to
 * the microsecond) are all restarted — once each, none skipped, none repeated forever.
 */
import assert from 'node:assert/strict';
import { createLogger } from '../../src/lib/logger';
import { reconcileInfractionWorkflows } from '../../src/services/med/reconciler';
import { infractionWorkflowId } from '../../src/temporal/workflow-ids';
import { eventually, readyMerchant } from '../support/charges';
import { medStack, type MedStack } from '../support/med';
import { endRun } from '../support/temporal';

describe('infraction reconciler', function () {
  this.timeout(120_000);
  let s: MedStack;

  before(async () => {
    s = await medStack();
  });

  async function paidCharge(token: string): Promise<string> {
    const created = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token,
      body: { amount: 1_000, description: 'Pedido' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.charge.id;
    assert.equal((await s.api.request('POST', `/v1/sandbox/charges/${id}/pay`, { token, body: {} })).status, 202);
    await eventually(
      async () => ((await s.api.knex('charges').where({ id }).first())?.status === 'PAID' ? true : undefined),
      'PAID',
    );
    return id;
  }

  it('restarts every lost workflow of open infractions, across pages, ties in created_at included', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const chargeId = await paidCharge(m.token);
      const res = await s.api.request<{ infraction: { id: string } }>('POST', '/v1/sandbox/infractions', {
        token: m.token,
        body: { chargeId },
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      ids.push(res.body.infraction.id);
    }
    const handle = (id: string) => s.client.workflow.getHandle(infractionWorkflowId(id));
    const lostRuns = new Map<string, string>();
    for (const id of ids) {
      const run = await eventually(
        async () =>
          handle(id)
            .describe()
            .catch(() => undefined),
        `workflow of ${id}`,
      );
      lostRuns.set(id, run.runId);
      await endRun(s.client, infractionWorkflowId(id), undefined, 'simulating a lost workflow');
    }
    // One instant for all three, with microseconds: the keyset must order ties by id.
    await s.api
      .knex('infractions')
      .whereIn('id', ids)
      .update({ created_at: s.api.knex.raw(`date_trunc('second', now()) + interval '123456 microseconds'`) });

    const started = await reconcileInfractionWorkflows({
      knex: s.api.knex,
      workflows: s.infractions,
      logger: createLogger({ level: 'silent' }),
      batchSize: 2,
    });
    const open = Number((await s.api.knex('infractions').whereNull('closed_at').count({ n: '*' }).first())?.n ?? 0);
    assert.equal(started, open, 'one start per open infraction');
    for (const id of ids) {
      const restored = await handle(id).describe();
      assert.equal(restored.status.name, 'RUNNING', id);
      assert.notEqual(restored.runId, lostRuns.get(id), id);
    }
  });
});
