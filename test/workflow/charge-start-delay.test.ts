/**
 * A new charge's workflow costs no workflow task until something happens to the charge
 * (docs/performance.md "Where a charge's time goes"): it is started with a start delay equal to the expiry, so it exists
 * at once (one durable workflow per charge, visible to operators) but its first task is either the
 * expiry or the first signal-with-start (a payment, a cancel), which ends the delay.
 */
import assert from 'node:assert/strict';
import { temporal } from '@temporalio/proto';
import { chargeWorkflowId } from '../../src/temporal/workflow-ids';
import { chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';

const ET = temporal.api.enums.v1.EventType;

interface Charge {
  id: string;
  status: string;
}

describe('charge workflow: started with a start delay', function () {
  this.timeout(120_000);
  let s: ChargesStack;
  let token: string;

  before(async () => {
    s = await chargesStack();
    token = (await readyMerchant(s.api)).token;
  });

  const create = async (expiresIn: number): Promise<Charge> => {
    const res = await s.api.request<{ charge: Charge }>('POST', '/v1/charges', {
      token,
      body: { amount: 2_500, description: 'delayed', expiresIn },
    });
    assert.equal(res.status, 201);
    return res.body.charge;
  };
  const history = async (id: string) =>
    (await s.client.workflow.getHandle(chargeWorkflowId(id)).fetchHistory()).events ?? [];

  it('exists when the 201 is answered, with no workflow task and its first task delayed to the expiry', async () => {
    const charge = await create(3_600);
    const events = await history(charge.id);
    assert.deepEqual(
      events.map((e) => e.eventType),
      [ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED],
    );
    const backoff = events[0]?.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff;
    assert.equal(Number(backoff?.seconds ?? 0), 3_600);
    const described = await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).describe();
    assert.equal(described.status.name, 'RUNNING');
  });

  it('a payment (signal-with-start) brings the first task forward and the charge is paid', async () => {
    const charge = await create(86_400);
    const pay = await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token, body: {} });
    assert.equal(pay.status, 202);
    await eventually(async () => {
      const got = await s.api.request<{ charge: Charge }>('GET', `/v1/charges/${charge.id}`, { token });
      return got.body.charge.status === 'PAID' ? true : undefined;
    }, 'the charge to be paid');
    const types = (await history(charge.id)).map((e) => e.eventType);
    assert.equal(types[1], ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    assert.ok(types.includes(ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED));
  });

  it('with nothing happening, the delayed first task is the expiry: the charge is canceled', async () => {
    const charge = await create(120);
    // The database's clock does not skip with the test server's: the first task (at +2 min) still
    // reads 2 minutes left and sets its own timer, so the expiry lands at +4 min of workflow time.
    await s.env.sleep('10 minutes');
    await eventually(async () => {
      const got = await s.api.request<{ charge: Charge }>('GET', `/v1/charges/${charge.id}`, { token });
      return got.body.charge.status === 'CANCELED' ? true : undefined;
    }, 'the charge to expire');
  });
});
