/**
 * The withdrawal saga end to end: the sandbox drives the simulator, whose signed callbacks reach
 * the real worker by signal-with-start; time skipping brings the polling fallback and the overall
 * deadline. Ledger checks read the database.
 */
import { counter } from '../support/metrics';
import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import { transferView } from '../../src/acquirer/simulator/psp';
import { createActivities } from '../../src/runtime/composition';
import * as ledger from '../../src/services/ledger/ledger';
import { createWithdrawalsService } from '../../src/services/withdrawals/withdrawals';
import { reconcileWithdrawalWorkflows } from '../../src/services/withdrawals/reconciler';
import { withdrawalWorkflowClient } from '../../src/temporal/clients/withdrawal';
import { withdrawalWorkflowId } from '../../src/temporal/workflow-ids';
import type { WithdrawalWorkflowState } from '../../workflows/withdrawal-types';
import { eventually } from '../support/charges';
import { createOperatorCaseServices } from '../../src/runtime/composition';
import { endRun, uniqueTaskQueue, workflowBundle } from '../support/temporal';
import {
  assertBooksReconcile,
  DEST,
  fundedMerchant,
  WITHDRAWALS_CALLBACK_SECRET,
  withdrawalsStack,
  type WithdrawBody,
  type WithdrawalsStack,
} from '../support/withdrawals';

