/**
 * The charge workflow end to end: the sandbox pays through the simulator and the signed callback,
 * the real worker applies it, time skipping brings settlement and expiry. Ledger checks read the
 * database.
 */
import { paymentCredits } from '../support/ledger-postings';
import assert from 'node:assert/strict';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import { chargeWorkflowId } from '../../src/temporal/workflow-ids';
import * as ledger from '../../src/services/ledger/ledger';
import { CALLBACK_SECRET, eventually, ownChargesStack, readyMerchant, type ChargesStack } from '../support/charges';
import { reconcileChargeWorkflows } from '../../src/services/charges/reconciler';
import { chargeWorkflowClient, ENTITY_ID_ATTRIBUTE, MERCHANT_ID_ATTRIBUTE } from '../../src/temporal/clients/charge';
import { createLogger } from '../../src/lib/logger';
import { createKnex } from '../../src/db/knex';
import { createChargeLifecycle } from '../../src/services/charges/lifecycle';
import { counter } from '../support/metrics';
import { newTxid } from '../../src/pix';
import { callbackInboxStore } from '../../src/stores/callback-inbox';
import { pixWireOf } from '../../src/acquirer/wire';
import { createChargesService } from '../../src/services/charges/charges';
import { createOperatorCaseServices, createWorkflowClients } from '../../src/runtime/composition';
import { CLI_ACTOR } from '../../src/services/platform/audit';
import type { OperatorCaseView } from '../../src/services/platform/operator-cases';
import { endRun } from '../support/temporal';

interface Charge {
  id: string;
  txid: string;
  status: string;
  paidAt: string | null;
  amount: number;
}

