/**
 * `infraction-<id>` with stubbed activities (docs/testing.md "Workflow branches with stubbed activities"): the MED workflow's branches on
 * virtual time — the decision by signal or from the database, rejected → unblocked, accepted → the
 * devolução sent and its own outcome asked (a REFUNDED callback only wakes the wait), refused or
 * failed → an operator case, then the operator's retry or release; the block topped up as pending money settles (and when a settlement is overdue);
 * signals in odd orders; retry policies. The end-to-end suite is test/workflow/med.test.ts.
 */
import assert from 'node:assert/strict';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { infractionWorkflow } from '../../workflows';
import { acquirerUpdateSignal, infractionStateQuery, operatorDecidedSignal } from '../../workflows/infraction';
import type { InfractionActivities } from '../../activities/infractions';
import type {
  InfractionProgress,
  InfractionStatus,
  InfractionWorkflowResult,
  MedRefundState,
} from '../../workflows/infraction-types';
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

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * An infraction in memory, changed by the stubs as the lifecycle service changes the row.
 * `settlements` lists, per call of blockInfractionFunds, what becomes blocked and when the next
 * pending money settles (the last entry repeats).
 */
function infractionStubs(
  overrides: Partial<InfractionActivities> | ((d: InfractionActivities) => Partial<InfractionActivities>) = {},
  initial: Partial<InfractionProgress> = {},
  settlements: Array<{ blocked: number; nextSettlementInMs: number | null }> = [
    { blocked: 5_000, nextSettlementInMs: null },
  ],
) {
  const p: InfractionProgress = {
    status: 'OPEN',
    acquirerStatus: 'OPEN',
    amount: 5_000,
    blocked: 0,
    refundId: null,
    closed: false,
    operatorAction: null,
    nextSettlementInMs: null,
    ...initial,
  };
  let blocks = 0;
  let refunds = 0;
  const now = (): InfractionProgress => ({ ...p });
  const defaults: InfractionActivities = {
    forwardInfractionDefense: async () => now(),
    blockInfractionFunds: async () => {
      const s = settlements[Math.min(blocks++, settlements.length - 1)];
      if (!p.closed && p.status !== 'REJECTED' && p.status !== 'REFUNDED') Object.assign(p, s);
      return now();
    },
    rejectInfraction: async () => {
      Object.assign(p, { status: 'REJECTED', blocked: 0, closed: true, nextSettlementInMs: null });
      return now();
    },
    acceptInfraction: async () => {
      p.status = 'ACCEPTED';
      return now();
    },
    prepareInfractionRefund: async () => {
      p.refundId = `med-r-${++refunds}`;
      return now();
    },
    sendMedRefund: async () => ({ status: 'EM_PROCESSAMENTO' }),
    checkMedRefund: async () => ({ status: 'DEVOLVIDO', rtrId: 'rtr-1' }),
    failMedRefund: async () => {
      Object.assign(p, { refundId: null, operatorAction: 'pending' });
      return now();
    },
    reportUnknownMedRefund: async () => now(),
    applyOperatorAction: async () => {
      if (p.operatorAction === 'release') Object.assign(p, { operatorAction: null, blocked: 0, closed: true });
      else if (p.operatorAction === 'retry') p.operatorAction = null;
      return now();
    },
    completeMedRefund: async () => {
      Object.assign(p, { status: 'REFUNDED', closed: true, blocked: 0 });
      return now();
    },
  };
  const stub = recordCalls<InfractionActivities>({
    ...defaults,
    ...(typeof overrides === 'function' ? overrides(defaults) : overrides),
  });
  return { stub, progress: p };
}

type Outcome = { ok: true; value: InfractionWorkflowResult } | { ok: false; error: unknown };

