/**
 * `withdrawal-<id>` with stubbed activities (docs/testing.md "Workflow branches with stubbed activities"): the saga's branches on virtual time —
 * the transfer's outcome by callback, by the send itself or by polling on a backoff; the deadline,
 * the operator alert and the escalated wait; the compensations (REJECTED → failed, RETURNED →
 * refunded) and their retries; callbacks that repeat, come in odd orders or start a fresh run after
 * completion. The end-to-end suites are test/workflow/withdrawal-flow.test.ts and
 * withdrawal-runtime.test.ts.
 */
import assert from 'node:assert/strict';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { withdrawalWorkflow } from '../../workflows';
import { ESCALATED_POLL_MS, FIRST_POLL_MS, transferSignal, withdrawalStateQuery } from '../../workflows/withdrawal';
import type { WithdrawalActivities } from '../../activities/withdrawals';
import type {
  TransferNotice,
  WithdrawalSnapshot,
  WithdrawalStatus,
  WithdrawalWorkflowInput,
  WithdrawalWorkflowState,
} from '../../workflows/withdrawal-types';
import { testEnv, type WorkerContext } from '../support/temporal';
import {
  activityTimeouts,
  failure,
  recordCalls,
  replay,
  retryPolicies,
  timersStarted,
  withStubWorker,
  type Recorder,
} from '../support/stub-activities';

const processing: TransferNotice = { status: 'PROCESSING', transferId: 'tr-1' };
const completed: TransferNotice = { status: 'COMPLETED', transferId: 'tr-1' };
const rejected: TransferNotice = { status: 'REJECTED', transferId: 'tr-1', reason: 'conta inexistente' };
const returned: TransferNotice = { status: 'RETURNED', transferId: 'tr-1', reason: 'devolvido pelo recebedor' };

/** A withdrawal in memory, changed by the stubs as the lifecycle service changes the row. */
function withdrawalStubs(
  overrides: Partial<WithdrawalActivities> | ((d: WithdrawalActivities) => Partial<WithdrawalActivities>) = {},
  initial: Partial<WithdrawalSnapshot> = {},
) {
  const snap: WithdrawalSnapshot = {
    id: 'w-1',
    merchantId: 'm-1',
    status: 'PROCESSING',
    amount: 3_000,
    transferId: null,
    batchId: null,
    ...initial,
  };
  const apply = (to: WithdrawalStatus) => {
    const changed = snap.status !== to;
    snap.status = to;
    return { status: to, changed };
  };
  const defaults: WithdrawalActivities = {
    confirmWithdrawalDebit: async () => ({ snapshot: { ...snap }, ledgerTransactionId: 'ltx-1', postedNow: false }),
    loadWithdrawalSnapshot: async () => ({ ...snap }),
    sendWithdrawalTransfer: async () => {
      snap.transferId = 'tr-1';
      return processing;
    },
    checkWithdrawalTransfer: async () => processing,
    completeWithdrawal: async () => apply('COMPLETED'),
    failWithdrawal: async () => apply('FAILED'),
    refundWithdrawal: async () => apply('REFUNDED'),
    raiseWithdrawalAlert: async () => ({ raised: true }),
    reportTransferContradiction: async () => ({ opened: true }),
  };
  const stub = recordCalls<WithdrawalActivities>({
    ...defaults,
    ...(typeof overrides === 'function' ? overrides(defaults) : overrides),
  });
  return { stub, snap };
}

type Outcome = { ok: true; value: WithdrawalWorkflowState } | { ok: false; error: unknown };

async function runWithdrawal(
  stub: Recorder<WithdrawalActivities>,
  drive: (h: WorkflowHandle<typeof withdrawalWorkflow>, ctx: WorkerContext) => Promise<void> = async () => undefined,
  input: Partial<WithdrawalWorkflowInput> = {},
) {
  return withStubWorker(stub.activities, async (ctx) => {
    const handle = await ctx.client.workflow.start(withdrawalWorkflow, {
      taskQueue: ctx.taskQueue,
      workflowId: ctx.workflowId,
      args: [{ withdrawalId: 'w-1', ...input }],
    });
    await drive(handle, ctx);
    const result: Outcome = await handle.result().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    return { result, history: await handle.fetchHistory(), workflowId: handle.workflowId };
  });
}