describe('charge workflow', function () {
  this.timeout(120_000);
  let s: ChargesStack;

  before(async () => {
    // Its reconciler passes see only this file's charges (test/support/charges.ts `ownChargesStack`).
    s = await ownChargesStack('charge_flow');
    // Put the workflow clock days ahead of the database clock, as earlier suites of a full run do:
    // the workflow must never compare the two (deadlines are durations turned into its own time).
    await s.env.sleep('3 days');
  });

  async function newCharge(token: string, body: Record<string, unknown> = {}): Promise<Charge> {
    const res = await s.api.request<{ charge: Charge }>('POST', '/v1/charges', {
      token,
      body: { amount: 10_000, description: 'Pedido', ...body },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.charge;
  }

  const chargeRow = (id: string) => s.api.knex('charges').where({ id }).first();
  const untilStatus = (id: string, status: string) =>
    eventually(async () => {
      const row = await chargeRow(id);
      return row?.status === status ? row : undefined;
    }, `charge ${id} to be ${status}`);

  async function postingsSum(merchantId: string): Promise<number> {
    const row = await s.api
      .knex('ledger_postings as p')
      .join('ledger_transactions as t', 't.id', 'p.transaction_id')
      .where('t.merchant_id', merchantId)
      .sum({ s: 'p.amount' })
      .first();
    return Number(row?.s ?? 0);
  }
  /** Everything the merchant was paid is available (settled), and the ledger sums to zero. */
  async function assertAllAvailable(merchantId: string, amount: number): Promise<void> {
    assert.deepEqual(await ledger.getBalance(s.api.knex, merchantId), {
      available: amount,
      pending: 0,
      blocked: 0,
      total: amount,
    });
    assert.equal(await postingsSum(merchantId), 0);
  }

  it('pays through the sandbox: PAID with paidAt and payer, fee split, zero-sum ledger, then settles', async () => {
    const m = await readyMerchant(s.api);
    const charge = await newCharge(m.token);
    const pay = await s.api.request<{ endToEndId: string }>('POST', `/v1/sandbox/charges/${charge.id}/pay`, {
      token: m.token,
      body: { payer: { name: 'João Pagador', document: '12345678909' } },
    });
    assert.equal(pay.status, 202);
    const row = await untilStatus(charge.id, 'PAID');
    assert.equal(row.payer_name, 'João Pagador');
    assert.equal(row.payer_document, '12345678909');
    assert.equal(row.e2e_id, pay.body.endToEndId);
    const got = await s.api.request<{ charge: Charge }>('GET', `/v1/charges/${charge.id}`, { token: m.token });
    assert.ok(got.body.charge.paidAt);

    // 99 bps of 100.00 = 0.99 fee; the net waits in pending.
    assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
      available: 0,
      pending: 9_901,
      blocked: 0,
      total: 9_901,
    });
    assert.equal((await ledger.getAccounts(s.api.knex, m.merchantId)).fee_revenue, 99);
    assert.equal(await postingsSum(m.merchantId), 0);
    const event = await s.api
      .knex('events')
      .where({ reference: `charge.paid:${charge.id}` })
      .first();
    assert.equal(event.data.amount, 10_000);
    assert.equal(event.data.payer.name, 'João Pagador');

    // The run ends after settlement (1 day later): result() skips the time.
    await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).result();
    await assertAllAvailable(m.merchantId, 9_901);
  });

  it('a merchant that settles at once is settled by the payment itself: no timer, no settling step', async () => {
    const m = await readyMerchant(s.api);
    await s.api.knex('merchants').where({ id: m.merchantId }).update({ settlement_delay_seconds: 0 });
    const charge = await newCharge(m.token);
    const pay = await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
    assert.equal(pay.status, 202);
    const row = await untilStatus(charge.id, 'PAID');
    // Settled in the payment's own transaction: PAID is never seen unsettled.
    assert.ok(row.settled_at, 'settled with the payment');
    await assertAllAvailable(m.merchantId, 9_901);
    const handle = s.client.workflow.getHandle(chargeWorkflowId(charge.id));
    await handle.result();
    const scheduled = (await handle.fetchHistory()).events
      ?.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => typeof n === 'string');
    assert.deepEqual(scheduled, ['recordPayment']);
  });

  it('records a signed payment in two reads, one transaction of eight statements and the mark of its delivery, and answers with the charge as it left it', async () => {
    const m = await readyMerchant(s.api);
    await s.api.knex('merchants').where({ id: m.merchantId }).update({ settlement_delay_seconds: 0 });
    // A subscribed webhook, so the event has a delivery (this stack mounts no webhook routes and
    // runs no dispatcher; the delivery is canceled at the end, so no later suite picks it up).
    const webhookId = `wh_count_${m.merchantId}`;
    await s.api.knex('webhooks').insert({
      id: webhookId,
      merchant_id: m.merchantId,
      url: 'http://127.0.0.1:9/paid',
      events: JSON.stringify(['charge.paid']),
      secret_ciphertext: 'not used',
    });
    const first = await newCharge(m.token);
    const charge = await newCharge(m.token);
    // Its own knex, so that only this payment's statements are counted.
    const { url } = s.db;
    const knex = createKnex(url, 1);
    const statements: string[] = [];
    knex.on('query', (q: { sql: string }) => statements.push(q.sql));
    // As the worker holds it: with a delivery client, here one that only records what it starts.
    const started: string[] = [];
    try {
      const lifecycle = createChargeLifecycle({
        knex,
        acquirer: s.acquirer,
        logger: createLogger({ level: 'silent' }),
        webhookDeliveries: { start: (d) => Promise.resolve(started.push(d.deliveryId) > 0) },
      });
      const noticeOf = (c: Charge, e2eId: string) => ({
        txid: c.txid,
        endToEndId: e2eId,
        amount: 10_000,
        paidAt: new Date().toISOString(),
        payer: { name: 'Pagador', document: '12345678909' },
      });
      // Each payment as the callback route keeps it: a signed inbox row (docs/architecture.md
      // "Workflows carry intent; activities check facts").
      const signed = (n: ReturnType<typeof noticeOf>) =>
        callbackInboxStore(s.api.knex)
          .keep('pix', n.endToEndId, pixWireOf(n))
          .then(() => n);
      // The merchant's first movement also creates its ledger accounts; the count is of the next.
      await lifecycle.recordPayment(first.id, await signed(noticeOf(first, `E${Date.now()}1`.padEnd(32, '0'))));
      const notice = await signed(noticeOf(charge, `E${Date.now()}2`.padEnd(32, '0')));
      statements.length = 0;
      const recorded = await lifecycle.recordPayment(charge.id, notice);
      // The charge and its signed inbox row read; then BEGIN, the lock with what deciding needs,
      // one call for the ledger batch (payment and settlement, `ledger_post_batch`), the charge,
      // the inbox row, the event with its webhooks, the delivery (no NOTIFY: this process starts
      // it), COMMIT; after the commit, the delivery's start marked, one statement more than when
      // the dispatcher marked it (docs/performance.md "Payment to webhook: the timeline").
      assert.equal(statements.length, 11, statements.join('\n'));
      assert.doesNotMatch(statements.join('\n'), /pg_notify/);
      assert.match(statements[10] ?? '', /update "webhook_deliveries" set "workflow_started_at"/);
      assert.equal(recorded.kind, 'paid');
      assert.equal(recorded.snapshot?.status, 'PAID');
      assert.equal(recorded.snapshot?.settled, true);
      assert.deepEqual(recorded.snapshot?.openRefundIds, []);
      assert.deepEqual(recorded.snapshot, {
        ...(await lifecycle.loadSnapshot(charge.id)),
        expiresInMs: recorded.snapshot?.expiresInMs,
        settlesInMs: recorded.snapshot?.settlesInMs,
      });
      const deliveries = await s.api.knex('webhook_deliveries').where({ merchant_id: m.merchantId });
      assert.equal(deliveries.length, 2);
      assert.deepEqual([...started].sort(), deliveries.map((d: { id: string }) => d.id).sort());
      assert.ok(deliveries.every((d: { workflow_started_at: Date | null }) => d.workflow_started_at !== null));
      // A second delivery of the same payment is a duplicate: nothing moves, the same charge comes back.
      statements.length = 0;
      const again = await lifecycle.recordPayment(charge.id, notice);
      assert.equal(again.kind, 'duplicate');
      assert.equal(again.snapshot?.status, 'PAID');
      await assertAllAvailable(m.merchantId, 2 * 9_901);
    } finally {
      await knex.destroy();
      await s.api.knex('webhook_deliveries').where({ webhook_id: webhookId }).update({ status: 'CANCELED' });
      await s.api.knex('webhooks').where({ id: webhookId }).update({ status: 'INACTIVE' });
    }
  });

  it('expires an unpaid charge: CANCELED and the cob removed at the acquirer', async () => {
    const m = await readyMerchant(s.api);
    const charge = await newCharge(m.token, { expiresIn: 60 });
    await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).result();
    assert.equal((await chargeRow(charge.id)).status, 'CANCELED');
    assert.equal(s.simulator.control.getCob(charge.txid)?.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
  });

  describe('expiry while the acquirer cannot be asked (docs/architecture.md "Charges: how they work", Expiry)', () => {
    const logger = createLogger({ level: 'silent' });
    /** Refuses every `GET /cob` (403: final at once, as bad credentials are); `hold` keeps callbacks from going out. */
    const refuseGetCob = (hold: boolean) =>
      s.simulator.control.setFaults({
        failNext: { route: 'getCob', times: 100_000, status: 403 },
        ...(hold ? { outOfOrderCallbacks: true } : {}),
      });
    /** The charge's cases, as `npm run ops -- cases list --subject <id>` shows them. */
    const casesOf = (chargeId: string, workflows?: ReturnType<typeof createWorkflowClients>) =>
      createOperatorCaseServices({ knex: s.api.knex, logger, workflows }).list({ subjectId: chargeId });
    const untilCase = (chargeId: string) =>
      eventually(async () => {
        const [c] = await casesOf(chargeId);
        return c;
      }, `the case of ${chargeId}`);

    it('a paid cob whose callback was lost is not canceled: PENDING with a case, then credited when the acquirer answers', async () => {
      const m = await readyMerchant(s.api);
      const charge = await newCharge(m.token, { expiresIn: 60 });
      refuseGetCob(true);
      try {
        await s.simulator.control.payCob(charge.txid); // its callback is held: as good as lost for now
        // Past the expiry (the first task at +1 min reads 1 min left, so it lands at +2 min).
        await s.env.sleep('3 minutes');
        const opened: OperatorCaseView = await untilCase(charge.id);
        assert.equal(opened.kind, 'EXPIRY_ACQUIRER_UNREACHABLE');
        assert.equal(opened.status, 'OPEN');
        assert.deepEqual([opened.subjectType, opened.merchantId], ['charge', m.merchantId]);
        assert.deepEqual(opened.actions, ['acknowledge', 'retry']);
        assert.match(opened.reason, /cannot be asked/);
        assert.equal((await chargeRow(charge.id)).status, 'PENDING', 'not canceled by guess');
        assert.equal(s.simulator.control.getCob(charge.txid)?.status, 'CONCLUIDA', 'the cob was not removed');
        const audit = await s.api.knex('audit_log').where({ action: 'case.opened', target_id: charge.id });
        assert.equal(audit.length, 1);

        // The acquirer answers again (callbacks still held): the next question, 5 minutes on, finds the payment.
        s.simulator.control.setFaults({ outOfOrderCallbacks: true });
        await s.env.sleep('6 minutes');
        await untilStatus(charge.id, 'PAID');
      } finally {
        s.simulator.control.setFaults({}); // releases the held callback: a duplicate by now
      }
      await s.simulator.control.callbacks.idle();
      assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
        available: 0,
        pending: 9_901,
        blocked: 0,
        total: 9_901,
      });
      // What reached pending, not a count of transactions: the net once.
      assert.deepEqual(await paymentCredits(s.api.knex, m.merchantId), [9_901]);
      assert.ok(
        await s.api
          .knex('events')
          .where({ reference: `charge.paid:${charge.id}` })
          .first(),
      );
      assert.equal(await postingsSum(m.merchantId), 0);
      const [closed] = await casesOf(charge.id);
      assert.deepEqual(
        [closed?.status, closed?.resolvedBy, closed?.resolution],
        ['RESOLVED', 'system', 'the acquirer answered: the cob was paid'],
      );
      await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).result(); // settles, then ends
    });

    it("an operator's retry asks again at once: an unpaid cob then expires as usual", async () => {
      const m = await readyMerchant(s.api);
      const charge = await newCharge(m.token, { expiresIn: 60 });
      refuseGetCob(false);
      let opened: OperatorCaseView;
      try {
        await s.env.sleep('3 minutes');
        opened = await untilCase(charge.id);
      } finally {
        s.simulator.control.setFaults({});
      }
      const workflows = createWorkflowClients(s.client, {
        TEMPORAL_TASK_QUEUE: s.taskQueue,
        TEMPORAL_SEARCH_ATTRIBUTES: true,
      });
      const cases = createOperatorCaseServices({ knex: s.api.knex, logger, workflows });
      await assert.rejects(cases.resolve(CLI_ACTOR, opened.id, 'release'), /accepts acknowledge, retry, not release/);
      // Without a Temporal client nothing could wake a workflow that stopped asking: refused, the case stays open.
      await assert.rejects(
        createOperatorCaseServices({ knex: s.api.knex, logger }).resolve(CLI_ACTOR, opened.id, 'retry'),
        /TEMPORAL_ADDRESS/,
      );
      assert.equal((await cases.get(opened.id)).status, 'OPEN');
      const resolved = await cases.resolve(CLI_ACTOR, opened.id, 'retry', 'acquirer credentials rotated');
      assert.deepEqual(
        [resolved.status, resolved.resolution, resolved.resolvedBy],
        ['RESOLVED', 'retry: acquirer credentials rotated', 'cli'],
      );
      await untilStatus(charge.id, 'CANCELED');
      await eventually(
        async () =>
          s.simulator.control.getCob(charge.txid)?.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR' ? true : undefined,
        'cob removal',
      );
      assert.equal((await casesOf(charge.id)).length, 1, 'the answer opened nothing new');
      assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
        available: 0,
        pending: 0,
        blocked: 0,
        total: 0,
      });
    });
  });

  it('applies duplicate payment callbacks exactly once', async () => {
    s.simulator.control.setFaults({ duplicateCallbacks: true });
    try {
      const m = await readyMerchant(s.api);
      const charge = await newCharge(m.token);
      const { endToEndId } = await s.simulator.control.payCob(charge.txid);
      await s.simulator.control.callbacks.idle();
      await untilStatus(charge.id, 'PAID');
      // Replay the same callback by hand too.
      const body = JSON.stringify({
        pix: [{ endToEndId, txid: charge.txid, valor: '100.00', horario: new Date().toISOString() }],
      });
      const res = await fetch(`${s.api.baseUrl}/v1/acquirer/pix`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [CALLBACK_SIGNATURE_HEADER]: signCallback(CALLBACK_SECRET, body),
        },
        body,
      });
      assert.equal(res.status, 200);
      // The workflow's own view catches up once it has re-read the charge after the payment.
      await eventually(async () => {
        const state = await s.client.workflow
          .getHandle(chargeWorkflowId(charge.id))
          .query<{ chargeStatus: string }>('state');
        return state.chargeStatus === 'PAID' ? true : undefined;
      }, 'the workflow to see PAID');
      assert.deepEqual(await paymentCredits(s.api.knex, m.merchantId), [9_901], 'the net credited to pending once');
      assert.equal((await ledger.getBalance(s.api.knex, m.merchantId)).pending, 9_901);
    } finally {
      s.simulator.control.setFaults({});
    }
  });

  it('rejects unsigned and badly signed callbacks with 401', async () => {
    const body = JSON.stringify({
      pix: [{ endToEndId: 'E1', txid: 'x'.repeat(30), valor: '1.00', horario: new Date().toISOString() }],
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${s.api.baseUrl}/v1/acquirer/pix`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    assert.equal((await post({})).status, 401);
    assert.equal((await post({ [CALLBACK_SIGNATURE_HEADER]: signCallback('wrong-secret', body) })).status, 401);
    assert.equal((await post({ [CALLBACK_SIGNATURE_HEADER]: 'zz' })).status, 401);
    const tampered = body.replace('1.00', '9.00');
    const res = await fetch(`${s.api.baseUrl}/v1/acquirer/pix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CALLBACK_SIGNATURE_HEADER]: signCallback(CALLBACK_SECRET, body) },
      body: tampered,
    });
    assert.equal(res.status, 401);
  });

  it('refunds a payment that arrives after the charge was canceled', async () => {
    const m = await readyMerchant(s.api);
    const charge = await newCharge(m.token);
    const cancel = await s.api.request('POST', `/v1/charges/${charge.id}/cancel`, { token: m.token });
    assert.equal(cancel.status, 200);
    await eventually(
      async () =>
        s.simulator.control.getCob(charge.txid)?.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR' ? true : undefined,
      'cob removal',
    );
    const { endToEndId } = await s.simulator.control.payCob(charge.txid);
    const refund = await eventually(async () => {
      const r = await s.api
        .knex('charge_refunds')
        .where({ charge_id: charge.id, e2e_id: endToEndId, status: 'CONFIRMED' })
        .first();
      return r ?? undefined;
    }, 'automatic refund of the late payment');
    assert.equal(refund.kind, 'UNPAYABLE_PAYMENT');
    assert.equal((await chargeRow(charge.id)).status, 'CANCELED');
    assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
      available: 0,
      pending: 0,
      blocked: 0,
      total: 0,
    });
    assert.equal(await postingsSum(m.merchantId), 0);
  });

  it('refunds a paid charge: partial keeps PAID, full makes REFUNDED, each with charge.refunded', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await newCharge(m.token);
    await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
    await untilStatus(charge.id, 'PAID');
    const refunds = (outcome: string): Promise<number> =>
      counter('pixflow_refunds_total', { outcome, kind: 'merchant' });
    const [requested, confirmed] = [await refunds('requested'), await refunds('confirmed')];
    const partial = await s.api.request<{ refund: { id: string } }>('POST', `/v1/charges/${charge.id}/refund`, {
      token: m.token,
      body: { amount: 2_500, reason: 'item faltando' },
    });
    assert.equal(partial.status, 202);
    const ev = await eventually(
      async () =>
        (await s.api
          .knex('events')
          .where({ reference: `charge.refunded:${partial.body.refund.id}` })
          .first()) ?? undefined,
      'charge.refunded',
    );
    assert.equal(ev.data.amount, '25.00');
    assert.equal(ev.data.status, 'closed');
    assert.equal((await chargeRow(charge.id)).status, 'PAID');
    const over = await s.api.request('POST', `/v1/charges/${charge.id}/refund`, {
      token: m.token,
      body: { amount: 7_501 },
    });
    assert.equal(over.status, 400);
    const rest = await s.api.request('POST', `/v1/charges/${charge.id}/refund`, { token: m.token, body: {} });
    assert.equal(rest.status, 202);
    await untilStatus(charge.id, 'REFUNDED');
    assert.equal((await ledger.getBalance(s.api.knex, m.merchantId)).total, 0);
    assert.equal(await postingsSum(m.merchantId), 0);
    const again = await s.api.request('POST', `/v1/charges/${charge.id}/refund`, { token: m.token, body: {} });
    assert.equal(again.status, 400);
    // /metrics counts both refunds requested and confirmed; the refused requests count nothing.
    assert.equal((await refunds('requested')) - requested, 2);
    assert.equal((await refunds('confirmed')) - confirmed, 2);
  });

  it('turns a devolução the acquirer refuses into a FAILED refund: the money goes back to available', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await newCharge(m.token);
    await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
    await untilStatus(charge.id, 'PAID');
    const failed = await counter('pixflow_refunds_total', { outcome: 'failed', kind: 'merchant' });
    const refused = await counter('pixflow_acquirer_errors_total', { operation: 'requestRefund', kind: 'rejected' });
    s.simulator.control.setFaults({ failNext: { route: 'refund', times: 1, status: 400 } });
    try {
      const res = await s.api.request<{ refund: { id: string } }>('POST', `/v1/charges/${charge.id}/refund`, {
        token: m.token,
        body: { amount: 2_500 },
      });
      assert.equal(res.status, 202);
      const refund = await eventually(async () => {
        const r = await s.api.knex('charge_refunds').where({ id: res.body.refund.id }).first();
        return r?.status === 'FAILED' ? r : undefined;
      }, 'the refused refund to be FAILED');
      assert.match(refund.failure_reason, /refused by the acquirer/);
      assert.equal((await counter('pixflow_refunds_total', { outcome: 'failed', kind: 'merchant' })) - failed, 1);
      assert.ok(
        (await counter('pixflow_acquirer_errors_total', { operation: 'requestRefund', kind: 'rejected' })) > refused,
      );
    } finally {
      s.simulator.control.setFaults({});
    }
    // Taken from pending (nothing was available), given back to available; no event, still PAID.
    assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
      available: 2_500,
      pending: 7_500,
      blocked: 0,
      total: 10_000,
    });
    assert.equal((await chargeRow(charge.id)).status, 'PAID');
    assert.equal(
      (await s.api.knex('events').where({ type: 'charge.refunded' }).whereRaw(`data->>'chargeId' = ?`, [charge.id]))
        .length,
      0,
    );
    // The workflow carries on: settlement moves what is left of this charge's net.
    await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).result();
    assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
      available: 10_000,
      pending: 0,
      blocked: 0,
      total: 10_000,
    });
    assert.equal(await postingsSum(m.merchantId), 0);
  });

  it("settles only what a charge's own refunds left of its net, never another charge's pending", async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const a = await newCharge(m.token);
    const b = await newCharge(m.token);
    for (const c of [a, b]) {
      await s.api.request('POST', `/v1/sandbox/charges/${c.id}/pay`, { token: m.token, body: {} });
      await untilStatus(c.id, 'PAID');
    }
    // A is refunded in full before settlement; with nothing available it comes out of pending.
    assert.equal((await s.api.request('POST', `/v1/charges/${a.id}/refund`, { token: m.token, body: {} })).status, 202);
    await untilStatus(a.id, 'REFUNDED');
    assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
      available: 0,
      pending: 10_000,
      blocked: 0,
      total: 10_000,
    });
    // A's settlement (run directly; the workflow's own later run is then a no-op) has nothing left to move:
    // the 10,000 still pending are B's and wait for B's delay.
    await s.lifecycle.settle(a.id);
    assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
      available: 0,
      pending: 10_000,
      blocked: 0,
      total: 10_000,
    });
    await s.client.workflow.getHandle(chargeWorkflowId(b.id)).result();
    assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
      available: 10_000,
      pending: 0,
      blocked: 0,
      total: 10_000,
    });
    assert.equal(await postingsSum(m.merchantId), 0);
  });

  it('refuses a refund the balance cannot cover (400) and records nothing', async () => {
    const m = await readyMerchant(s.api); // 99 bps: the balance holds 99.01 of a 100.00 charge
    const charge = await newCharge(m.token);
    await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
    await untilStatus(charge.id, 'PAID');
    const res = await s.api.request<{ message: string }>('POST', `/v1/charges/${charge.id}/refund`, {
      token: m.token,
      body: {},
    });
    assert.equal(res.status, 400);
    assert.match(res.body.message, /Insufficient balance/);
    assert.equal((await s.api.knex('charge_refunds').where({ charge_id: charge.id })).length, 0);
    assert.deepEqual(await ledger.getBalance(s.api.knex, m.merchantId), {
      available: 0,
      pending: 9_901,
      blocked: 0,
      total: 9_901,
    });
    // What the balance can cover goes through.
    const partial = await s.api.request('POST', `/v1/charges/${charge.id}/refund`, {
      token: m.token,
      body: { amount: 9_901 },
    });
    assert.equal(partial.status, 202);
  });

  it("sandbox pay: the merchant's own charges only; a charge without a cob is 400", async () => {
    const a = await readyMerchant(s.api);
    const b = await readyMerchant(s.api);
    const charge = await newCharge(a.token);
    const pay = (token: string, id: string, body: unknown = {}) =>
      s.api.request<{ message: string }>('POST', `/v1/sandbox/charges/${id}/pay`, { token, body });
    assert.equal((await pay(b.token, charge.id)).status, 404);
    assert.equal((await pay(a.token, 'ch_unknown')).status, 404);
    assert.equal((await pay(a.token, charge.id, { payer: { name: 'X', document: '123' } })).status, 400);
    s.simulator.control.setFaults({ failNext: { route: 'createCob', times: 3, status: 500 } });
    const failed = await s.api.request<{ message: string }>('POST', '/v1/charges', {
      token: a.token,
      body: { amount: 100, description: 'falha' },
    });
    s.simulator.control.setFaults({});
    assert.equal(failed.status, 502);
    const failedRow = await s.api.knex('charges').where({ merchant_id: a.merchantId, status: 'FAILED' }).first();
    const res = await pay(a.token, failedRow.id);
    assert.equal(res.status, 400);
    assert.match(res.body.message, /no cob/);
  });

  it('cancels only a PENDING charge', async () => {
    const m = await readyMerchant(s.api);
    const charge = await newCharge(m.token);
    assert.equal((await s.api.request('POST', `/v1/charges/${charge.id}/cancel`, { token: m.token })).status, 200);
    assert.equal((await s.api.request('POST', `/v1/charges/${charge.id}/cancel`, { token: m.token })).status, 400);
  });

  it('answers 201 when Temporal is down at creation; the reconciler then starts the workflow', async () => {
    const m = await readyMerchant(s.api);
    const real = chargeWorkflowClient(s.client, s.taskQueue);
    const down = new Error('Temporal unavailable');
    const charges = createChargesService({
      knex: s.api.knex,
      config: { CHARGE_LIST_CACHE_MS: 3000 },
      logger: createLogger({ level: 'silent' }),
      acquirer: s.acquirer,
      workflows: { ...real, start: () => Promise.reject(down) },
    });
    const created = await charges.create(m.merchantId, { amount: 500, description: 'Temporal fora', expiresIn: 3600 });
    assert.equal(created.replay, false);
    assert.ok(created.charge.qrCode);
    const handle = s.client.workflow.getHandle(chargeWorkflowId(created.charge.id));
    await assert.rejects(handle.describe());
    await reconcileChargeWorkflows({ knex: s.api.knex, workflows: real, logger: createLogger({ level: 'silent' }) });
    assert.equal((await handle.describe()).status.name, 'RUNNING');
    await s.api.request('POST', `/v1/sandbox/charges/${created.charge.id}/pay`, { token: m.token, body: {} });
    await untilStatus(created.charge.id, 'PAID');
  });

  it('restarts a lost charge workflow from the database, which then still takes the payment', async () => {
    const m = await readyMerchant(s.api);
    const charge = await newCharge(m.token);
    const handle = s.client.workflow.getHandle(chargeWorkflowId(charge.id));
    const described = await handle.describe();
    const firstRun = described.runId;
    // Operators find it by merchant: memo and search attributes carry the ids.
    assert.deepEqual(described.memo, { chargeId: charge.id, merchantId: m.merchantId });
    assert.deepEqual(described.typedSearchAttributes.get(MERCHANT_ID_ATTRIBUTE), m.merchantId);
    assert.deepEqual(described.typedSearchAttributes.get(ENTITY_ID_ATTRIBUTE), charge.id);
    await endRun(s.client, handle.workflowId, undefined, 'simulating a lost workflow');
    assert.equal((await handle.describe()).status.name, 'TERMINATED');
    const started = await reconcileChargeWorkflows({
      knex: s.api.knex,
      workflows: chargeWorkflowClient(s.client, s.taskQueue),
      logger: createLogger({ level: 'silent' }),
      batchSize: 7,
    });
    assert.ok(started >= 1);
    // An interrupted creation (the process died after the cob was made, before the BR Code was
    // stored; older than two minutes) is failed, not restarted...
    const orphanId = `ch_orphan_${Date.now()}`;
    const orphanTxid = newTxid();
    await s.acquirer.createCob({ txid: orphanTxid, amount: 100, expiresIn: 3600, key: 'loja@example.com' });
    await s.api.knex('charges').insert({
      id: orphanId,
      merchant_id: m.merchantId,
      amount: 100,
      description: 'interrupted',
      expires_in: 60,
      txid: orphanTxid,
      expires_at: s.api.knex.raw(`now()`),
      created_at: s.api.knex.raw(`now() - interval '5 minutes'`),
    });
    await reconcileChargeWorkflows({
      knex: s.api.knex,
      workflows: chargeWorkflowClient(s.client, s.taskQueue),
      logger: createLogger({ level: 'silent' }),
    });
    assert.equal((await chargeRow(orphanId)).status, 'FAILED');
    // ...and since its txid was stored before the acquirer was called, a payment of that cob finds
    // the charge and goes back to the payer instead of being stranded.
    const { endToEndId } = await s.simulator.control.payCob(orphanTxid);
    const back = await eventually(async () => {
      const r = await s.api
        .knex('charge_refunds')
        .where({ charge_id: orphanId, e2e_id: endToEndId, status: 'CONFIRMED' })
        .first();
      return r ?? undefined;
    }, 'the payment of the interrupted charge to be returned');
    assert.equal(back.kind, 'UNPAYABLE_PAYMENT');
    const after = await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).describe();
    assert.equal(after.status.name, 'RUNNING');
    assert.notEqual(after.runId, firstRun);
    await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
    await untilStatus(charge.id, 'PAID');
  });
});
