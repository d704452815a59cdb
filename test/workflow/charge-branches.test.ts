/**
 * `charge-<id>` with stubbed activities (docs/testing.md "Workflow branches with stubbed activities"): every branch of the charge workflow on
 * virtual time — payment and settlement, expiry (asking the acquirer first), cancellation, a payment
 * that beat the cob's removal, late and duplicate payments, parking, refunds sent, confirmed by
 * callback or by polling, parked, and continued as new — with the retry policies each activity is
 * scheduled with. The stubs keep a tiny charge in memory, changed as the real services would change
 * the row, so `loadChargeSnapshot` answers what the workflow's last step did. The end-to-end suites
 * are test/workflow/charge-flow.test.ts and charge-runtime.test.ts.
 */
import assert from 'node:assert/strict';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { chargeWorkflow } from '../../workflows';
import {
  askAcquirerSignal,
  cancelRequestedSignal,
  chargeStateQuery,
  EXPIRY_ASKS_PER_RUN,
  EXPIRY_MAX_WAIT_MS,
  paymentReceivedSignal,
  refundRequestedSignal,
  refundSettledSignal,
} from '../../workflows/charge';
import type { ChargeActivities } from '../../activities/charges';
import type { ChargeSnapshot, ChargeWorkflowState, PaymentNotice } from '../../workflows/charge-types';
import { testEnv } from '../support/temporal';
import {
  activityTimeouts,
  continuedAsNew,
  replay,
  failure,
  recordCalls,
  retryPolicies,
  timersStarted,
  withStubWorker,
  type Recorder,
  type StubContext,
} from '../support/stub-activities';
import type { WorkerContext } from '../support/temporal';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const EXPIRES_IN = 15 * MINUTE;
const SETTLES_IN = 24 * HOUR;

const notice = (endToEndId: string, amount = 10_000): PaymentNotice => ({
  endToEndId,
  txid: 'txid-1',
  amount,
  paidAt: '2026-01-01T12:00:00Z',
  payer: { name: 'João Pagador', document: '12345678909' },
});

/** A charge in memory, changed by the stubs as the real services change the row. */
function chargeStubs(
  overrides: Partial<ChargeActivities> | ((defaults: ChargeActivities) => Partial<ChargeActivities>) = {},
  initial: Partial<ChargeSnapshot> = {},
) {
  const snap: ChargeSnapshot = {
    id: 'ch-1',
    merchantId: 'm-1',
    status: 'PENDING',
    txid: 'txid-1',
    amount: 10_000,
    expiresInMs: EXPIRES_IN,
    settlesInMs: null,
    settled: false,
    openRefundIds: [],
    ...initial,
  };
  let paidBy: string | null = null;
  const defaults: ChargeActivities = {
    loadChargeSnapshot: async () => ({ ...snap, openRefundIds: [...snap.openRefundIds] }),
    recordPayment: async (_chargeId, n) => {
      if (paidBy === n.endToEndId) return { kind: 'duplicate' };
      if (snap.status !== 'PENDING') {
        const refundId = `refund-${n.endToEndId}`;
        snap.openRefundIds.push(refundId);
        return { kind: 'not_payable', refundId };
      }
      paidBy = n.endToEndId;
      snap.status = 'PAID';
      snap.settlesInMs = SETTLES_IN;
      return { kind: 'paid' };
    },
    parkPayment: async () => undefined,
    paymentsAtAcquirer: async () => [],
    expireCharge: async () => {
      if (snap.status !== 'PENDING') return { kind: 'not_pending' };
      snap.status = 'CANCELED';
      return { kind: 'canceled' };
    },
    removeCob: async () => [],
    settleCharge: async () => {
      snap.settled = true;
    },
    sendRefund: async () => ({ settled: null }),
    checkRefund: async () => null,
    settleRefund: async (r) => {
      snap.openRefundIds = snap.openRefundIds.filter((id) => id !== r.refundId);
      if (r.outcome === 'CONFIRMED' && snap.status === 'PAID') snap.status = 'REFUNDED';
    },
    parkRefund: async (refundId) => {
      snap.openRefundIds = snap.openRefundIds.filter((id) => id !== refundId);
    },
    openExpiryCase: async () => undefined,
    closeExpiryCase: async () => undefined,
  };
  const stub = recordCalls<ChargeActivities>({
    ...defaults,
    ...(typeof overrides === 'function' ? overrides(defaults) : overrides),
  });
  return { stub, snap };
}

type Outcome = { ok: true; value: ChargeWorkflowState } | { ok: false; error: unknown };
const settle = (p: Promise<ChargeWorkflowState>): Promise<Outcome> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