const until = async (check: () => Promise<boolean>, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const phaseIs = (h: WorkflowHandle<typeof withdrawalWorkflow>, phase: WithdrawalWorkflowState['phase']) =>
  until(
    () =>
      h.query(withdrawalStateQuery).then(
        (s) => s.phase === phase,
        () => false,
      ),
    `phase ${phase}`,
  );

const seconds = (ms: number[]): number[] => ms.map((t) => Math.round(t / 1000));

/** A fresh run started by signal-with-start with a transfer outcome (a callback after the run closed); its result. */
function freshRunWith(stub: { activities: object }, outcome: TransferNotice) {
  return withStubWorker(stub.activities, async ({ client, taskQueue, workflowId }) => {
    const h = await client.workflow.signalWithStart(withdrawalWorkflow, {
      taskQueue,
      workflowId,
      args: [{ withdrawalId: 'w-1' }],
      signal: transferSignal,
      signalArgs: [outcome],
    });
    return h.result();
  });
}

describe('withdrawal workflow (stubbed activities)', function () {
  this.timeout(60_000);

  describe('outcome by callback', () => {
    const cases: Array<[TransferNotice, string, WithdrawalStatus]> = [
      [completed, 'completeWithdrawal', 'COMPLETED'],
      [rejected, 'failWithdrawal', 'FAILED'],
      [returned, 'refundWithdrawal', 'REFUNDED'],
    ];
    for (const [notice, step, status] of cases) {
      it(`${notice.status} while awaiting the result: ${step} → ${status}`, async () => {
        const { stub } = withdrawalStubs();
        const states: WithdrawalWorkflowState[] = [];
        const { result, history } = await runWithdrawal(stub, async (h) => {
          await phaseIs(h, 'awaiting_result');
          states.push(await h.query(withdrawalStateQuery));
          await h.signal(transferSignal, notice);
        });
        assert.deepEqual(states, [{ phase: 'awaiting_result', status: 'PROCESSING', transferId: 'tr-1', polls: 0 }]);
        assert.deepEqual(result, { ok: true, value: { phase: 'done', status, transferId: 'tr-1', polls: 0 } });
        assert.deepEqual(stub.names(), ['confirmWithdrawalDebit', 'sendWithdrawalTransfer', step]);
        if (step === 'failWithdrawal')
          assert.deepEqual(stub.of('failWithdrawal')[0].args, ['w-1', 'conta inexistente']);
        else assert.deepEqual(stub.of(step as keyof WithdrawalActivities & string)[0].args, ['w-1', notice]);
        // The first poll timer was started and cut short by the callback.
        assert.deepEqual(timersStarted(history), [FIRST_POLL_MS]);
      });
    }

    it('a rejection without a reason is failed with the default reason', async () => {
      const { stub } = withdrawalStubs();
      await runWithdrawal(stub, async (h) => h.signal(transferSignal, { status: 'REJECTED', transferId: 'tr-1' }));
      assert.deepEqual(stub.of('failWithdrawal')[0].args, ['w-1', 'rejected by the destination bank']);
    });

    it('a PROCESSING callback is no outcome: the saga keeps waiting, then the COMPLETED one ends it', async () => {
      const { stub } = withdrawalStubs();
      const { result } = await runWithdrawal(stub, async (h) => {
        await phaseIs(h, 'awaiting_result');
        await h.signal(transferSignal, processing);
        await h.signal(transferSignal, completed);
      });
      assert.equal(result.ok && result.value.status, 'COMPLETED');
      assert.deepEqual(stub.names(), ['confirmWithdrawalDebit', 'sendWithdrawalTransfer', 'completeWithdrawal']);
    });

    it('started by the endpoint with its debit: begins at the transfer, and replays', async () => {
      const { stub } = withdrawalStubs();
      const { result, history, workflowId } = await runWithdrawal(
        stub,
        async (h) => {
          await phaseIs(h, 'awaiting_result');
          await h.signal(transferSignal, completed);
        },
        { debit: { ledgerTransactionId: 'ltx-1' } },
      );
      assert.equal(result.ok && result.value.status, 'COMPLETED');
      assert.deepEqual(stub.names(), ['sendWithdrawalTransfer', 'completeWithdrawal']);
      await replay(history, workflowId);
    });

    it('the same callback twice (and a poll racing it) is applied once', async () => {
      const { stub } = withdrawalStubs();
      const { result } = await runWithdrawal(stub, async (h) => {
        await h.signal(transferSignal, completed);
        await h.signal(transferSignal, completed);
      });
      assert.equal(result.ok && result.value.status, 'COMPLETED');
      assert.equal(stub.of('completeWithdrawal').length, 1);
    });

    it('RETURNED while the completion is being applied: completed, then compensated → REFUNDED', async () => {
      let bothSent = false;
      const { stub } = withdrawalStubs((d) => ({
        completeWithdrawal: async (id, n) => {
          await until(async () => bothSent, 'the return callback');
          return d.completeWithdrawal(id, n);
        },
      }));
      const { result } = await runWithdrawal(stub, async (h) => {
        await phaseIs(h, 'awaiting_result');
        await h.signal(transferSignal, completed);
        await until(async () => stub.of('completeWithdrawal').length === 1, 'the completion');
        await h.signal(transferSignal, returned);
        bothSent = true;
      });
      assert.equal(result.ok && result.value.status, 'REFUNDED');
      assert.deepEqual(stub.names().slice(2), ['completeWithdrawal', 'refundWithdrawal']);
    });

    it('RETURNED before COMPLETED (odd order): the return is compensated, the late completion finds nothing to apply', async () => {
      let pending = 0;
      const { stub } = withdrawalStubs((d) => ({
        // The callbacks come in while the send is still answering, so both reach the run together.
        sendWithdrawalTransfer: async (id) => {
          await until(async () => pending >= 2, 'both callbacks');
          return d.sendWithdrawalTransfer(id);
        },
      }));
      const { result } = await runWithdrawal(stub, async (h) => {
        await until(async () => stub.of('sendWithdrawalTransfer').length === 1, 'the send');
        await h.signal(transferSignal, returned);
        await h.signal(transferSignal, completed);
        pending = 2;
      });
      assert.equal(result.ok && result.value.status, 'REFUNDED');
      assert.deepEqual(stub.names(), ['confirmWithdrawalDebit', 'sendWithdrawalTransfer', 'refundWithdrawal']);
    });

    it('a return days after completion starts a fresh run (signal-with-start) that skips the send and compensates', async () => {
      const { stub } = withdrawalStubs({}, { status: 'COMPLETED', transferId: 'tr-1' });
      const result = await freshRunWith(stub, returned);
      assert.deepEqual(result, { phase: 'done', status: 'REFUNDED', transferId: 'tr-1', polls: 0 });
      assert.deepEqual(stub.names(), ['confirmWithdrawalDebit', 'refundWithdrawal']);
    });

    it('a fresh run on a COMPLETED withdrawal with a duplicate COMPLETED callback does nothing', async () => {
      const { stub } = withdrawalStubs({}, { status: 'COMPLETED', transferId: 'tr-1' });
      const result = await freshRunWith(stub, completed);
      assert.deepEqual(result, { phase: 'done', status: 'COMPLETED', transferId: 'tr-1', polls: 0 });
      assert.deepEqual(stub.names(), ['confirmWithdrawalDebit']);
    });

    it('COMPLETED on a FAILED withdrawal (paid twice) changes nothing and is reported for an operator', async () => {
      const { stub } = withdrawalStubs({}, { status: 'FAILED', transferId: 'tr-1' });
      const result = await freshRunWith(stub, completed);
      assert.deepEqual(result, { phase: 'done', status: 'FAILED', transferId: 'tr-1', polls: 0 });
      assert.deepEqual(stub.names(), ['confirmWithdrawalDebit', 'reportTransferContradiction']);
      assert.deepEqual(stub.of('reportTransferContradiction')[0].args, ['w-1', completed]);
    });

    it('REJECTED arriving with the COMPLETED one in a run: the completion stays, the rejection is reported; RETURNED on FAILED is not', async () => {
      let pending = 0;
      const { stub } = withdrawalStubs((d) => ({
        sendWithdrawalTransfer: async (id) => {
          await until(async () => pending >= 2, 'both callbacks');
          return d.sendWithdrawalTransfer(id);
        },
      }));
      const { result, history, workflowId } = await runWithdrawal(stub, async (h) => {
        await until(async () => stub.of('sendWithdrawalTransfer').length === 1, 'the send');
        await h.signal(transferSignal, completed);
        await h.signal(transferSignal, rejected);
        pending = 2;
      });
      assert.equal(result.ok && result.value.status, 'COMPLETED');
      assert.deepEqual(stub.names(), [
        'confirmWithdrawalDebit',
        'sendWithdrawalTransfer',
        'completeWithdrawal',
        'reportTransferContradiction',
      ]);
      assert.deepEqual(stub.of('reportTransferContradiction')[0].args, ['w-1', rejected]);
      await replay(history, workflowId);

      const failed = withdrawalStubs({}, { status: 'FAILED', transferId: 'tr-1' }).stub;
      await withStubWorker(failed.activities, async ({ client, taskQueue, workflowId }) =>
        (
          await client.workflow.signalWithStart(withdrawalWorkflow, {
            taskQueue,
            workflowId,
            args: [{ withdrawalId: 'w-1' }],
            signal: transferSignal,
            signalArgs: [returned],
          })
        ).result(),
      );
      assert.deepEqual(failed.names(), ['confirmWithdrawalDebit']);
    });
  });

  describe('outcome without a callback', () => {
    it('the send itself answers final: applied at once, no wait', async () => {
      const { stub } = withdrawalStubs({ sendWithdrawalTransfer: async () => rejected });
      const { result, history } = await runWithdrawal(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', status: 'FAILED', transferId: 'tr-1', polls: 0 } });
      assert.deepEqual(stub.names(), ['confirmWithdrawalDebit', 'sendWithdrawalTransfer', 'failWithdrawal']);
      assert.deepEqual(timersStarted(history), []);
    });

    it('polls the acquirer after 30 s, doubling, until it answers final', async () => {
      let asked = 0;
      const { stub } = withdrawalStubs({ checkWithdrawalTransfer: async () => (++asked < 3 ? processing : completed) });
      const { result, history } = await runWithdrawal(stub);
      assert.deepEqual(result, {
        ok: true,
        value: { phase: 'done', status: 'COMPLETED', transferId: 'tr-1', polls: 3 },
      });
      assert.deepEqual(seconds(timersStarted(history)), [30, 60, 120]);
      assert.deepEqual(stub.names().slice(2), [
        'checkWithdrawalTransfer',
        'checkWithdrawalTransfer',
        'checkWithdrawalTransfer',
        'completeWithdrawal',
      ]);
    });

    it('a send that failed for good is not the end: the polls ask (and repeat the idempotent send) until the outcome', async () => {
      const { stub } = withdrawalStubs({
        sendWithdrawalTransfer: async () => {
          throw failure('AcquirerRejectedError', 'acquirer answered 503 off-protocol');
        },
        checkWithdrawalTransfer: async () => ({ status: 'COMPLETED', transferId: 'tr-9' }),
      });
      const { result } = await runWithdrawal(stub);
      assert.deepEqual(result, {
        ok: true,
        value: { phase: 'done', status: 'COMPLETED', transferId: 'tr-9', polls: 1 },
      });
      assert.equal(stub.of('sendWithdrawalTransfer').length, 1, 'AcquirerRejectedError is not retried');
    });

    it('a poll that fails is only a missed poll: the next one asks again', async () => {
      let asked = 0;
      const { stub } = withdrawalStubs({
        checkWithdrawalTransfer: async () => {
          if (++asked === 1) throw failure('NotFoundError', 'transfer unknown yet');
          return completed;
        },
      });
      const { result, history } = await runWithdrawal(stub);
      assert.equal(result.ok && result.value.status, 'COMPLETED');
      assert.equal(result.ok && result.value.polls, 2);
      assert.deepEqual(
        stub.of('checkWithdrawalTransfer').map((c) => c.attempt),
        [1, 1],
      );
      assert.deepEqual(seconds(timersStarted(history)), [30, 60]);
    });
  });

  describe('deadline and escalation', () => {
    it('past the deadline: one last question, then an operator alert, then slow polls every 6 hours until the outcome', async () => {
      let asked = 0;
      const { stub } = withdrawalStubs({ checkWithdrawalTransfer: async () => (++asked < 5 ? processing : returned) });
      const { result, history, workflowId } = await runWithdrawal(stub, undefined, { resultDeadlineMs: 100_000 });
      assert.deepEqual(result, {
        ok: true,
        value: { phase: 'done', status: 'REFUNDED', transferId: 'tr-1', polls: 4 },
      });
      // Polls at 30 s and 90 s, the rest of the deadline (10 s), the last question, then 6 hours.
      assert.deepEqual(seconds(timersStarted(history)), [30, 60, 10, ESCALATED_POLL_MS / 1000]);
      assert.deepEqual(stub.names().slice(2), [
        'checkWithdrawalTransfer',
        'checkWithdrawalTransfer',
        'checkWithdrawalTransfer',
        'checkWithdrawalTransfer', // the last question at the deadline
        'raiseWithdrawalAlert',
        'checkWithdrawalTransfer',
        'refundWithdrawal',
      ]);
      assert.deepEqual(stub.of('raiseWithdrawalAlert')[0].args, ['w-1', processing]);
      await replay(history, workflowId);
    });

    it('the last question at the deadline answers final: no alert', async () => {
      let asked = 0;
      const { stub } = withdrawalStubs({ checkWithdrawalTransfer: async () => (++asked < 3 ? processing : completed) });
      const { result, history } = await runWithdrawal(stub, undefined, { resultDeadlineMs: 40_000 });
      assert.equal(result.ok && result.value.status, 'COMPLETED');
      assert.deepEqual(seconds(timersStarted(history)), [30, 10]);
      assert.equal(stub.of('checkWithdrawalTransfer').length, 3);
      assert.deepEqual(stub.of('raiseWithdrawalAlert'), []);
    });

    it('the acquirer cannot be asked at the deadline: the alert names the last thing known', async () => {
      const env = await testEnv();
      const { stub } = withdrawalStubs({
        checkWithdrawalTransfer: async () => {
          throw failure('AcquirerRejectedError', 'acquirer answered 401');
        },
      });
      const { result } = await runWithdrawal(
        stub,
        async (h) => {
          await env.sleep('2 seconds');
          await until(async () => stub.of('raiseWithdrawalAlert').length === 1, 'the alert');
          await h.signal(transferSignal, completed);
        },
        { resultDeadlineMs: 1_000 },
      );
      assert.equal(result.ok && result.value.status, 'COMPLETED');
      assert.deepEqual(stub.of('raiseWithdrawalAlert')[0].args, ['w-1', { status: 'PROCESSING', transferId: 'tr-1' }]);
    });

    it('escalated, the operator settles it at the acquirer: the callback ends the wait', async () => {
      const env = await testEnv();
      const { stub } = withdrawalStubs();
      const states: WithdrawalWorkflowState[] = [];
      const { result } = await runWithdrawal(
        stub,
        async (h) => {
          await phaseIs(h, 'awaiting_result');
          await env.sleep('2 minutes'); // past the 1-minute deadline, well before the 6-hour poll
          await phaseIs(h, 'escalated');
          states.push(await h.query(withdrawalStateQuery));
          await h.signal(transferSignal, rejected);
        },
        { resultDeadlineMs: 60_000 },
      );
      assert.deepEqual(states, [{ phase: 'escalated', status: 'PROCESSING', transferId: 'tr-1', polls: 2 }]);
      assert.equal(result.ok && result.value.status, 'FAILED');
      assert.equal(stub.of('raiseWithdrawalAlert').length, 1);
    });
  });

  describe('policies and failures', () => {
    it('schedules each step with its timeouts and non-retryable types; compensations have no overall limit', async () => {
      const { stub } = withdrawalStubs({ checkWithdrawalTransfer: async () => completed });
      const { history } = await runWithdrawal(stub);
      const timeouts = activityTimeouts(history);
      const policies = retryPolicies(history);
      assert.deepEqual(timeouts.get('confirmWithdrawalDebit'), {
        startToClose: 10_000,
        scheduleToClose: 24 * 3_600_000,
      });
      assert.deepEqual(policies.get('confirmWithdrawalDebit')?.nonRetryableErrorTypes, [
        'NotFoundError',
        'InvariantViolation',
        'InsufficientFundsError',
      ]);
      for (const name of ['sendWithdrawalTransfer', 'checkWithdrawalTransfer']) {
        assert.deepEqual(timeouts.get(name), { startToClose: 30_000, scheduleToClose: 6 * 3_600_000 }, name);
        assert.deepEqual(policies.get(name)?.nonRetryableErrorTypes, ['AcquirerRejectedError', 'NotFoundError'], name);
      }
      // No overall limit: the workflow sets none, and the server records it as unset (0) or, as
      // sdk-java's test server does, as its ten-year default.
      const compensation = timeouts.get('completeWithdrawal');
      assert.equal(compensation?.startToClose, 15_000);
      assert.ok(
        [0, 10 * 365 * 86_400_000].includes(compensation?.scheduleToClose ?? -1),
        String(compensation?.scheduleToClose),
      );
      assert.deepEqual(policies.get('completeWithdrawal')?.nonRetryableErrorTypes, [
        'NotFoundError',
        'InvariantViolation',
      ]);
    });

    it('a compensation failing transiently is retried until it succeeds: the money never stays in transit', async () => {
      let failures = 4;
      const { stub } = withdrawalStubs((d) => ({
        failWithdrawal: async (id, reason) => {
          if (failures-- > 0) throw new Error('could not serialize access (stub)');
          return d.failWithdrawal(id, reason);
        },
      }));
      const { result } = await runWithdrawal(stub, async (h) => h.signal(transferSignal, rejected));
      assert.equal(result.ok && result.value.status, 'FAILED');
      assert.deepEqual(
        stub.of('failWithdrawal').map((c) => c.attempt),
        [1, 2, 3, 4, 5],
      );
    });

    for (const type of ['InsufficientFundsError', 'NotFoundError']) {
      it(`the debit refused with ${type} fails the saga at once, nothing sent`, async () => {
        const { stub } = withdrawalStubs({
          confirmWithdrawalDebit: async () => {
            throw failure(type);
          },
        });
        const { result } = await runWithdrawal(stub);
        const err = !result.ok ? result.error : undefined;
        assert.ok(err instanceof WorkflowFailedError, String(err));
        assert.ok(err.cause instanceof ActivityFailure);
        assert.equal(err.cause.retryState, RetryState.NON_RETRYABLE_FAILURE);
        assert.ok(err.cause.cause instanceof ApplicationFailure);
        assert.equal(err.cause.cause.type, type);
        assert.deepEqual(stub.names(), ['confirmWithdrawalDebit']);
      });
    }

    it('a send slower than its 30 s timeout is retried (idempotent on the withdrawal id)', async () => {
      const env = await testEnv();
      const { stub } = withdrawalStubs((d) => ({
        sendWithdrawalTransfer: async (id) => {
          if (stub.of('sendWithdrawalTransfer').length === 1) await env.sleep('31 seconds');
          return d.sendWithdrawalTransfer(id);
        },
        checkWithdrawalTransfer: async () => completed,
      }));
      const { result } = await runWithdrawal(stub);
      assert.equal(result.ok && result.value.status, 'COMPLETED');
      assert.deepEqual(
        stub.of('sendWithdrawalTransfer').map((c) => c.attempt),
        [1, 2],
      );
    });
  });
});