async function runInfraction(
  stub: Recorder<InfractionActivities>,
  drive: (h: WorkflowHandle<typeof infractionWorkflow>, ctx: WorkerContext) => Promise<void> = async () => undefined,
) {
  return withStubWorker(stub.activities, async (ctx) => {
    const handle = await ctx.client.workflow.start(infractionWorkflow, {
      taskQueue: ctx.taskQueue,
      workflowId: ctx.workflowId,
      args: [{ infractionId: 'inf-1' }],
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
const called = (stub: Recorder<InfractionActivities>, name: keyof InfractionActivities & string, times = 1) =>
  until(async () => stub.of(name).length >= times, `${name} to be called`);
/** The first step is done and the workflow waits (its state query answers the progress). */
const opened = (h: WorkflowHandle<typeof infractionWorkflow>) =>
  until(
    () =>
      h.query(infractionStateQuery).then(
        (s) => s !== null,
        () => false,
      ),
    'the infraction to be opened',
  );
const update = (h: WorkflowHandle<typeof infractionWorkflow>, status: InfractionStatus) =>
  h.signal(acquirerUpdateSignal, { status });
const seconds = (ms: number[]): number[] => ms.map((t) => Math.round(t / 1000));
const refunded = { ok: true, value: { status: 'REFUNDED' } };
/** The steps of an infraction accepted, its devolução sent and then confirmed by asking. */
const ACCEPTED_AND_REFUNDED = [
  'blockInfractionFunds',
  'acceptInfraction',
  'prepareInfractionRefund',
  'sendMedRefund',
  'checkMedRefund',
  'completeMedRefund',
];

describe('infraction workflow (stubbed activities)', function () {
  this.timeout(60_000);

  describe('the decision', () => {
    it('rejected by the acquirer: unblocked, REJECTED', async () => {
      const { stub } = infractionStubs();
      const states: Array<InfractionProgress | null> = [];
      const { result, history } = await runInfraction(stub, async (h) => {
        await opened(h);
        states.push(await h.query(infractionStateQuery));
        await update(h, 'REJECTED');
      });
      assert.deepEqual(states[0]?.status, 'OPEN');
      assert.deepEqual(states[0]?.blocked, 5_000);
      assert.deepEqual(result, { ok: true, value: { status: 'REJECTED' } });
      assert.deepEqual(stub.names(), ['blockInfractionFunds', 'rejectInfraction']);
      assert.deepEqual(timersStarted(history), [], 'nothing pending to settle: no timer, only the signal');
    });

    it('accepted: the devolução is prepared and sent, and confirmed by asking after a minute', async () => {
      const { stub } = infractionStubs();
      const { result, history } = await runInfraction(stub, async (h) => {
        await called(stub, 'blockInfractionFunds');
        await update(h, 'ACCEPTED');
      });
      assert.deepEqual(result, refunded);
      assert.deepEqual(stub.names(), ACCEPTED_AND_REFUNDED);
      assert.deepEqual(stub.of('completeMedRefund')[0].args, ['inf-1', 'rtr-1']);
      assert.deepEqual(timersStarted(history), [MINUTE]);
    });

    it('accepted, then the acquirer announces REFUNDED while the devolução is processing: the wait ends and its own outcome is asked', async () => {
      const { stub } = infractionStubs();
      const { result, history } = await runInfraction(stub, async (h) => {
        await update(h, 'ACCEPTED');
        await called(stub, 'sendMedRefund');
        await update(h, 'REFUNDED');
      });
      assert.deepEqual(result, refunded);
      assert.equal(stub.of('checkMedRefund').length, 1, 'completed only on its own devolução, asked once');
      assert.deepEqual(stub.of('completeMedRefund')[0].args, ['inf-1', 'rtr-1']);
      assert.deepEqual(timersStarted(history), [MINUTE]);
    });

    it("the acquirer's REFUNDED while its own devolução was refused: not completed, an operator's case", async () => {
      const { stub, progress } = infractionStubs({
        checkMedRefund: async () => ({ status: 'REFUSED', reason: 'already returned' }),
      });
      const { result } = await runInfraction(stub, async (h) => {
        await update(h, 'ACCEPTED');
        await called(stub, 'sendMedRefund');
        await update(h, 'REFUNDED');
        await called(stub, 'failMedRefund');
        progress.operatorAction = 'release';
        await h.signal(operatorDecidedSignal);
      });
      assert.deepEqual(result, { ok: true, value: { status: 'ACCEPTED' } });
      assert.deepEqual(stub.of('completeMedRefund'), []);
    });

    it('a devolução confirmed by the send itself needs no wait', async () => {
      const { stub } = infractionStubs({ sendMedRefund: async () => ({ status: 'DEVOLVIDO', rtrId: 'rtr-9' }) });
      const { result, history } = await runInfraction(stub, async (h) => update(h, 'ACCEPTED'));
      assert.deepEqual(result, refunded);
      assert.deepEqual(stub.of('completeMedRefund')[0].args, ['inf-1', 'rtr-9']);
      assert.deepEqual(timersStarted(history), []);
    });

    it('still processing: asked after 1, 2, 4 minutes (doubling up to an hour) until DEVOLVIDO', async () => {
      let asked = 0;
      const { stub } = infractionStubs({
        checkMedRefund: async (): Promise<MedRefundState> =>
          ++asked < 3 ? { status: 'EM_PROCESSAMENTO' } : { status: 'DEVOLVIDO', rtrId: 'rtr-3' },
      });
      const { result, history } = await runInfraction(stub, async (h) => update(h, 'ACCEPTED'));
      assert.deepEqual(result, refunded);
      assert.deepEqual(timersStarted(history), [MINUTE, 2 * MINUTE, 4 * MINUTE]);
      assert.deepEqual(stub.of('completeMedRefund')[0].args, ['inf-1', 'rtr-3']);
    });

    for (const stuck of ['REFUSED', 'NAO_REALIZADO'] as const) {
      it(`a devolução ${stuck}: failed into an operator case; the workflow waits (checking hourly) and retries on the decision`, async () => {
        let asked = 0;
        const { stub, progress } = infractionStubs({
          checkMedRefund: async (): Promise<MedRefundState> =>
            ++asked === 1 ? { status: stuck, reason: 'saldo insuficiente' } : { status: 'DEVOLVIDO', rtrId: 'rtr-2' },
        });
        const env = await testEnv();
        const { result, history, workflowId } = await runInfraction(stub, async (h) => {
          await update(h, 'ACCEPTED');
          await called(stub, 'sendMedRefund');
          await env.sleep(2 * MINUTE); // the first ask, a minute after the send
          await called(stub, 'failMedRefund');
          await env.sleep(3 * HOUR); // the hourly checks find no decision
          assert.deepEqual(stub.of('prepareInfractionRefund').length, 1);
          progress.operatorAction = 'retry';
          await h.signal(operatorDecidedSignal);
        });
        assert.deepEqual(result, refunded);
        assert.deepEqual(
          stub.of('failMedRefund').map((c) => c.args),
          [['inf-1', 'saldo insuficiente']],
        );
        assert.equal(stub.of('prepareInfractionRefund').length, 2, 'a new devolução after the retry');
        assert.deepEqual(stub.of('completeMedRefund')[0].args, ['inf-1', 'rtr-2']);
        assert.ok(
          timersStarted(history).filter((t) => t === HOUR).length >= 3,
          'the wait for the operator has a timeout',
        );
        await replay(history, workflowId);
      });
    }

    it('a refused devolução without a reason is failed with its status; release closes it without refund', async () => {
      const { stub, progress } = infractionStubs({ sendMedRefund: async () => ({ status: 'REFUSED' }) });
      const { result } = await runInfraction(stub, async (h) => {
        await update(h, 'ACCEPTED');
        await called(stub, 'failMedRefund');
        progress.operatorAction = 'release';
        await h.signal(operatorDecidedSignal);
      });
      assert.deepEqual(stub.of('failMedRefund')[0].args, ['inf-1', 'REFUSED']);
      assert.deepEqual(result, { ok: true, value: { status: 'ACCEPTED' } });
      assert.deepEqual(stub.of('completeMedRefund'), []);
    });

    it('a decision made with no Temporal client to wake the run is found on the hourly check', async () => {
      const { stub, progress } = infractionStubs(
        { sendMedRefund: async () => ({ status: 'REFUSED' }) },
        { acquirerStatus: 'ACCEPTED' },
      );
      const env = await testEnv();
      const { result, history } = await runInfraction(stub, async () => {
        await called(stub, 'failMedRefund');
        progress.operatorAction = 'release';
        await env.sleep(HOUR + MINUTE);
      });
      assert.deepEqual(result, { ok: true, value: { status: 'ACCEPTED' } });
      assert.ok(timersStarted(history).includes(HOUR));
    });

    it('a fresh run on an infraction whose case waits for an operator waits too, then applies the decision', async () => {
      const { stub, progress } = infractionStubs(
        {},
        { status: 'ACCEPTED', acquirerStatus: 'ACCEPTED', operatorAction: 'pending', blocked: 5_000 },
      );
      const { result } = await runInfraction(stub, async (h) => {
        await called(stub, 'blockInfractionFunds');
        progress.operatorAction = 'retry';
        await h.signal(operatorDecidedSignal);
      });
      assert.deepEqual(result, refunded);
      assert.deepEqual(stub.names(), [
        'blockInfractionFunds',
        'applyOperatorAction',
        'prepareInfractionRefund',
        'sendMedRefund',
        'checkMedRefund',
        'completeMedRefund',
      ]);
    });
  });

  describe('decisions from the database and fresh runs', () => {
    it('the callback handler already stored ACCEPTED (a run restarted by the reconciler): no signal needed', async () => {
      const { stub } = infractionStubs({}, { acquirerStatus: 'ACCEPTED' });
      const { result } = await runInfraction(stub);
      assert.deepEqual(result, refunded);
      assert.deepEqual(stub.names().slice(0, 2), ['blockInfractionFunds', 'acceptInfraction']);
    });

    it('stored REJECTED: rejected at once', async () => {
      const { stub } = infractionStubs({}, { acquirerStatus: 'REJECTED' });
      const { result } = await runInfraction(stub);
      assert.deepEqual(result, { ok: true, value: { status: 'REJECTED' } });
      assert.deepEqual(stub.names(), ['blockInfractionFunds', 'rejectInfraction']);
    });

    for (const initial of [
      { status: 'REJECTED' as const, closed: true },
      { status: 'REFUNDED' as const, closed: true },
      { status: 'ACCEPTED' as const, closed: true },
    ]) {
      it(`a fresh run on a finished infraction (${initial.status}, closed) ends at once`, async () => {
        const { stub } = infractionStubs({}, initial);
        const { result } = await runInfraction(stub);
        assert.deepEqual(result, { ok: true, value: { status: initial.status } });
        assert.deepEqual(stub.names(), ['blockInfractionFunds']);
      });
    }

    it('a fresh run on an accepted infraction whose devolução was already chosen resumes at the send', async () => {
      const { stub } = infractionStubs(
        {},
        { status: 'ACCEPTED', acquirerStatus: 'ACCEPTED', refundId: 'med-r-1', blocked: 5_000 },
      );
      const { result } = await runInfraction(stub);
      assert.deepEqual(result, refunded);
      assert.deepEqual(stub.names(), ['blockInfractionFunds', 'sendMedRefund', 'checkMedRefund', 'completeMedRefund']);
    });
  });

  describe('signals in odd orders', () => {
    it('REFUNDED announced before ACCEPTED: accepted, devolução sent, completed; the late ACCEPTED changes nothing', async () => {
      const { stub } = infractionStubs();
      const { result } = await runInfraction(stub, async (h) => {
        await called(stub, 'blockInfractionFunds');
        await update(h, 'REFUNDED');
        await update(h, 'ACCEPTED');
      });
      assert.deepEqual(result, refunded);
      assert.deepEqual(stub.names(), ACCEPTED_AND_REFUNDED);
    });

    it('REJECTED then ACCEPTED (same rank): the first decision stands', async () => {
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      // Both signals reach the run while its first step is still running.
      const { stub } = infractionStubs((d) => ({
        blockInfractionFunds: async (id) => {
          await gate;
          return d.blockInfractionFunds(id);
        },
      }));
      const { result } = await runInfraction(stub, async (h) => {
        await called(stub, 'blockInfractionFunds');
        await update(h, 'REJECTED');
        await update(h, 'ACCEPTED');
        release();
      });
      assert.deepEqual(result, { ok: true, value: { status: 'REJECTED' } });
      assert.deepEqual(stub.names(), ['blockInfractionFunds', 'rejectInfraction']);
    });

    it('an OPEN update is no decision', async () => {
      const { stub } = infractionStubs();
      const { result } = await runInfraction(stub, async (h) => {
        await called(stub, 'blockInfractionFunds');
        await update(h, 'OPEN');
        await update(h, 'REJECTED');
      });
      assert.deepEqual(result, { ok: true, value: { status: 'REJECTED' } });
    });
  });

  describe('topping up the block as pending money settles', () => {
    it('while OPEN: blocks again 5 s after each settlement, until the whole amount is blocked', async () => {
      const env = await testEnv();
      const { stub } = infractionStubs({}, {}, [
        { blocked: 1_000, nextSettlementInMs: HOUR },
        { blocked: 3_000, nextSettlementInMs: 2 * HOUR },
        { blocked: 5_000, nextSettlementInMs: null },
      ]);
      const { result, history } = await runInfraction(stub, async (h) => {
        await env.sleep(4 * HOUR);
        await called(stub, 'blockInfractionFunds', 3);
        await update(h, 'REJECTED');
      });
      assert.deepEqual(result, { ok: true, value: { status: 'REJECTED' } });
      assert.deepEqual(seconds(timersStarted(history)), [3_605, 7_205]);
      assert.deepEqual(stub.names(), [
        'blockInfractionFunds',
        'blockInfractionFunds',
        'blockInfractionFunds',
        'rejectInfraction',
      ]);
    });

    it('an overdue settlement (its charge workflow has not moved it yet) is checked again after 1, 2, 4 minutes', async () => {
      const env = await testEnv();
      const { stub } = infractionStubs({}, {}, [
        { blocked: 1_000, nextSettlementInMs: -1 },
        { blocked: 1_000, nextSettlementInMs: 0 },
        { blocked: 1_000, nextSettlementInMs: -5 },
        { blocked: 5_000, nextSettlementInMs: null },
      ]);
      const { history } = await runInfraction(stub, async (h) => {
        await env.sleep(10 * MINUTE);
        await called(stub, 'blockInfractionFunds', 4);
        await update(h, 'REJECTED');
      });
      assert.deepEqual(seconds(timersStarted(history)), [60, 120, 240]);
    });

    it('accepted with money still missing: waits for the next settlement before choosing the devolução', async () => {
      const { stub } = infractionStubs({}, {}, [
        { blocked: 2_000, nextSettlementInMs: HOUR },
        { blocked: 5_000, nextSettlementInMs: null },
      ]);
      const { result, history, workflowId } = await runInfraction(stub, async (h) => {
        await opened(h);
        await update(h, 'ACCEPTED');
      });
      assert.deepEqual(result, refunded);
      assert.deepEqual(stub.names().slice(0, 4), [
        'blockInfractionFunds',
        'acceptInfraction',
        'blockInfractionFunds',
        'prepareInfractionRefund',
      ]);
      // The open wait (cut by the decision), the accepted wait for the settlement, then the devolução's minute.
      assert.deepEqual(seconds(timersStarted(history)), [3_605, 3_605, 60]);
      await replay(history, workflowId);
    });

    it("accepted with money missing: the acquirer's REFUNDED does not cut the top-up wait short; the devolução is its own", async () => {
      const { stub } = infractionStubs({}, {}, [
        { blocked: 2_000, nextSettlementInMs: 24 * HOUR },
        { blocked: 5_000, nextSettlementInMs: null },
      ]);
      const { result, history } = await runInfraction(stub, async (h) => {
        await update(h, 'ACCEPTED');
        await called(stub, 'acceptInfraction');
        await update(h, 'REFUNDED');
      });
      assert.deepEqual(result, refunded);
      assert.deepEqual(seconds(timersStarted(history)).slice(0, 1), [24 * 3600 + 5]);
      assert.deepEqual(stub.of('checkMedRefund').length, 1);
    });
  });

  describe('policies and failures', () => {
    it('database steps: 15 s per attempt for a day, NotFoundError and InvariantViolation final; acquirer calls: 30 s for 6 hours', async () => {
      const { stub } = infractionStubs();
      const { history } = await runInfraction(stub, async (h) => update(h, 'ACCEPTED'));
      const timeouts = activityTimeouts(history);
      const policies = retryPolicies(history);
      for (const name of ['blockInfractionFunds', 'acceptInfraction', 'prepareInfractionRefund', 'completeMedRefund']) {
        assert.deepEqual(timeouts.get(name), { startToClose: 15_000, scheduleToClose: 24 * HOUR }, name);
        assert.deepEqual(policies.get(name)?.nonRetryableErrorTypes, ['NotFoundError', 'InvariantViolation'], name);
      }
      for (const name of ['sendMedRefund', 'checkMedRefund']) {
        assert.deepEqual(timeouts.get(name), { startToClose: 30_000, scheduleToClose: 6 * HOUR }, name);
        assert.deepEqual(policies.get(name)?.nonRetryableErrorTypes, ['AcquirerRejectedError', 'NotFoundError'], name);
      }
    });

    it('a transient failure of a ledger step is retried until it succeeds', async () => {
      let failures = 3;
      const { stub } = infractionStubs((d) => ({
        rejectInfraction: async (id) => {
          if (failures-- > 0) throw new Error('deadlock detected (stub)');
          return d.rejectInfraction(id);
        },
      }));
      const { result } = await runInfraction(stub, async (h) => update(h, 'REJECTED'));
      assert.deepEqual(result, { ok: true, value: { status: 'REJECTED' } });
      assert.deepEqual(
        stub.of('rejectInfraction').map((c) => c.attempt),
        [1, 2, 3, 4],
      );
    });

    it('the ledger refusing the block (InvariantViolation) fails the run at once', async () => {
      const { stub } = infractionStubs({
        blockInfractionFunds: async () => {
          throw failure('InvariantViolation', 'blocked would exceed available');
        },
      });
      const { result } = await runInfraction(stub);
      const err = !result.ok ? result.error : undefined;
      assert.ok(err instanceof WorkflowFailedError, String(err));
      assert.ok(err.cause instanceof ActivityFailure);
      assert.equal(err.cause.retryState, RetryState.NON_RETRYABLE_FAILURE);
      assert.ok(err.cause.cause instanceof ApplicationFailure);
      assert.equal(err.cause.cause.type, 'InvariantViolation');
      assert.equal(stub.calls.length, 1);
    });

    it('the acquirer refusing the devolução request for good (AcquirerRejectedError): not retried, the outcome unknown — in transit with a case, asked again, never refused by guess', async () => {
      let refusals = 1;
      const { stub } = infractionStubs((d) => ({
        sendMedRefund: async (id) => {
          if (refusals-- > 0) throw failure('AcquirerRejectedError', 'acquirer answered 401');
          return d.sendMedRefund(id);
        },
      }));
      const { result } = await runInfraction(stub, async (h) => update(h, 'ACCEPTED'));
      assert.deepEqual(result, refunded);
      assert.deepEqual(stub.names(), [
        'blockInfractionFunds',
        'acceptInfraction',
        'prepareInfractionRefund',
        'sendMedRefund',
        'reportUnknownMedRefund',
        'sendMedRefund',
        'checkMedRefund',
        'completeMedRefund',
      ]);
      assert.equal(stub.of('sendMedRefund')[0].attempt, 1, 'not retried');
      assert.match(String(stub.of('reportUnknownMedRefund')[0].args[1]), /^could not be asked: .*401/);
      assert.deepEqual(stub.of('failMedRefund'), []);
    });

    it('an acquirer outage while asking is retried on the acquirer backoff', async () => {
      let failures = 2;
      const { stub } = infractionStubs((d) => ({
        checkMedRefund: async (id) => {
          if (failures-- > 0) throw new Error('connect ECONNREFUSED (stub)');
          return d.checkMedRefund(id);
        },
      }));
      const { result } = await runInfraction(stub, async (h) => update(h, 'ACCEPTED'));
      assert.deepEqual(result, refunded);
      assert.deepEqual(
        stub.of('checkMedRefund').map((c) => c.attempt),
        [1, 2, 3],
      );
    });
  });
});