/** Starts `charge-<id>` on a worker with the stubs, lets `drive` signal it, then awaits the result. */
async function runCharge(
  stub: Recorder<ChargeActivities>,
  drive: (h: WorkflowHandle<typeof chargeWorkflow>, ctx: WorkerContext) => Promise<void> = async () => undefined,
) {
  return withStubWorker(stub.activities, async (ctx) => {
    const handle = await ctx.client.workflow.start(chargeWorkflow, {
      taskQueue: ctx.taskQueue,
      workflowId: ctx.workflowId,
      args: [{ chargeId: 'ch-1' }],
    });
    await drive(handle, ctx);
    const result = await settle(handle.result());
    return { result, handle, history: await handle.fetchHistory(), taskQueue: ctx.taskQueue, client: ctx.client };
  });
}

/** Names of the calls, without the snapshot reads between steps. */
const steps = (stub: Recorder<ChargeActivities>): string[] => stub.names().filter((n) => n !== 'loadChargeSnapshot');

/** Starts `charge-ch-1` by its payment (signal-with-start), as the acquirer's callback does. */
function startedByPayment(ctx: StubContext, payment: PaymentNotice) {
  return ctx.client.workflow.signalWithStart(chargeWorkflow, {
    taskQueue: ctx.taskQueue,
    workflowId: ctx.workflowId,
    args: [{ chargeId: 'ch-1' }],
    signal: paymentReceivedSignal,
    signalArgs: [payment],
  });
}

/** recordPayment as the real activity answers: the outcome with the charge as the payment left it. */
const answeringWithTheCharge = (d: ChargeActivities): Partial<ChargeActivities> => ({
  recordPayment: async (id, n) => ({ ...(await d.recordPayment(id, n)), snapshot: await d.loadChargeSnapshot(id) }),
});