describe('withdrawal saga', function () {
  this.timeout(180_000);
  let s: WithdrawalsStack;

  before(async () => {
    s = await withdrawalsStack();
  });

  async function newWithdrawal(token: string, amount = 3_000): Promise<WithdrawBody['withdraw']> {
    const res = await s.api.request<WithdrawBody>('POST', '/v1/merchants/me/withdrawals', {
      token,
      body: { amount, ...DEST },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.withdraw;
  }

  const row = (id: string) => s.knex('withdrawals').where({ id }).first();
  const untilStatus = (id: string, status: string) =>
    eventually(async () => {
      const r = await row(id);
      return r?.status === status ? r : undefined;
    }, `withdrawal ${id} to be ${status}`);
  const transferIdOf = (id: string) =>
    eventually(async () => ((await row(id))?.transfer_id as string | null) ?? undefined, `the transfer of ${id}`);
  const sandbox = (token: string, id: string, action: string, body: unknown = {}) =>
    s.api.request<{ message: string; transferId?: string }>('POST', `/v1/sandbox/withdrawals/${id}/${action}`, {
      token,
      body,
    });
  const handle = (id: string) => s.client.workflow.getHandle(withdrawalWorkflowId(id));
  const eventOf = (type: string, id: string) =>
    s
      .knex('events')
      .where({ reference: `${type}:${id}` })
      .first();
  /** Transfers the simulator created for this withdrawal (201s; a replay answers 200). */
  const transfersCreated = (id: string) =>
    s.simulator.control.calls.filter(
      (c) =>
        c.route === 'transfer' &&
        c.status === 201 &&
        (c.response as { idempotencyKey?: string } | undefined)?.idempotencyKey === id,
    ).length;

  async function activityNames(id: string, runId?: string): Promise<string[]> {
    const history = await s.client.workflow.getHandle(withdrawalWorkflowId(id), runId).fetchHistory();
    return (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => typeof n === 'string');
  }

  async function postingsSum(merchantId: string): Promise<number> {
    const r = await s
      .knex('ledger_postings as p')
      .join('ledger_transactions as t', 't.id', 'p.transaction_id')
      .where('t.merchant_id', merchantId)
      .sum({ s: 'p.amount' })
      .first();
    return Number(r?.s ?? 0);
  }

  /** The acquirer calls back (signed, as it would) about a withdrawal's transfer: its id. */
  async function callBack(withdrawalId: string, transfer: Record<string, unknown>): Promise<string> {
    const t = s.simulator.control.getTransfer(await transferIdOf(withdrawalId));
    assert.ok(t);
    const body = JSON.stringify({ transfer: { ...transferView(t), ...transfer } });
    const res = await fetch(`${s.api.baseUrl}/v1/acquirer/transfers`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [CALLBACK_SIGNATURE_HEADER]: signCallback(WITHDRAWALS_CALLBACK_SECRET, body),
      },
      body,
    });
    assert.equal(res.status, 202);
    return t.id;
  }

  it('completes through the sandbox: COMPLETED, in transit leaves the books, withdraw.completed; the history shows the debit', async () => {
    const m = await fundedMerchant(s.api, 10_000);
    const w = await newWithdrawal(m.token);
    const accepted = await sandbox(m.token, w.id, 'complete');
    assert.equal(accepted.status, 202);
    await s.simulator.control.callbacks.idle(); // delivered before time may skip to a poll
    const done = await handle(w.id).result();
    assert.equal(done.status, 'COMPLETED');
    const r = await row(w.id);
    assert.equal(r.status, 'COMPLETED');
    assert.ok(r.completed_at);
    assert.equal(r.transfer_id, accepted.body.transferId);
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), {
      available: 7_000,
      pending: 0,
      blocked: 0,
      total: 7_000,
    });
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 0);
    assert.equal(await postingsSum(m.merchantId), 0);
    const ev = await eventOf('withdraw.completed', w.id);
    assert.equal(ev.type, 'withdraw.completed');
    assert.deepEqual(Object.keys(ev.data).sort(), ['amount', 'completedAt', 'status', 'transferId', 'withdrawId']);
    assert.deepEqual(
      [ev.data.withdrawId, ev.data.amount, ev.data.status, ev.data.transferId],
      [w.id, 3_000, 'COMPLETED', r.transfer_id],
    );
    // The history alone tells the story, the debit first: the endpoint started the run with the
    // debit's ledger transaction in its input, so the run begins at the transfer.
    assert.deepEqual(await activityNames(w.id), ['sendWithdrawalTransfer', 'completeWithdrawal']);
    const history = await handle(w.id).fetchHistory();
    const debitTx = await s
      .knex('ledger_transactions')
      .where({ reference: `withdrawal:${w.id}:debit` })
      .first();
    assert.ok(JSON.stringify(history.events).length > 0);
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    assert.ok(input instanceof Uint8Array);
    assert.deepEqual(JSON.parse(Buffer.from(input).toString()).debit, { ledgerTransactionId: debitTx.id });
    const described = await handle(w.id).describe();
    assert.deepEqual(described.memo, { withdrawalId: w.id, merchantId: m.merchantId });
  });

  it('rejected: FAILED, the balance restored exactly once although the failure callback arrives twice (and a third time by hand)', async () => {
    const m = await fundedMerchant(s.api, 10_000);
    const w = await newWithdrawal(m.token, 4_000);
    assert.equal((await ledger.getBalance(s.knex, m.merchantId)).available, 6_000);
    const transferId = await transferIdOf(w.id);
    s.simulator.control.setFaults({ duplicateCallbacks: true });
    try {
      assert.equal((await sandbox(m.token, w.id, 'fail', { reason: 'Conta de destino encerrada' })).status, 202);
      await s.simulator.control.callbacks.idle();
      const done = await handle(w.id).result();
      assert.equal(done.status, 'FAILED');
    } finally {
      s.simulator.control.setFaults({});
    }
    // The same callback once more, by hand, after the saga has closed.
    await callBack(w.id, {});
    // A compensation run again directly is a no-op too.
    assert.deepEqual(await s.lifecycle.fail(w.id, 'again'), { status: 'FAILED', changed: false });

    const r = await row(w.id);
    assert.equal(r.failure_reason, 'Conta de destino encerrada');
    assert.ok(r.failed_at);
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), {
      available: 10_000,
      pending: 0,
      blocked: 0,
      total: 10_000,
    });
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 0);
    const restored = await s
      .knex('ledger_transactions')
      .where({ merchant_id: m.merchantId, kind: 'withdrawal_failed' });
    assert.equal(restored.length, 1);
    assert.equal(await postingsSum(m.merchantId), 0);
    const ev = await eventOf('withdraw.failed', w.id);
    assert.deepEqual(ev.data, {
      withdrawId: w.id,
      amount: 4_000,
      status: 'FAILED',
      reason: 'Conta de destino encerrada',
    });
    const notes = await s.knex('notifications').where({ merchant_id: m.merchantId, kind: 'withdraw.failed' });
    assert.equal(notes.length, 1);
    assert.equal(notes[0].data.withdrawId, w.id);
    assert.equal(
      (await s.knex('acquirer_callbacks').where({ kind: 'transfers', external_id: `${transferId}:REJECTED` })).length,
      1,
    );
    await assertBooksReconcile(s.knex, [m.merchantId]);
    // One run did it all: the duplicates found the outcome applied and started nothing.
    assert.deepEqual(await activityNames(w.id), ['sendWithdrawalTransfer', 'failWithdrawal']);
  });

  it('a signed transfer callback that matches no withdrawal (unknown key, other amount) is kept and changes nothing', async () => {
    const m = await fundedMerchant(s.api, 2_000);
    const w = await newWithdrawal(m.token, 2_000);
    const transferId = await transferIdOf(w.id);
    const send = (transfer: Record<string, unknown>) => callBack(w.id, transfer);
    await send({ status: 'COMPLETED', valor: '1.00' });
    await send({ status: 'REJECTED', idempotencyKey: 'wd_not_ours', id: 'tr_not_ours' });
    assert.equal(
      (await s.knex('acquirer_callbacks').where({ kind: 'transfers', external_id: `${transferId}:COMPLETED` })).length,
      1,
    );
    assert.equal(
      (await s.knex('acquirer_callbacks').where({ kind: 'transfers', external_id: 'tr_not_ours:REJECTED' })).length,
      1,
    );
    const state = await handle(w.id).query<WithdrawalWorkflowState>('state');
    assert.deepEqual([state.phase, state.status], ['awaiting_result', 'PROCESSING']);
    assert.equal((await row(w.id)).status, 'PROCESSING');
    await sandbox(m.token, w.id, 'complete');
    await s.simulator.control.callbacks.idle();
    assert.equal((await handle(w.id).result()).status, 'COMPLETED');
  });

  it('returned after completion: REFUNDED, the balance restored, withdraw.refunded recorded', async () => {
    const m = await fundedMerchant(s.api, 10_000);
    const w = await newWithdrawal(m.token, 2_000);
    await sandbox(m.token, w.id, 'complete');
    const firstRun = await handle(w.id).describe();
    assert.equal((await handle(w.id).result()).status, 'COMPLETED');
    assert.equal((await ledger.getBalance(s.knex, m.merchantId)).available, 8_000);

    assert.equal((await sandbox(m.token, w.id, 'return', { reason: 'Conta encerrada' })).status, 202);
    const r = await untilStatus(w.id, 'REFUNDED');
    assert.ok(r.refunded_at);
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), {
      available: 10_000,
      pending: 0,
      blocked: 0,
      total: 10_000,
    });
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 0);
    assert.equal(await postingsSum(m.merchantId), 0);
    const ev = await eventOf('withdraw.refunded', w.id);
    assert.deepEqual(Object.keys(ev.data).sort(), ['amount', 'reason', 'refundedAt', 'status', 'withdrawId']);
    assert.deepEqual(
      [ev.data.withdrawId, ev.data.amount, ev.data.status, ev.data.reason],
      [w.id, 2_000, 'REFUNDED', 'Conta encerrada'],
    );
    // The return came after the first run had closed: signal-with-start began a second run.
    const second = await handle(w.id).describe();
    assert.notEqual(second.runId, firstRun.runId);
    assert.equal((await handle(w.id).result()).status, 'REFUNDED');
    assert.deepEqual(await activityNames(w.id, second.runId), ['confirmWithdrawalDebit', 'refundWithdrawal']);
    // The list shows the (ext) status.
    const list = await s.api.request<{ withdrawals: Array<{ id: string; status: string }> }>(
      'GET',
      '/v1/merchants/me/withdrawals',
      { token: m.token },
    );
    assert.equal(list.body.withdrawals.find((x) => x.id === w.id)?.status, 'REFUNDED');
    // Nothing can return it twice.
    assert.equal((await sandbox(m.token, w.id, 'return')).status, 400);
    await assertBooksReconcile(s.knex, [m.merchantId]);
  });

  it('a return that overtakes its completion: completed first, then refunded, each once', async () => {
    const m = await fundedMerchant(s.api, 5_000);
    const w = await newWithdrawal(m.token, 5_000);
    const transferId = await transferIdOf(w.id);
    s.simulator.control.setFaults({ outOfOrderCallbacks: true });
    try {
      s.simulator.control.completeTransfer(transferId);
      s.simulator.control.returnTransfer(transferId, 'Devolvida');
      assert.equal(s.simulator.control.callbacks.held, 2);
    } finally {
      s.simulator.control.setFaults({}); // releases them, newest (RETURNED) first
    }
    await untilStatus(w.id, 'REFUNDED');
    await s.simulator.control.callbacks.idle();
    const kinds = (await s
      .knex('ledger_transactions')
      .where({ merchant_id: m.merchantId })
      .orderBy('created_at')
      .pluck('kind')) as string[];
    assert.deepEqual(
      kinds.filter((k) => k.startsWith('withdrawal_')),
      ['withdrawal_debit', 'withdrawal_completed', 'withdrawal_returned'],
    );
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), {
      available: 5_000,
      pending: 0,
      blocked: 0,
      total: 5_000,
    });
    assert.ok(await eventOf('withdraw.completed', w.id));
    assert.ok(await eventOf('withdraw.refunded', w.id));
    await assertBooksReconcile(s.knex, [m.merchantId]);
  });

  it('a contradicting outcome changes nothing and opens an operator case: REJECTED after COMPLETED, COMPLETED after FAILED', async () => {
    const m = await fundedMerchant(s.api, 10_000);
    const paid = await newWithdrawal(m.token, 2_000);
    await sandbox(m.token, paid.id, 'complete');
    await s.simulator.control.callbacks.idle();
    assert.equal((await handle(paid.id).result()).status, 'COMPLETED');
    const failed = await newWithdrawal(m.token, 3_000);
    await sandbox(m.token, failed.id, 'fail', { reason: 'Conta encerrada' });
    await s.simulator.control.callbacks.idle();
    assert.equal((await handle(failed.id).result()).status, 'FAILED');
    const balance = await ledger.getBalance(s.knex, m.merchantId);
    assert.deepEqual(balance, { available: 8_000, pending: 0, blocked: 0, total: 8_000 });
    const movements = (await s.knex('ledger_transactions').where({ merchant_id: m.merchantId })).length;

    const rejectedTransfer = await callBack(paid.id, { status: 'REJECTED', motivo: 'Conta inexistente' });
    const completedTransfer = await callBack(failed.id, { status: 'COMPLETED', motivo: undefined });
    await callBack(paid.id, { status: 'REJECTED', motivo: 'Conta inexistente' }); // delivered again: still one case

    const cases = createOperatorCaseServices({ knex: s.knex, logger: s.logger });
    const caseOf = (id: string) =>
      eventually(async () => {
        const found = await cases.list({ subjectId: id });
        return found.length > 0 ? found : undefined;
      }, `the case of ${id}`);
    const [onPaid, ...more] = await caseOf(paid.id);
    assert.deepEqual(more, []);
    assert.deepEqual(
      [onPaid?.kind, onPaid?.status, onPaid?.subjectType, onPaid?.merchantId],
      ['TRANSFER_CONTRADICTION', 'OPEN', 'withdrawal', m.merchantId],
    );
    assert.deepEqual(onPaid?.details, {
      applied: 'COMPLETED',
      contradicting: 'REJECTED',
      transferId: rejectedTransfer,
      amount: 2_000,
      acquirerReason: 'Conta inexistente',
    });
    assert.deepEqual(onPaid?.actions, ['acknowledge']);
    const [onFailed] = await caseOf(failed.id);
    assert.deepEqual(onFailed?.details, {
      applied: 'FAILED',
      contradicting: 'COMPLETED',
      transferId: completedTransfer,
      amount: 3_000,
    });

    // The callbacks are done (applied, saying they contradicted); nothing moved.
    for (const [transferId, status, applied] of [
      [rejectedTransfer, 'REJECTED', 'COMPLETED'],
      [completedTransfer, 'COMPLETED', 'FAILED'],
    ]) {
      const cb = await s
        .knex('acquirer_callbacks')
        .where({ kind: 'transfers', external_id: `${transferId}:${status}` })
        .first();
      assert.equal(cb.status, 'APPLIED');
      assert.match(cb.resolution, new RegExp(`contradicts the applied ${applied}`));
    }
    assert.equal((await row(paid.id)).status, 'COMPLETED');
    assert.equal((await row(failed.id)).status, 'FAILED');
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), balance);
    assert.equal((await s.knex('ledger_transactions').where({ merchant_id: m.merchantId })).length, movements);
    assert.equal((await s.knex('audit_log').where({ action: 'case.opened', target_id: paid.id })).length, 1);
    await assertBooksReconcile(s.knex, [m.merchantId]);
  });

  it('a transfer the acquirer refuses outright is a failure: compensated, FAILED', async () => {
    const m = await fundedMerchant(s.api, 1_000);
    s.simulator.control.setFaults({ failNext: { route: 'transfer', times: 1, status: 400 } });
    try {
      const w = await newWithdrawal(m.token, 1_000);
      assert.equal((await handle(w.id).result()).status, 'FAILED');
      assert.match((await row(w.id)).failure_reason, /refused by the acquirer/);
    } finally {
      s.simulator.control.setFaults({});
    }
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), {
      available: 1_000,
      pending: 0,
      blocked: 0,
      total: 1_000,
    });
  });

  it('no callback ever arrives: the polling fallback resolves it (time skipping)', async () => {
    const m = await fundedMerchant(s.api, 3_000);
    const w = await newWithdrawal(m.token);
    const transferId = await transferIdOf(w.id);
    const run = await handle(w.id).describe();
    s.simulator.control.setFaults({ outOfOrderCallbacks: true }); // holds the callback: it never comes
    try {
      s.simulator.control.completeTransfer(transferId);
      assert.equal(s.simulator.control.callbacks.held, 1);
      const done = await handle(w.id).result(); // time skips to the first poll
      assert.equal(done.status, 'COMPLETED');
      assert.ok(done.polls >= 1);
      assert.equal((await row(w.id)).status, 'COMPLETED');
      assert.ok(s.simulator.control.calls.some((c) => c.route === 'getTransfer' && c.path?.includes(transferId)));
    } finally {
      s.simulator.control.setFaults({}); // the late callback now arrives...
    }
    await s.simulator.control.callbacks.idle();
    // ...and finds the outcome applied: no second run, no second posting.
    assert.equal((await handle(w.id).describe()).runId, run.runId);
    assert.equal(
      (await s.knex('ledger_transactions').where({ merchant_id: m.merchantId, kind: 'withdrawal_completed' })).length,
      1,
    );
  });

  it('past the overall deadline it asks once more, then alerts an operator instead of guessing', async () => {
    // A 10-minute deadline (24 hours in production) so that skipping to it does not also skip a
    // day of every other suite's timers in a full run.
    const service = createWithdrawalsService({
      knex: s.knex,
      logger: s.logger,
      workflows: withdrawalWorkflowClient(s.client, s.taskQueue, { resultDeadlineMs: 10 * 60_000 }),
    });
    const m = await fundedMerchant(s.api, 3_000);
    const w = (await service.create(m.merchantId, { amount: 3_000, ...DEST })).withdraw;
    await transferIdOf(w.id);
    await s.env.sleep('11 minutes');
    const audit = await eventually(
      async () =>
        (await s.knex('audit_log').where({ action: 'withdrawal.transfer_unresolved', target_id: w.id }).first()) ??
        undefined,
      'the operator alert',
    );
    assert.equal(audit.target_type, 'withdrawal');
    assert.equal(audit.details.lastKnownStatus, 'PROCESSING');
    await assertBooksReconcile(s.knex, [m.merchantId]); // reserved in transit, still PROCESSING
    const note = await s
      .knex('notifications')
      .where({ reference: `withdrawal.delayed:${w.id}` })
      .first();
    assert.equal(note.merchant_id, m.merchantId);
    const state = await handle(w.id).query<WithdrawalWorkflowState>('state');
    assert.equal(state.phase, 'escalated');
    assert.ok(state.polls >= 4, `polled on a backoff before the deadline (${state.polls})`);
    // Still PROCESSING, the money still reserved in transit: nothing was guessed.
    assert.equal((await row(w.id)).status, 'PROCESSING');
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 3_000);
    // The operator settles it at the acquirer; its callback finishes the saga.
    await sandbox(m.token, w.id, 'complete');
    assert.equal((await handle(w.id).result()).status, 'COMPLETED');
    assert.equal(
      (await s.knex('audit_log').where({ action: 'withdrawal.transfer_unresolved', target_id: w.id })).length,
      1,
    );
  });

  it('the worker stopped right after sending the transfer: a new worker finishes the saga with exactly one transfer', async () => {
    const taskQueue = uniqueTaskQueue('withdrawals-crash');
    const workflows = withdrawalWorkflowClient(s.client, taskQueue);
    const service = createWithdrawalsService({ knex: s.knex, logger: s.logger, workflows });
    const activities = createActivities({ knex: s.knex, logger: s.logger, acquirer: s.acquirer });
    const bundle = await workflowBundle(require.resolve('../../workflows'));
    const ranSend: string[] = [];

    const m = await fundedMerchant(s.api, 2_000);
    let sent!: () => void;
    const sendDone = new Promise<void>((resolve) => (sent = resolve));
    const first = await Worker.create({
      connection: s.env.nativeConnection,
      taskQueue,
      workflowBundle: bundle,
      // No sticky queue: the task after the send goes to the shared queue, where the second worker
      // takes it at once (a sticky one would wait out its schedule-to-start timeout first).
      maxCachedWorkflows: 0,
      activities: {
        ...activities,
        sendWithdrawalTransfer: async (id: string) => {
          ranSend.push('first');
          const r = await activities.sendWithdrawalTransfer(id);
          sent();
          return r;
        },
      },
    });
    // The first worker stops as soon as the transfer has been sent (the debit was the endpoint's).
    const firstRun = first.runUntil(sendDone);
    const created = await service.create(m.merchantId, { amount: 2_000, ...DEST });
    await firstRun;
    assert.equal(first.getState(), 'STOPPED');
    assert.equal((await row(created.withdraw.id)).status, 'PROCESSING');

    const second = await Worker.create({
      connection: s.env.nativeConnection,
      taskQueue,
      workflowBundle: bundle,
      activities: {
        ...activities,
        sendWithdrawalTransfer: async (id: string) => {
          ranSend.push('second');
          return activities.sendWithdrawalTransfer(id);
        },
      },
    });
    await second.runUntil(async () => {
      const transferId = await transferIdOf(created.withdraw.id);
      s.simulator.control.completeTransfer(transferId);
      const done = await s.client.workflow.getHandle(withdrawalWorkflowId(created.withdraw.id)).result();
      assert.equal(done.status, 'COMPLETED');
    });
    assert.equal(transfersCreated(created.withdraw.id), 1);
    assert.equal(
      (await s.knex('ledger_transactions').where({ merchant_id: m.merchantId, kind: 'withdrawal_debit' })).length,
      1,
    );
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), { available: 0, pending: 0, blocked: 0, total: 0 });
    // The first worker sent it; a second send, if its answer was lost in the stop, was a replay.
    assert.equal(ranSend[0], 'first');
    await assertBooksReconcile(s.knex, [m.merchantId]);
  });

  it('a transfer sent twice (a retried activity) is one transfer at the acquirer', async () => {
    const m = await fundedMerchant(s.api, 1_000);
    const w = await newWithdrawal(m.token, 1_000);
    const transferId = await transferIdOf(w.id);
    // The step again, as a retry after a lost answer would run it: the same transfer comes back.
    const again = await s.lifecycle.sendTransfer(w.id);
    assert.equal(again.transferId, transferId);
    assert.equal(transfersCreated(w.id), 1);
    await sandbox(m.token, w.id, 'complete');
    assert.equal((await handle(w.id).result()).status, 'COMPLETED');
  });

  it('answers 201 when Temporal is down; the reconciler starts the saga, and restores a lost one', async () => {
    const m = await fundedMerchant(s.api, 2_000);
    const down = createWithdrawalsService({
      knex: s.knex,
      logger: s.logger,
      workflows: { ...s.workflows, start: () => Promise.reject(new Error('Temporal unavailable')) },
    });
    const created = await down.create(m.merchantId, { amount: 1_000, ...DEST });
    assert.equal(created.replay, false);
    assert.equal(created.withdraw.status, 'PROCESSING');
    await assert.rejects(handle(created.withdraw.id).describe());
    const lost = await newWithdrawal(m.token, 1_000);
    const lostRun = await handle(lost.id).describe();
    await transferIdOf(lost.id);
    await endRun(s.client, handle(lost.id).workflowId, undefined, 'simulating a lost workflow');

    const started = await reconcileWithdrawalWorkflows({
      knex: s.knex,
      workflows: s.workflows,
      logger: s.logger,
      batchSize: 3,
    });
    assert.ok(started >= 2);
    assert.equal((await handle(created.withdraw.id).describe()).status.name, 'RUNNING');
    const restored = await handle(lost.id).describe();
    assert.equal(restored.status.name, 'RUNNING');
    assert.notEqual(restored.runId, lostRun.runId);

    for (const id of [created.withdraw.id, lost.id]) {
      await sandbox(m.token, id, 'complete');
      assert.equal((await handle(id).result()).status, 'COMPLETED');
      assert.equal(transfersCreated(id), 1);
    }
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), { available: 0, pending: 0, blocked: 0, total: 0 });
    assert.equal((await ledger.getAccounts(s.knex, m.merchantId)).in_transit, 0);
  });

  it('pay a charge → settled → withdraw → completed (the docs/api.md walkthrough)', async () => {
    const m = await s.api.createMerchant({ feeBps: 0 });
    await s.api.makeReady(m.merchantId);
    await s.knex('merchants').where({ id: m.merchantId }).update({ settlement_delay_seconds: 60 });
    const charge = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount: 10_000, description: 'Pedido' },
    });
    assert.equal(charge.status, 201);
    assert.equal(
      (await s.api.request('POST', `/v1/sandbox/charges/${charge.body.charge.id}/pay`, { token: m.token, body: {} }))
        .status,
      202,
    );
    await eventually(
      async () =>
        (await s.knex('charges').where({ id: charge.body.charge.id }).first())?.status === 'PAID' ? true : undefined,
      'PAID',
    );
    await s.client.workflow.getHandle(`charge-${charge.body.charge.id}`).result(); // settlement after 60 s, skipped
    assert.equal((await ledger.getBalance(s.knex, m.merchantId)).available, 10_000);
    const requested = await counter('pixflow_withdrawals_total', { outcome: 'requested' });
    const completed = await counter('pixflow_withdrawals_total', { outcome: 'completed' });
    const w = await newWithdrawal(m.token, 10_000);
    await sandbox(m.token, w.id, 'complete');
    assert.equal((await handle(w.id).result()).status, 'COMPLETED');
    // /metrics counts the request and the outcome (other suites' withdrawals may add to them).
    assert.ok((await counter('pixflow_withdrawals_total', { outcome: 'requested' })) > requested);
    assert.ok((await counter('pixflow_withdrawals_total', { outcome: 'completed' })) > completed);
    assert.deepEqual(await ledger.getBalance(s.knex, m.merchantId), { available: 0, pending: 0, blocked: 0, total: 0 });
    assert.equal(await postingsSum(m.merchantId), 0);
    await assertBooksReconcile(s.knex, [m.merchantId]); // charge paid and settled, withdrawal completed
  });

  it('leaves the books of every merchant it touched reconciled (ledger invariant)', async () => {
    await assertBooksReconcile(s.knex);
  });
});
