/**
 * `subscription-<id>` with stubbed activities (docs/testing.md "Workflow branches with stubbed
 * activities"): the approval wait's wake-ups, on virtual time. The end-to-end suites are
 * test/workflow/subscription-flow.test.ts and test/workflow/billing-money.test.ts.
 */
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { subscriptionWorkflow } from '../../workflows';
import { lookAgainSignal } from '../../workflows/subscription';
import type { SubscriptionActivities } from '../../activities/subscriptions';
import { recordCalls, withStubWorker } from '../support/stub-activities';

const { EventType } = temporal.api.enums.v1;
/** A first cycle far beyond any skipped clock of the run: the approval window never closes here. */
const FAR_FIRST_DATE = '2999-01-01';

describe('subscription workflow (stubbed activities)', function () {
  this.timeout(60_000);

  it("a payer's approval landing while the rec is read is looked at at once, not after the 6-hour poll", async () => {
    // The run's handle, once started: the stubbed read signals through it.
    let started!: (h: WorkflowHandle<typeof subscriptionWorkflow>) => void;
    const run = new Promise<WorkflowHandle<typeof subscriptionWorkflow>>((resolve) => (started = resolve));
    let reads = 0;
    const stub = recordCalls<SubscriptionActivities>({
      // The first read finds the rec still pending; the callback's signal reaches the run before
      // that read's answer does. The second read finds it decided.
      subscriptionSyncWithRec: async () => {
        reads++;
        if (reads === 1) {
          await (await run).signal(lookAgainSignal);
          return { status: 'PENDING_APPROVAL', firstDate: FAR_FIRST_DATE };
        }
        return { status: 'REFUSED', firstDate: FAR_FIRST_DATE };
      },
    });
    const history = await withStubWorker(stub.activities, async ({ client, taskQueue, workflowId }) => {
      const handle = await client.workflow.start(subscriptionWorkflow, {
        taskQueue,
        workflowId,
        args: [{ subscriptionId: 'sub-1' }],
      });
      started(handle);
      assert.deepEqual(await handle.result(), { status: 'REFUSED', lastCycle: 0 });
      return handle.fetchHistory();
    });
    assert.deepEqual(stub.names(), ['subscriptionSyncWithRec', 'subscriptionSyncWithRec']);
    // Without the kept callback the run slept out its poll (a timer fired) before reading again.
    const fired = (history.events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED);
    assert.equal(fired.length, 0, 'the run waited for its poll instead of looking again at once');
  });
});