describe('charge workflow (stubbed activities)', function () {
  this.timeout(60_000);

  describe('payment and settlement', () => {
    it('paid: the payment is recorded, the net settles after the delay on a durable timer, done', async () => {
      const { stub } = chargeStubs();
      const states: ChargeWorkflowState[] = [];
      const { result, history, handle } = await runCharge(stub, async (h) => {
        await ready(h);
        states.push(await h.query(chargeStateQuery));
        await h.signal(paymentReceivedSignal, notice('E1'));
        await waitFor(async () => (await h.query(chargeStateQuery)).phase === 'awaiting_settlement');
        states.push(await h.query(chargeStateQuery));
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(states, [
        { phase: 'awaiting_payment', chargeStatus: 'PENDING', openRefunds: [] },
        { phase: 'awaiting_settlement', chargeStatus: 'PAID', openRefunds: [] },
      ]);
      assert.deepEqual(steps(stub), ['recordPayment', 'settleCharge']);
      assert.deepEqual(stub.of('recordPayment')[0].args, ['ch-1', notice('E1')]);
      // The expiry timer, then the settlement timer of one day from when the payment was seen.
      assert.deepEqual(seconds(timersStarted(history)), [EXPIRES_IN / 1000, SETTLES_IN / 1000]);
      await replay(history, handle.workflowId); // deterministic: the recorded history replays on a fresh worker
    });

    it('a payment answered with the charge as it left it is not followed by a read: one activity fewer per payment', async () => {
      const { stub } = chargeStubs(answeringWithTheCharge);
      const { result, history, handle } = await runCharge(stub, async (h) => {
        await ready(h);
        await h.signal(paymentReceivedSignal, notice('E1'));
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      // The read at the start, then the payment and the settlement: no read between them.
      assert.deepEqual(stub.names().slice(0, 3), ['loadChargeSnapshot', 'recordPayment', 'settleCharge']);
      // The settlement deadline still comes from the snapshot the payment answered with.
      assert.deepEqual(seconds(timersStarted(history)), [EXPIRES_IN / 1000, SETTLES_IN / 1000]);
      await replay(history, handle.workflowId);
    });

    it('a run started by its payment (signal-with-start) records it before any read, and replays', async () => {
      const { stub } = chargeStubs(answeringWithTheCharge);
      const { result, history, workflowId } = await withStubWorker(stub.activities, async (ctx) => {
        const h = await startedByPayment(ctx, notice('E1'));
        return { result: await h.result(), history: await h.fetchHistory(), workflowId: ctx.workflowId };
      });
      assert.deepEqual(result, { phase: 'done', chargeStatus: 'PAID', openRefunds: [] });
      // The payment is the run's first activity; the charge comes with its outcome.
      assert.deepEqual(stub.names().slice(0, 2), ['recordPayment', 'settleCharge']);
      assert.deepEqual(stub.of('recordPayment')[0].args, ['ch-1', notice('E1')]);
      await replay(history, workflowId);
    });

    it('a payment signalled twice (a repeated callback) is recorded as a duplicate: no refund, one settlement', async () => {
      const { stub } = chargeStubs();
      const { result } = await runCharge(stub, async (h) => {
        await h.signal(paymentReceivedSignal, notice('E1'));
        await h.signal(paymentReceivedSignal, notice('E1'));
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['recordPayment', 'recordPayment', 'settleCharge']);
    });

    it('a second payment by another payer goes back to them: the refund recordPayment names is sent and confirmed', async () => {
      const { stub } = chargeStubs({
        sendRefund: async (refundId) => ({ settled: { refundId, outcome: 'CONFIRMED' } }),
      });
      const { result } = await runCharge(stub, async (h) => {
        await h.signal(paymentReceivedSignal, notice('E1'));
        await h.signal(paymentReceivedSignal, notice('E2'));
      });
      assert.equal(result.ok, true);
      assert.deepEqual(steps(stub), ['recordPayment', 'recordPayment', 'sendRefund', 'settleRefund', 'settleCharge']);
      assert.deepEqual(stub.of('sendRefund')[0].args, ['refund-E2']);
    });

    it('a transient database failure of recordPayment is retried (the payment is never dropped)', async () => {
      let failures = 2;
      const { stub } = chargeStubs((d) => ({
        recordPayment: async (...args) => {
          if (failures-- > 0) throw new Error('connection terminated (stub)');
          return d.recordPayment(...args);
        },
      }));
      const { result } = await runCharge(stub, async (h) => h.signal(paymentReceivedSignal, notice('E1')));
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(
        stub.of('recordPayment').map((c) => c.attempt),
        [1, 2, 3],
      );
      assert.deepEqual(stub.of('parkPayment'), []);
    });

    for (const type of ['NotFoundError', 'InvariantViolation', 'DataIntegrityError']) {
      it(`recordPayment failing with ${type} is final at once: the payment is parked, and the charge waits unexpired for it to be re-driven`, async () => {
        let refuse = true;
        const { stub } = chargeStubs((d) => ({
          recordPayment: async (...args) => {
            if (refuse) {
              refuse = false;
              throw failure(type);
            }
            return d.recordPayment(...args);
          },
        }));
        const env = await testEnv();
        const { result, history } = await runCharge(stub, async (h) => {
          await h.signal(paymentReceivedSignal, notice('E1'));
          await waitFor(async () => stub.of('parkPayment').length === 1);
          await env.sleep(2 * HOUR); // far past the expiry: a parked payment means the cob was paid
          assert.deepEqual(stub.of('expireCharge'), []);
          assert.equal((await h.query(chargeStateQuery)).phase, 'awaiting_payment');
          await h.signal(paymentReceivedSignal, notice('E1')); // the operator re-drives it
        });
        assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
        const park = stub.of('parkPayment')[0];
        assert.deepEqual(park.args.slice(0, 2), ['ch-1', notice('E1')]);
        assert.match(String(park.args[2]), new RegExp(type));
        assert.equal(park.attempt, 1);
        assert.deepEqual(retryPolicies(history).get('recordPayment')?.nonRetryableErrorTypes, [
          'NotFoundError',
          'InvariantViolation',
          'DataIntegrityError',
        ]);
      });
    }
  });

  describe('expiry and cancellation', () => {
    it('expires unpaid: asks the acquirer first, cancels, removes the cob', async () => {
      const { stub } = chargeStubs();
      const { result, history } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['paymentsAtAcquirer', 'expireCharge', 'removeCob']);
      assert.deepEqual(timersStarted(history), [EXPIRES_IN]);
    });

    it('the expiry deadline is fixed on the workflow clock when first seen: later snapshots do not push it back', async () => {
      // Every read says "15 minutes left" (as a database clock days behind the workflow's would).
      const env = await testEnv();
      const { stub, snap } = chargeStubs({
        sendRefund: async (refundId) => ({ settled: { refundId, outcome: 'FAILED' } }),
      });
      const { result, history } = await runCharge(stub, async (h) => {
        await ready(h);
        await env.sleep(10 * MINUTE);
        // Any step re-reads the charge; a refund settled at once is one.
        snap.openRefundIds.push('r-0');
        await h.signal(refundRequestedSignal, { refundId: 'r-0' });
        await waitFor(async () => stub.of('settleRefund').length === 1);
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.ok(stub.of('loadChargeSnapshot').length >= 3);
      const timers = seconds(timersStarted(history));
      assert.equal(timers[0], EXPIRES_IN / 1000);
      assert.ok(
        timers[1] <= 5 * 60 + 1,
        `the second wait is what was left of the first, not 15 minutes again: ${timers}`,
      );
    });

    it('expiry with a charge without a txid skips the acquirer entirely', async () => {
      const { stub } = chargeStubs({}, { txid: null });
      const { result } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['expireCharge']);
    });

    it('at expiry the acquirer reports the cob paid (its callback never came): a payment, not a cancellation', async () => {
      const { stub } = chargeStubs({ paymentsAtAcquirer: async () => [notice('E9')] });
      const { result } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['paymentsAtAcquirer', 'recordPayment', 'settleCharge']);
    });

    it('at expiry the acquirer cannot be asked (refused, not retried): PENDING with a case, asked again after 5, 10, 20, 40 min; the paid cob is then credited', async () => {
      let refusals = 4;
      const { stub } = chargeStubs({
        paymentsAtAcquirer: async () => {
          if (refusals-- > 0) throw failure('AcquirerRejectedError', 'acquirer answered 403');
          return [notice('E9')];
        },
      });
      const { result, history, handle } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(steps(stub), [
        'paymentsAtAcquirer',
        'openExpiryCase',
        'paymentsAtAcquirer',
        'paymentsAtAcquirer',
        'paymentsAtAcquirer',
        'paymentsAtAcquirer',
        'closeExpiryCase',
        'recordPayment',
        'settleCharge',
      ]);
      // One case for the outage, named by its start; closed by the answer.
      const [chargeId, opened] = stub.of('openExpiryCase')[0].args as [
        string,
        { reference: string; error: string; since: string; askUntil: string },
      ];
      assert.equal(chargeId, 'ch-1');
      assert.equal(opened.reference, `charge:ch-1:expiry-unreachable:${opened.since}`);
      assert.equal(opened.error, 'acquirer answered 403');
      assert.equal(Date.parse(opened.askUntil) - Date.parse(opened.since), EXPIRY_MAX_WAIT_MS);
      assert.deepEqual(stub.of('closeExpiryCase')[0].args, [
        'ch-1',
        opened.reference,
        'the acquirer answered: the cob was paid',
      ]);
      // The expiry, the backoff between questions, then the settlement delay.
      assert.deepEqual(seconds(timersStarted(history)), [EXPIRES_IN / 1000, 300, 600, 1200, 2400, SETTLES_IN / 1000]);
      // A question asked again is one short probe: the workflow's backoff spaces them, not the activity's.
      assert.deepEqual(activityTimeouts(history).get('paymentsAtAcquirer'), {
        startToClose: 30_000,
        scheduleToClose: 2 * 60_000,
      });
      await replay(history, handle.workflowId);
    });

    it('the acquirer never answers: hourly questions continue as new every 24, stop after 7 days with the charge PENDING; an operator retry asks again', async () => {
      const env = await testEnv();
      let down = true;
      const { stub } = chargeStubs({
        paymentsAtAcquirer: async () => {
          if (down) throw failure('AcquirerRejectedError', 'acquirer answered 401');
          return [];
        },
      });
      let stopped: ChargeWorkflowState | undefined;
      const { result, handle, client } = await runCharge(stub, async (h) => {
        await ready(h);
        await env.sleep(EXPIRES_IN + EXPIRY_MAX_WAIT_MS + HOUR);
        stopped = await h.query(chargeStateQuery);
        assert.deepEqual(stub.of('expireCharge'), [], 'never expired by guess');
        down = false;
        await h.signal(askAcquirerSignal); // what `cases resolve --action retry` sends
      });
      // Asked at expiry, after 5, 15, 35 and 75 minutes, then every hour until exactly 7 days: 172 questions.
      assert.ok(stopped);
      assert.equal(stopped.chargeStatus, 'PENDING');
      assert.equal(stopped.phase, 'awaiting_payment');
      assert.equal(stopped.acquirerUnreachable?.nextAskAt, null);
      assert.equal(stopped.acquirerUnreachable?.asks, 172);
      assert.equal(
        Date.parse(stopped.acquirerUnreachable?.since ?? ''),
        Date.parse((stub.of('openExpiryCase')[0].args[1] as { since: string }).since),
      );
      assert.equal(stub.of('openExpiryCase').length, 1, 'one case for the whole outage');
      // The retry found nothing paid: the charge expires as usual. The operator resolved the case, so nothing closes it.
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.equal(stub.of('paymentsAtAcquirer').length, 173);
      assert.deepEqual(steps(stub).slice(-3), ['paymentsAtAcquirer', 'expireCharge', 'removeCob']);
      assert.deepEqual(stub.of('closeExpiryCase'), []);

      // 171 questions asked again, 24 per run: 8 runs, each replayable; the wait travels in the input.
      const runs: Array<Awaited<ReturnType<typeof handle.fetchHistory>>> = [];
      let runId: string | undefined = handle.firstExecutionRunId;
      while (runId) {
        const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
        runs.push(history);
        runId =
          history.events?.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)
            ?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      }
      assert.equal(runs.length, Math.ceil(171 / EXPIRY_ASKS_PER_RUN));
      for (const r of runs) await replay(r, handle.workflowId);
      const second = runs[1]?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
      const input = second
        ? (JSON.parse(Buffer.from(second).toString()) as { expiryWait?: { asks: number } })
        : undefined;
      assert.equal(input?.expiryWait?.asks, 1 + EXPIRY_ASKS_PER_RUN);
      assert.deepEqual(seconds(timersStarted(runs[0])).slice(0, 7), [
        EXPIRES_IN / 1000,
        300,
        600,
        1200,
        2400,
        3600,
        3600,
      ]);
      // The operator's retry is a short probe too (a still-down acquirer opens a new case in minutes, not 6 hours).
      assert.deepEqual(activityTimeouts(runs[runs.length - 1] ?? {}).get('paymentsAtAcquirer'), {
        startToClose: 30_000,
        scheduleToClose: 2 * 60_000,
      });
    });

    it('a payment callback while waiting for the acquirer: credited as usual, and the case closed', async () => {
      const { stub } = chargeStubs({
        paymentsAtAcquirer: async () => {
          throw failure('AcquirerRejectedError', 'acquirer answered 403');
        },
      });
      const env = await testEnv();
      const { result } = await runCharge(stub, async (h) => {
        await ready(h);
        await env.sleep(EXPIRES_IN + MINUTE); // past the expiry, before the next question (5 minutes on)
        await waitFor(async () => stub.of('openExpiryCase').length === 1, 'the case');
        assert.equal((await h.query(chargeStateQuery)).chargeStatus, 'PENDING');
        await h.signal(paymentReceivedSignal, notice('E1'));
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(steps(stub), [
        'paymentsAtAcquirer',
        'openExpiryCase',
        'recordPayment',
        'closeExpiryCase',
        'settleCharge',
      ]);
      assert.equal(stub.of('closeExpiryCase')[0].args[2], 'the charge became PAID meanwhile');
    });

    it('a payment that beat the cob removal comes back from removeCob and goes back to the payer', async () => {
      const { stub } = chargeStubs({
        removeCob: async () => [notice('E7')],
        sendRefund: async (refundId) => ({ settled: { refundId, outcome: 'CONFIRMED' } }),
      });
      const { result } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.deepEqual(steps(stub), [
        'paymentsAtAcquirer',
        'expireCharge',
        'removeCob',
        'recordPayment',
        'sendRefund',
        'settleRefund',
      ]);
      assert.deepEqual(stub.of('sendRefund')[0].args, ['refund-E7']);
    });

    it('cancel requested while waiting: no acquirer question, cancelled at once, cob removed', async () => {
      const { stub } = chargeStubs();
      const { result, history } = await runCharge(stub, async (h) => {
        await ready(h);
        await h.signal(cancelRequestedSignal);
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['expireCharge', 'removeCob']);
      assert.deepEqual(timersStarted(history), [EXPIRES_IN], 'only the expiry wait, cut short by the cancel');
    });

    it('cancel on a paid charge (the endpoint raced the payment) changes nothing: it still settles', async () => {
      const { stub } = chargeStubs();
      const { result } = await runCharge(stub, async (h) => {
        await ready(h);
        await h.signal(paymentReceivedSignal, notice('E1'));
        await waitFor(async () => (await h.query(chargeStateQuery)).chargeStatus === 'PAID', 'the payment');
        await h.signal(cancelRequestedSignal);
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['recordPayment', 'settleCharge']);
    });

    it('cancel after the endpoint already made it CANCELED: expireCharge finds nothing to do (guarded), the cob is still removed', async () => {
      const { stub, snap } = chargeStubs();
      const { result } = await runCharge(stub, async (h) => {
        await ready(h);
        snap.status = 'CANCELED';
        await h.signal(cancelRequestedSignal);
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['expireCharge', 'removeCob']);
    });

    it('a cancel that starts a fresh run on a CANCELED charge (signal-with-start) removes the cob without expiring again', async () => {
      const { stub } = chargeStubs({}, { status: 'CANCELED', expiresInMs: -HOUR });
      const result = await withStubWorker(stub.activities, async ({ client, taskQueue, workflowId }) => {
        const h = await client.workflow.signalWithStart(chargeWorkflow, {
          taskQueue,
          workflowId,
          args: [{ chargeId: 'ch-1' }],
          signal: cancelRequestedSignal,
          signalArgs: [],
        });
        return h.result();
      });
      assert.deepEqual(result, { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] });
      assert.deepEqual(steps(stub), ['removeCob']);
    });

    it('a fresh run on a charge already CANCELED with nothing asked of it ends at once', async () => {
      const { stub } = chargeStubs({}, { status: 'CANCELED', expiresInMs: -HOUR });
      const { result, history } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.deepEqual(stub.names(), ['loadChargeSnapshot']);
      assert.deepEqual(timersStarted(history), []);
    });

    it('cancel arriving with the payment in one batch: the payment wins, the cancel is dropped', async () => {
      const { stub } = chargeStubs();
      const { result } = await runCharge(stub, async (h) => {
        await h.signal(paymentReceivedSignal, notice('E1'));
        await h.signal(cancelRequestedSignal);
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['recordPayment', 'settleCharge']);
    });

    it('removeCob refused for good (AcquirerRejectedError) fails the run at once rather than retrying for hours', async () => {
      const { stub } = chargeStubs({
        removeCob: async () => {
          throw failure('AcquirerRejectedError', 'acquirer answered 400');
        },
      });
      const { result } = await runCharge(stub);
      const err = !result.ok ? result.error : undefined;
      assert.ok(err instanceof WorkflowFailedError, String(err));
      assert.ok(err.cause instanceof ActivityFailure);
      assert.equal(err.cause.retryState, RetryState.NON_RETRYABLE_FAILURE);
      assert.equal(stub.of('removeCob').length, 1);
    });

    it('a late payment after the run closed starts a fresh run (signal-with-start) that returns the money', async () => {
      const { stub } = chargeStubs({
        sendRefund: async (refundId) => ({ settled: { refundId, outcome: 'CONFIRMED' } }),
      });
      const { result, handle } = await runCharge(stub);
      assert.equal(result.ok && result.value.chargeStatus, 'CANCELED');
      const late = await withStubWorker(
        stub.activities,
        async (ctx) => {
          const h = await startedByPayment(ctx, notice('E5'));
          return h.result();
        },
        handle.workflowId,
      ); // the same workflow id: the closed run's
      assert.deepEqual(late, { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] });
      assert.deepEqual(steps(stub).slice(-3), ['recordPayment', 'sendRefund', 'settleRefund']);
    });
  });

  describe('refunds', () => {
    /** A paid, settled charge (as a fresh run finds it when the refund endpoint signals). */
    const paidSettled = { status: 'PAID' as const, settlesInMs: -1, settled: true, expiresInMs: -HOUR };

    it('refund confirmed by the acquirer callback while the workflow waits', async () => {
      const { stub, snap } = chargeStubs({}, paidSettled);
      const states: ChargeWorkflowState[] = [];
      const { result } = await runCharge(stub, async (h) => {
        snap.openRefundIds.push('r-1');
        await h.signal(refundRequestedSignal, { refundId: 'r-1' });
        // Open once sendRefund has returned and the workflow has taken its answer (waiting for the
        // call alone raced that answer on a loaded machine: the query saw no open refund yet).
        await waitFor(
          async () => stub.of('sendRefund').length === 1 && (await h.query(chargeStateQuery)).openRefunds.length === 1,
        );
        states.push(await h.query(chargeStateQuery));
        await h.signal(refundSettledSignal, { refundId: 'r-1', outcome: 'CONFIRMED' });
      });
      assert.deepEqual(states, [{ phase: 'refunding', chargeStatus: 'PAID', openRefunds: ['r-1'] }]);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'REFUNDED', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['sendRefund', 'settleRefund']);
      assert.deepEqual(stub.of('settleRefund')[0].args, [{ refundId: 'r-1', outcome: 'CONFIRMED' }]);
    });

    it('a refund settled at once by the acquirer needs no wait', async () => {
      const { stub, snap } = chargeStubs(
        { sendRefund: async (refundId) => ({ settled: { refundId, outcome: 'FAILED', reason: 'conta encerrada' } }) },
        paidSettled,
      );
      snap.openRefundIds.push('r-2'); // a fresh run picks up the open refund from the snapshot, no signal needed
      const { result, history } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['sendRefund', 'settleRefund']);
      assert.deepEqual(timersStarted(history), []);
    });

    it('no callback: the outcome is polled after 1, 2, 4 minutes... and applied when known', async () => {
      let polls = 0;
      const { stub, snap } = chargeStubs(
        { checkRefund: async (refundId) => (++polls < 4 ? null : { refundId, outcome: 'CONFIRMED' }) },
        paidSettled,
      );
      snap.openRefundIds.push('r-3');
      const { result, history } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'REFUNDED', openRefunds: [] } });
      assert.deepEqual(steps(stub), [
        'sendRefund',
        'checkRefund',
        'checkRefund',
        'checkRefund',
        'checkRefund',
        'settleRefund',
      ]);
      assert.deepEqual(seconds(timersStarted(history)), [60, 120, 240, 480]);
    });

    it('an outcome signalled before the refund was sent is ignored; polling still finds it (odd order)', async () => {
      const { stub, snap } = chargeStubs(
        { checkRefund: async (refundId) => ({ refundId, outcome: 'CONFIRMED' }) },
        { ...paidSettled, settled: false, settlesInMs: HOUR },
      );
      const { result } = await runCharge(stub, async (h) => {
        await ready(h);
        await h.signal(refundSettledSignal, { refundId: 'r-4', outcome: 'CONFIRMED' }); // unknown yet: dropped
        await waitFor(() => signalsHandled(h), 'the outcome signal to be handled');
        snap.openRefundIds.push('r-4');
        await h.signal(refundRequestedSignal, { refundId: 'r-4' });
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'REFUNDED', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['sendRefund', 'checkRefund', 'settleRefund', 'settleCharge']);
    });

    it('refund request and its outcome in one batch, outcome first: the request is sent, then the outcome applied', async () => {
      // The first read is held until both signals are in, so they reach the workflow together.
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      const { stub, snap } = chargeStubs(
        (d) => ({
          loadChargeSnapshot: async (id) => {
            await gate;
            return d.loadChargeSnapshot(id);
          },
        }),
        paidSettled,
      );
      const { result, history } = await runCharge(stub, async (h) => {
        await waitFor(async () => stub.of('loadChargeSnapshot').length === 1, 'the first read');
        snap.openRefundIds.push('r-5');
        await h.signal(refundSettledSignal, { refundId: 'r-5', outcome: 'CONFIRMED' });
        await h.signal(refundRequestedSignal, { refundId: 'r-5' });
        release();
      });
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'REFUNDED', openRefunds: [] } });
      // The snapshot's open refund and the signal name the same refund: sent once, settled once, no poll.
      assert.deepEqual(steps(stub), ['sendRefund', 'settleRefund']);
      assert.deepEqual(timersStarted(history), []);
    });

    it('a refund the acquirer refuses for good (AcquirerRejectedError) is parked for an operator, not retried', async () => {
      const { stub, snap } = chargeStubs(
        {
          sendRefund: async () => {
            throw failure('AcquirerRejectedError', 'acquirer answered 401');
          },
        },
        paidSettled,
      );
      snap.openRefundIds.push('r-6');
      const { result } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.deepEqual(steps(stub), ['sendRefund', 'parkRefund']);
      assert.deepEqual(stub.of('parkRefund')[0].args, ['r-6', 'could not be carried: acquirer answered 401']);
    });

    it('a refund whose outcome cannot be checked (NotFoundError) is parked', async () => {
      const { stub, snap } = chargeStubs(
        {
          checkRefund: async () => {
            throw failure('NotFoundError', 'refund r-7 not found');
          },
        },
        paidSettled,
      );
      snap.openRefundIds.push('r-7');
      const { result } = await runCharge(stub);
      assert.equal(result.ok, true);
      assert.deepEqual(steps(stub), ['sendRefund', 'checkRefund', 'parkRefund']);
      assert.deepEqual(stub.of('parkRefund')[0].args, ['r-7', 'could not be checked: refund r-7 not found']);
    });

    it('an outcome the ledger refuses (InvariantViolation) is parked with the outcome named', async () => {
      const { stub, snap } = chargeStubs(
        {
          settleRefund: async () => {
            throw failure('InvariantViolation', 'refund exceeds the charge');
          },
        },
        paidSettled,
      );
      const { result } = await runCharge(stub, async (h) => {
        snap.openRefundIds.push('r-8');
        await h.signal(refundRequestedSignal, { refundId: 'r-8' });
        await waitFor(async () => stub.of('sendRefund').length === 1);
        await h.signal(refundSettledSignal, { refundId: 'r-8', outcome: 'CONFIRMED' });
      });
      assert.equal(result.ok, true);
      assert.deepEqual(steps(stub), ['sendRefund', 'settleRefund', 'parkRefund']);
      assert.equal(stub.of('settleRefund')[0].attempt, 1);
      assert.deepEqual(stub.of('parkRefund')[0].args, [
        'r-8',
        'outcome CONFIRMED could not be applied: refund exceeds the charge',
      ]);
    });

    it('no outcome ever: continues as new every 20 polls carrying the counts, and parks the refund after 60 polls', async () => {
      const { stub, snap } = chargeStubs({}, paidSettled);
      snap.openRefundIds.push('r-9');
      const { result, handle, client } = await runCharge(stub);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'PAID', openRefunds: [] } });
      assert.equal(stub.of('checkRefund').length, 60);
      // Each run re-sends the open refund (idempotent at the acquirer on the refund id).
      assert.equal(stub.of('sendRefund').length, 3);
      assert.deepEqual(
        stub.of('parkRefund').map((c) => c.args),
        [['r-9', 'no outcome from the acquirer after 60 polls']],
      );

      // Three runs: the first two ended by continue-as-new, the next one's input carries the poll counts.
      const runs: Array<{ history: Awaited<ReturnType<typeof handle.fetchHistory>> }> = [];
      let runId: string | undefined = handle.firstExecutionRunId;
      while (runId) {
        const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
        runs.push({ history });
        runId =
          history.events?.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)
            ?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      }
      assert.deepEqual(
        runs.map((r) => continuedAsNew(r.history)),
        [true, true, false],
      );
      for (const r of runs) await replay(r.history, handle.workflowId);
      const inputs = runs.map((r) => {
        const payload = r.history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
        return payload ? JSON.parse(Buffer.from(payload).toString()) : undefined;
      });
      assert.deepEqual(inputs, [
        { chargeId: 'ch-1' },
        { chargeId: 'ch-1', refundPolls: { 'r-9': 20 } },
        { chargeId: 'ch-1', refundPolls: { 'r-9': 40 } },
      ]);
      // Backoff: 1 min doubling to the 1-hour cap.
      assert.deepEqual(
        seconds(timersStarted(runs[0].history)).slice(0, 8),
        [1, 2, 4, 8, 16, 32, 60, 60].map((m) => m * 60),
      );
    });
  });

  describe('policies and failures', () => {
    it('schedules each activity with its timeouts and non-retryable error types', async () => {
      const { stub } = chargeStubs();
      const { history } = await runCharge(stub, async (h) => h.signal(paymentReceivedSignal, notice('E1')));
      const timeouts = activityTimeouts(history);
      const policies = retryPolicies(history);
      const day = 24 * HOUR;
      assert.deepEqual(timeouts.get('loadChargeSnapshot'), { startToClose: 10_000, scheduleToClose: day });
      assert.deepEqual(policies.get('loadChargeSnapshot')?.nonRetryableErrorTypes, ['NotFoundError']);
      assert.deepEqual(timeouts.get('recordPayment'), { startToClose: 15_000, scheduleToClose: day });
      assert.deepEqual(timeouts.get('settleCharge'), { startToClose: 15_000, scheduleToClose: day });
      assert.deepEqual(policies.get('settleCharge')?.nonRetryableErrorTypes, [
        'NotFoundError',
        'InvariantViolation',
        'DataIntegrityError',
      ]);
    });

    it('expiry activities: parking and expiring never give up on a type, the acquirer ones stop on AcquirerRejectedError', async () => {
      const { stub } = chargeStubs({
        removeCob: async () => [notice('E7')],
        sendRefund: async (refundId) => ({ settled: { refundId, outcome: 'CONFIRMED' } }),
      });
      const { history } = await runCharge(stub);
      const timeouts = activityTimeouts(history);
      const policies = retryPolicies(history);
      assert.deepEqual(timeouts.get('expireCharge'), { startToClose: 10_000, scheduleToClose: 24 * HOUR });
      assert.deepEqual(policies.get('expireCharge')?.nonRetryableErrorTypes ?? [], []);
      for (const name of ['removeCob', 'paymentsAtAcquirer']) {
        assert.deepEqual(timeouts.get(name), { startToClose: 30_000, scheduleToClose: 6 * HOUR }, name);
        assert.deepEqual(policies.get(name)?.nonRetryableErrorTypes, ['AcquirerRejectedError'], name);
      }
      assert.deepEqual(policies.get('sendRefund')?.nonRetryableErrorTypes, ['AcquirerRejectedError', 'NotFoundError']);
      assert.deepEqual(timeouts.get('sendRefund'), { startToClose: 30_000, scheduleToClose: 6 * HOUR });
    });

    it('a charge that does not exist (NotFoundError on the first read) fails the run at once', async () => {
      const { stub } = chargeStubs({
        loadChargeSnapshot: async () => {
          throw failure('NotFoundError', 'charge ch-1 not found');
        },
      });
      const { result } = await runCharge(stub);
      const err = !result.ok ? result.error : undefined;
      assert.ok(err instanceof WorkflowFailedError, String(err));
      assert.ok(err.cause instanceof ActivityFailure);
      assert.ok(err.cause.cause instanceof ApplicationFailure);
      assert.equal(err.cause.cause.type, 'NotFoundError');
      assert.equal(stub.calls.length, 1);
    });

    it('expireCharge failing transiently is retried until it succeeds (a failure type never stops it)', async () => {
      let failures = 3;
      const wrapped = chargeStubs((d) => ({
        expireCharge: async (id) => {
          if (failures-- > 0) throw failure('InvariantViolation', 'deadlock detected (stub)');
          return d.expireCharge(id);
        },
      })).stub;
      const { result } = await runCharge(wrapped);
      assert.deepEqual(result, { ok: true, value: { phase: 'done', chargeStatus: 'CANCELED', openRefunds: [] } });
      assert.deepEqual(
        wrapped.of('expireCharge').map((c) => c.attempt),
        [1, 2, 3, 4],
      );
    });

    it('an acquirer call slower than its 30 s timeout is retried', async () => {
      const env = await testEnv();
      let first = true;
      const wrapped = chargeStubs((d) => ({
        removeCob: async (id) => {
          if (first) {
            first = false;
            await env.sleep('31 seconds'); // virtual: the server times the attempt out meanwhile
          }
          return d.removeCob(id);
        },
      })).stub;
      const { result } = await runCharge(wrapped);
      assert.equal(result.ok, true);
      assert.deepEqual(
        wrapped.of('removeCob').map((c) => c.attempt),
        [1, 2],
      );
    });
  });
});

/** Polls a condition (bounded) while the workflow runs on wall-clock time. */
async function waitFor(check: () => Promise<boolean>, what = 'condition'): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the workflow has read the charge and registered its handlers (answers the state query). */
async function ready(h: WorkflowHandle<typeof chargeWorkflow>): Promise<void> {
  await waitFor(
    () =>
      h.query(chargeStateQuery).then(
        () => true,
        () => false,
      ),
    'the state query to be answered',
  );
}

/** Timer durations in whole seconds (a timer set after an activity is shorter by the activity's wall time). */
const seconds = (ms: number[]): number[] => ms.map((t) => Math.round(t / 1000));

/** Whether a workflow task completed after the last signal in the history (the signal was handled). */
async function signalsHandled(h: WorkflowHandle<typeof chargeWorkflow>): Promise<boolean> {
  const events = (await h.fetchHistory()).events ?? [];
  const lastIndex = (has: (e: (typeof events)[number]) => unknown): number =>
    events.reduce((last, e, i) => (has(e) ? i : last), -1);
  return (
    lastIndex((e) => e.workflowTaskCompletedEventAttributes) >
    lastIndex((e) => e.workflowExecutionSignaledEventAttributes)
  );
}
