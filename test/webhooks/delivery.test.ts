/**
 * Webhook delivery end to end: events recorded through recordEvent (or by a real charge) become
 * deliveries, the dispatcher starts their workflows, the real worker POSTs to a real receiver that
 * verifies the signature on the raw bytes; time skipping jumps the retry timers.
 */
import { counter } from '../support/metrics';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { WEBHOOK_EVENT_TYPES } from '../../src/contracts/webhook-events';
import { recordEvent, type RecordEventInput } from '../../src/services/platform/events';
import { WEBHOOK_USER_AGENT } from '../../src/services/webhooks/delivery';
import { webhooksStore } from '../../src/stores/webhooks';
import { webhookDeliveryWorkflowId } from '../../src/temporal/workflow-ids';
import { assertEventData, SAMPLE_EVENT_DATA, webhookStack, type WebhookStack } from '../support/webhooks';
import { chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';
import {
  receiverVerifiesSignature,
  receiverVerifiesStandard,
  standardHeadersOf,
  standardwebhooksVerifies,
  svixVerifies,
} from '../support/webhook-signature';

interface LogRow {
  attempt: number;
  status_code: number | null;
  success: boolean;
  error: string | null;
  response: string | null;
  payload: string;
}

describe('webhook delivery', function () {
  this.timeout(120_000);
  let s: WebhookStack;

  before(async () => {
    s = await webhookStack();
  });

  const path = (label: string): string => `/${label}-${crypto.randomBytes(4).toString('hex')}`;
  const logsOf = (deliveryId: string): Promise<LogRow[]> =>
    s.knex('webhook_delivery_logs').where({ delivery_id: deliveryId }).orderBy('attempt') as Promise<LogRow[]>;
  const deliveryRow = (deliveryId: string) => s.knex('webhook_deliveries').where({ id: deliveryId }).first();
  /** Publishes `type`'s sample event for the merchant and answers its delivery to `hookId` once started. */
  const publishSample = async (merchantId: string, type: keyof typeof SAMPLE_EVENT_DATA, hookId: string) =>
    s.startedDelivery(await s.publish(merchantId, type, SAMPLE_EVENT_DATA[type] as Record<string, unknown>), hookId);

  it('delivers a signed envelope: exact stored bytes, headers, 2xx is success, one attempt logged', async () => {
    const m = await s.api.createMerchant();
    const p = path('signed');
    const hook = await s.createWebhook(m.token, { path: p, events: ['pixkey.updated'] });
    const delivery = await publishSample(m.merchantId, 'pixkey.updated', hook.id);
    assert.deepEqual(await s.deliveryResult(delivery.id), { status: 'SUCCEEDED', lastAttempt: 1 });

    const [req] = s.receiver.requests(p);
    assert.ok(req);
    assert.equal(req.signatureValid, true);
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers['user-agent'], WEBHOOK_USER_AGENT);
    assert.match(WEBHOOK_USER_AGENT, /^pixflow-webhooks\/\d+\.\d+\.\d+/);
    assert.equal(req.headers['x-webhook-id'], delivery.id);
    assert.match(String(req.headers['x-webhook-timestamp']), /^\d{10}$/);
    assert.equal(req.headers['x-webhook-secret'], undefined, 'the raw secret is not sent by default');
    assert.equal(
      req.headers['x-webhook-signature'],
      crypto.createHmac('sha256', hook.secret).update(req.raw).digest('hex'),
    );
    // Standard Webhooks: the same delivery id and timestamp, one v1 signature by the one secret.
    assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(req.headers['webhook-id'], delivery.id);
    assert.equal(req.headers['webhook-timestamp'], req.headers['x-webhook-timestamp']);
    assert.match(String(req.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(req.standard, { standardwebhooks: true, svix: true, independent: true });
    assert.deepEqual(Object.keys(req.body).sort(), ['data', 'event', 'timestamp']);
    assert.equal(req.body.event, 'pixkey.updated');
    assert.equal(new Date(req.body.timestamp).toISOString(), req.body.timestamp);
    assertEventData('pixkey.updated', req.body.data);

    const row = await deliveryRow(delivery.id);
    assert.equal(row.payload, req.raw.toString('utf8'), 'the bytes sent are the bytes stored');
    assert.equal(row.status, 'SUCCEEDED');
    assert.equal(row.attempts, 1);
    const logs = await logsOf(delivery.id);
    assert.equal(logs.length, 1);
    assert.equal(logs[0]?.status_code, 200);
    assert.equal(logs[0]?.success, true);
    assert.equal(logs[0]?.response, 'ok');
    assert.equal(logs[0]?.payload, row.payload);
  });

  it('sends x-webhook-secret only when the deployment enables it', async () => {
    const m = await s.api.createMerchant();
    const p = path('legacy');
    const hook = await s.createWebhook(m.token, { path: p });
    s.withDeliverySettings(hook.id, { sendSecretHeader: true });
    const delivery = await publishSample(m.merchantId, 'withdraw.failed', hook.id);
    assert.equal((await s.deliveryResult(delivery.id)).status, 'SUCCEEDED');
    assert.equal(s.receiver.requests(p)[0]?.headers['x-webhook-secret'], hook.secret);
  });

  it('charge.paid and charge.refunded of a real charge arrive with exactly their data fields', async () => {
    const c: ChargesStack = await chargesStack();
    const m = await readyMerchant(c.api);
    const p = path('charges');
    const hook = await s.createWebhook(m.token, { path: p, events: ['charge.paid', 'charge.refunded'] });
    const created = await c.api.request<{ charge: { id: string; txid: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount: 2_990, description: 'Pedido' },
    });
    assert.equal(created.status, 201);
    const charge = created.body.charge;
    const paid = await c.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, {
      token: m.token,
      body: { payer: { name: 'João Pagador', document: '12345678909' } },
    });
    assert.equal(paid.status, 202);
    const [paidReq] = await s.receiver.waitFor(p, 1);
    assert.ok(paidReq?.signatureValid);
    assert.equal(paidReq.body.event, 'charge.paid');
    assertEventData('charge.paid', paidReq.body.data);
    assert.equal(paidReq.body.data.chargeId, charge.id);
    assert.equal(paidReq.body.data.txid, charge.txid);
    assert.equal(paidReq.body.data.amount, 2_990);
    assert.deepEqual(paidReq.body.data.payer, { name: 'João Pagador', document: '12345678909' });

    const refund = await c.api.request('POST', `/v1/charges/${charge.id}/refund`, {
      token: m.token,
      body: { amount: 1_000, reason: 'item faltando' },
    });
    assert.equal(refund.status, 202, JSON.stringify(refund.body));
    const refundedReq = (await s.receiver.waitFor(p, 2))[1];
    assert.ok(refundedReq?.signatureValid);
    assert.equal(refundedReq.body.event, 'charge.refunded');
    assertEventData('charge.refunded', refundedReq.body.data);
    assert.equal(refundedReq.body.data.chargeId, charge.id);
    assert.equal(refundedReq.body.data.amount, '10.00');
    assert.equal(refundedReq.body.data.status, 'closed');
    assert.equal(refundedReq.body.data.reason, 'item faltando');
    assert.equal(hook.events.length, 2);
  });

  it('all-events mode receives every event of the catalogue; every envelope is signed', async () => {
    const m = await s.api.createMerchant();
    const p = path('all');
    const hook = await s.createWebhook(m.token, { path: p, events: [] });
    assert.deepEqual(hook.events, []);
    for (const type of WEBHOOK_EVENT_TYPES)
      await s.publish(m.merchantId, type, SAMPLE_EVENT_DATA[type] as Record<string, unknown>);
    const got = await s.receiver.waitFor(p, WEBHOOK_EVENT_TYPES.length);
    assert.deepEqual(got.map((r) => r.body.event).sort(), [...WEBHOOK_EVENT_TYPES].sort());
    for (const r of got) {
      assert.equal(r.signatureValid, true);
      assert.deepEqual(r.standard, { standardwebhooks: true, svix: true, independent: true }, r.body.event);
      assertEventData(r.body.event, r.body.data);
    }
  });

  it("during a rotation's overlap every event of the catalogue verify with the old and the new secret; the seed header uses the new", async () => {
    const m = await s.api.createMerchant();
    const p = path('overlap');
    const hook = await s.createWebhook(m.token, { path: p, events: [] });
    const rotated = await s.api.request<{ webhook: { secret: string; previousSecretExpiresAt: string | null } }>(
      'POST',
      `/v1/webhooks/merchant/${hook.id}/rotate-secret`,
      { token: m.token },
    );
    assert.equal(rotated.status, 200);
    const fresh = rotated.body.webhook.secret;
    // docs/api.md "Rotating the secret": 24 h by default.
    const overlapEnds = Date.parse(rotated.body.webhook.previousSecretExpiresAt ?? '');
    assert.ok(
      Math.abs(overlapEnds - (Date.now() + 86400_000)) < 600_000,
      rotated.body.webhook.previousSecretExpiresAt ?? 'null',
    );
    s.receiver.expect(p, fresh, [hook.secret]);
    for (const type of WEBHOOK_EVENT_TYPES)
      await s.publish(m.merchantId, type, SAMPLE_EVENT_DATA[type] as Record<string, unknown>);
    const got = await s.receiver.waitFor(p, WEBHOOK_EVENT_TYPES.length);
    assert.deepEqual(got.map((r) => r.body.event).sort(), [...WEBHOOK_EVENT_TYPES].sort());
    for (const r of got) {
      assert.equal(r.answered, 200, r.body.event);
      assert.equal(String(r.headers['webhook-signature']).split(' ').length, 2, 'one v1 entry per valid secret');
      assert.deepEqual(r.standard, { standardwebhooks: true, svix: true, independent: true }, r.body.event);
      // The seed's single hex signature is the new secret's, checked independently.
      assert.equal(receiverVerifiesSignature(fresh, r.raw, String(r.headers['x-webhook-signature'])), true);
      assert.equal(receiverVerifiesSignature(hook.secret, r.raw, String(r.headers['x-webhook-signature'])), false);
    }

    // Once the overlap is over, only the new secret signs.
    await s
      .knex('webhooks')
      .where({ id: hook.id })
      .update({ previous_secret_expires_at: s.knex.raw(`now() - interval '1 second'`) });
    const p2 = path('overlap-over');
    await s.api.request('PATCH', `/v1/webhooks/merchant/${hook.id}`, {
      token: m.token,
      body: { url: s.receiver.url(p2) },
    });
    s.receiver.expect(p2, fresh);
    await s.publish(m.merchantId, 'pixkey.updated', SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>);
    const [after] = await s.receiver.waitFor(p2, 1);
    assert.ok(after);
    assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1);
    assert.deepEqual(after.standard, { standardwebhooks: true, svix: true, independent: true });
    const raw = after.raw;
    const headers = standardHeadersOf(after.headers);
    assert.equal(standardwebhooksVerifies(hook.secret, raw, headers), false, 'the old secret no longer verifies');
    assert.equal(svixVerifies(hook.secret, raw, headers), false);
  });

  it('a replay with a fresh timestamp and the captured signature is rejected by every verifier', async () => {
    const m = await s.api.createMerchant();
    const p = path('replay');
    const hook = await s.createWebhook(m.token, { path: p, events: ['withdraw.completed'] });
    await s.publish(
      m.merchantId,
      'withdraw.completed',
      SAMPLE_EVENT_DATA['withdraw.completed'] as Record<string, unknown>,
    );
    const [captured] = await s.receiver.waitFor(p, 1);
    assert.ok(captured);
    const original = standardHeadersOf(captured.headers);
    assert.equal(standardwebhooksVerifies(hook.secret, captured.raw, original), true, 'the captured request verifies');
    const replayed = { ...original, 'webhook-timestamp': String(Number(original['webhook-timestamp']) + 120) };
    assert.equal(standardwebhooksVerifies(hook.secret, captured.raw, replayed), false);
    assert.equal(svixVerifies(hook.secret, captured.raw, replayed), false);
    assert.equal(receiverVerifiesStandard(hook.secret, captured.raw, replayed), false);
    // Another delivery id with the captured signature fails too; an old timestamp is refused as stale.
    assert.equal(
      standardwebhooksVerifies(hook.secret, captured.raw, { ...original, 'webhook-id': 'whd_other' }),
      false,
    );
    const stale = Math.floor(Date.now() / 1000) + 600;
    assert.equal(receiverVerifiesStandard(hook.secret, captured.raw, original, stale), false);
  });

  it('filters by subscription: only webhooks subscribed to the type get a delivery', async () => {
    const m = await s.api.createMerchant();
    const paidPath = path('only-paid');
    const withdrawPath = path('only-withdraw');
    const paidHook = await s.createWebhook(m.token, { path: paidPath, events: ['charge.paid'] });
    const withdrawHook = await s.createWebhook(m.token, {
      path: withdrawPath,
      events: ['withdraw.completed', 'withdraw.failed'],
    });
    const eventId = await s.publish(
      m.merchantId,
      'charge.paid',
      SAMPLE_EVENT_DATA['charge.paid'] as Record<string, unknown>,
    );
    const delivery = await s.startedDelivery(eventId, paidHook.id);
    assert.equal((await s.deliveryResult(delivery.id)).status, 'SUCCEEDED');
    assert.equal(s.receiver.requests(paidPath).length, 1);
    assert.equal(s.receiver.requests(withdrawPath).length, 0);
    assert.equal((await s.knex('webhook_deliveries').where({ event_id: eventId })).length, 1);
    assert.equal((await s.knex('webhook_deliveries').where({ webhook_id: withdrawHook.id })).length, 0);

    // Another merchant's events never reach this merchant's webhooks.
    const other = await s.api.createMerchant();
    const otherEvent = await s.publish(
      other.merchantId,
      'charge.paid',
      SAMPLE_EVENT_DATA['charge.paid'] as Record<string, unknown>,
    );
    assert.equal((await s.knex('webhook_deliveries').where({ event_id: otherEvent })).length, 0);
  });

  it('records an event and its deliveries once per reference', async () => {
    const m = await s.api.createMerchant();
    const hook = await s.createWebhook(m.token, { path: path('once') });
    const input = {
      merchantId: m.merchantId,
      type: 'withdraw.failed',
      data: SAMPLE_EVENT_DATA['withdraw.failed'] as Record<string, unknown>,
      reference: `once:${hook.id}`,
    } as RecordEventInput;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => s.knex.transaction((trx) => recordEvent(trx, input))),
    );
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.id)).size, 1);
    assert.equal((await s.knex('webhook_deliveries').where({ webhook_id: hook.id })).length, 1);
  });

  it('keeps nothing when the state change rolls back', async () => {
    const m = await s.api.createMerchant();
    const hook = await s.createWebhook(m.token, { path: path('rollback') });
    await assert.rejects(
      s.knex.transaction(async (trx) => {
        await recordEvent(trx, {
          merchantId: m.merchantId,
          type: 'pixkey.updated',
          data: SAMPLE_EVENT_DATA['pixkey.updated'],
          reference: `rb:${hook.id}`,
        } as RecordEventInput);
        throw new Error('the change failed');
      }),
      /the change failed/,
    );
    assert.equal((await s.knex('events').where({ reference: `rb:${hook.id}` })).length, 0);
    assert.equal((await s.knex('webhook_deliveries').where({ webhook_id: hook.id })).length, 0);
  });

  it('receiver 500 then 200: two attempts logged, the second a success', async () => {
    const m = await s.api.createMerchant();
    const p = path('flaky');
    s.receiver.script(p, [{ status: 500, body: 'boom' }]);
    const hook = await s.createWebhook(m.token, { path: p });
    const httpErrors = await counter('pixflow_webhook_attempts_total', { outcome: 'http_error' });
    const successes = await counter('pixflow_webhook_attempts_total', { outcome: 'success' });
    const delivered = await counter('pixflow_webhook_delivery_latency_seconds_count');
    const delivery = await publishSample(m.merchantId, 'withdraw.completed', hook.id);
    assert.deepEqual(await s.deliveryResult(delivery.id), { status: 'SUCCEEDED', lastAttempt: 2 });
    // /metrics counts each attempt by outcome (other deliveries of the run may add to them).
    assert.ok((await counter('pixflow_webhook_attempts_total', { outcome: 'http_error' })) > httpErrors);
    assert.ok((await counter('pixflow_webhook_attempts_total', { outcome: 'success' })) > successes);
    // Its latency from the event to the 2xx, retries included.
    assert.ok((await counter('pixflow_webhook_delivery_latency_seconds_count')) > delivered);
    const logs = await logsOf(delivery.id);
    assert.deepEqual(
      logs.map((l) => [l.attempt, l.status_code, l.success]),
      [
        [1, 500, false],
        [2, 200, true],
      ],
    );
    assert.equal(logs[0]?.response, 'boom');
    const requests = s.receiver.requests(p);
    assert.equal(requests.length, 2);
    assert.equal(
      requests[0]?.headers['x-webhook-id'],
      requests[1]?.headers['x-webhook-id'],
      'the delivery id is stable across attempts',
    );
    assert.ok(requests[0]?.raw.equals(requests[1]?.raw as Buffer), 'every attempt sends the same bytes');
    const row = await deliveryRow(delivery.id);
    assert.equal(row.status, 'SUCCEEDED');
    assert.equal(row.attempts, 2);
  });

  it("an attempt's reads are one statement, and its log and record one more that never repeats", async () => {
    const m = await s.api.createMerchant();
    const p = path('once');
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'withdraw.completed', hook.id);
    assert.deepEqual(await s.deliveryResult(delivery.id), { status: 'SUCCEEDED', lastAttempt: 1 });
    const store = webhooksStore(s.knex);
    const context = await store.attemptContext(delivery.id, 1);
    assert.deepEqual(context?.logged, { success: true });
    assert.equal(context?.target?.id, hook.id);
    assert.equal(context?.event.type, 'withdraw.completed');
    assert.equal(context?.event.data, null, 'the envelope is stored, so the event data is not read');
    assert.equal((await store.attemptContext(delivery.id, 2))?.logged, undefined);
    assert.equal(await store.attemptContext('whd_unknown', 1), undefined);

    const attempt = (n: number) =>
      store.logAndRecordAttempt({
        deliveryId: delivery.id,
        webhookId: hook.id,
        merchantId: m.merchantId,
        event: 'withdraw.completed',
        url: 'http://127.0.0.1:9/never',
        payload: '{}',
        statusCode: 500,
        response: null,
        attempt: n,
        success: false,
        error: 'replayed',
        durationMs: 1,
        status: 'FAILED',
      });
    // The attempt that ran (a retried activity after a crash between POST and commit): nothing.
    assert.equal(await attempt(1), false);
    // A new number is logged, but a delivery no longer PENDING is not changed by it.
    assert.equal(await attempt(2), true);
    const row = await deliveryRow(delivery.id);
    assert.equal(row.status, 'SUCCEEDED');
    assert.equal(row.attempts, 1);
    assert.deepEqual(
      (await logsOf(delivery.id)).map((l) => [l.attempt, l.success]),
      [
        [1, true],
        [2, false],
      ],
    );
  });

  it('always 500: exactly three attempts at the configured intervals, then FAILED', async () => {
    const m = await s.api.createMerchant();
    const p = path('down');
    s.receiver.script(p, [], { status: 500 });
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'withdraw.completed', hook.id);
    assert.deepEqual(await s.deliveryResult(delivery.id), { status: 'FAILED', lastAttempt: 3 });
    assert.equal(s.receiver.requests(p).length, 3);
    const logs = await logsOf(delivery.id);
    assert.deepEqual(
      logs.map((l) => [l.attempt, l.status_code, l.success]),
      [
        [1, 500, false],
        [2, 500, false],
        [3, 500, false],
      ],
    );
    const row = await deliveryRow(delivery.id);
    assert.equal(row.status, 'FAILED');
    assert.equal(row.attempts, 3);
    assert.ok(row.completed_at);

    // The waits between attempts are the workflow's durable timers: 60 s, then 600 s.
    const history = await s.client.workflow.getHandle(webhookDeliveryWorkflowId(delivery.id)).fetchHistory();
    const timers = (history.events ?? [])
      .map((e) => e.timerStartedEventAttributes?.startToFireTimeout?.seconds)
      .filter((v) => v !== undefined && v !== null)
      .map(Number);
    assert.deepEqual(timers, [60, 600]);
  });

  it('a receiver slower than the timeout is a failed attempt; the next attempt succeeds', async () => {
    const m = await s.api.createMerchant();
    const p = path('slow');
    s.receiver.script(p, [{ status: 200, delayMs: 6_000 }]);
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'pixkey.updated', hook.id);
    assert.deepEqual(await s.deliveryResult(delivery.id), { status: 'SUCCEEDED', lastAttempt: 2 });
    const [first, second] = await logsOf(delivery.id);
    assert.equal(first?.success, false);
    assert.equal(first?.status_code, null);
    assert.match(first?.error ?? '', /timed out after 5000 ms/);
    assert.equal(second?.success, true);
  });

  it('a slow receiver does not hold up other deliveries; an endless answer is cut at the read bound', async () => {
    const m = await s.api.createMerchant();
    const slow = path('slow-other');
    const fast = path('fast');
    const hostile = path('endless');
    s.receiver.script(slow, [{ status: 200, delayMs: 4_000 }]);
    s.receiver.script(hostile, [{ status: 200, endless: true }]);
    const slowHook = await s.createWebhook(m.token, { path: slow, events: ['withdraw.failed'] });
    const fastHook = await s.createWebhook(m.token, { path: fast, events: ['pixkey.updated'] });
    const hostileHook = await s.createWebhook(m.token, { path: hostile, events: ['pixkey.updated'] });
    const slowEvent = await s.publish(
      m.merchantId,
      'withdraw.failed',
      SAMPLE_EVENT_DATA['withdraw.failed'] as Record<string, unknown>,
    );
    await s.receiver.waitFor(slow, 1);
    const fastEvent = await s.publish(
      m.merchantId,
      'pixkey.updated',
      SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>,
    );
    const fastDelivery = await s.startedDelivery(fastEvent, fastHook.id);
    const hostileDelivery = await s.startedDelivery(fastEvent, hostileHook.id);
    await eventually(
      async () => ((await deliveryRow(fastDelivery.id)).status === 'SUCCEEDED' ? true : undefined),
      'the fast delivery',
    );
    await eventually(
      async () => ((await deliveryRow(hostileDelivery.id)).status === 'SUCCEEDED' ? true : undefined),
      'the endless one',
    );
    const slowDelivery = await s.startedDelivery(slowEvent, slowHook.id);
    assert.equal((await logsOf(slowDelivery.id)).length, 0, 'the slow receiver has not answered yet');
    const [hostileLog] = await logsOf(hostileDelivery.id);
    assert.equal(hostileLog?.status_code, 200);
    assert.ok((hostileLog?.response ?? '').length <= 1024 && (hostileLog?.response ?? '').length > 0);
    assert.equal((await s.deliveryResult(slowDelivery.id)).status, 'SUCCEEDED');
  });

  it('a redirect is a failure and is not followed', async () => {
    const m = await s.api.createMerchant();
    const p = path('moved');
    const target = path('target');
    s.receiver.script(p, [], { status: 302, headers: { location: target } });
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'pixkey.updated', hook.id);
    assert.equal((await s.deliveryResult(delivery.id)).status, 'FAILED');
    const logs = await logsOf(delivery.id);
    assert.equal(logs.length, 3);
    assert.ok(logs.every((l) => l.status_code === 302 && !l.success));
    assert.equal(s.receiver.requests(target).length, 0);
  });

  it('INACTIVE pauses: no delivery for new events, and a pending retry is not attempted', async () => {
    const m = await s.api.createMerchant();
    const p = path('paused');
    s.receiver.script(p, [{ status: 500 }]);
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'pixkey.updated', hook.id);
    await eventually(async () => ((await logsOf(delivery.id)).length === 1 ? true : undefined), 'the first attempt');

    const patched = await s.api.request('PATCH', `/v1/webhooks/merchant/${hook.id}`, {
      token: m.token,
      body: { status: 'INACTIVE' },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(await s.deliveryResult(delivery.id), { status: 'CANCELED', lastAttempt: 2 });
    assert.equal(s.receiver.requests(p).length, 1, 'no attempt after the webhook became INACTIVE');
    assert.equal((await logsOf(delivery.id)).length, 1);
    assert.equal((await deliveryRow(delivery.id)).status, 'CANCELED');

    const whileInactive = await s.publish(
      m.merchantId,
      'pixkey.updated',
      SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>,
    );
    assert.equal((await s.knex('webhook_deliveries').where({ event_id: whileInactive })).length, 0);

    // ACTIVE again: new events are delivered.
    await s.api.request('PATCH', `/v1/webhooks/merchant/${hook.id}`, { token: m.token, body: { status: 'ACTIVE' } });
    const afterwards = await s.publish(
      m.merchantId,
      'pixkey.updated',
      SAMPLE_EVENT_DATA['pixkey.updated'] as Record<string, unknown>,
    );
    const next = await s.startedDelivery(afterwards, hook.id);
    assert.equal((await s.deliveryResult(next.id)).status, 'SUCCEEDED');
  });

  it('DELETE stops pending retries at once', async () => {
    const m = await s.api.createMerchant();
    const p = path('deleted');
    s.receiver.script(p, [], { status: 503 });
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'pixkey.updated', hook.id);
    await eventually(async () => ((await logsOf(delivery.id)).length === 1 ? true : undefined), 'the first attempt');
    const deleted = await s.api.request('DELETE', `/v1/webhooks/merchant/${hook.id}`, { token: m.token });
    assert.equal(deleted.status, 200);
    assert.equal((await deliveryRow(delivery.id)).status, 'CANCELED', 'canceled by the delete itself');
    assert.equal((await s.deliveryResult(delivery.id)).status, 'CANCELED');
    assert.equal(s.receiver.requests(p).length, 1);
    assert.equal((await logsOf(delivery.id)).length, 1, 'the log of the attempt made is kept');
  });

  it('redelivers a failed delivery as a new series with the same delivery id', async () => {
    const m = await s.api.createMerchant();
    const p = path('redeliver');
    s.receiver.script(p, [{ status: 500 }, { status: 500 }, { status: 500 }]);
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'withdraw.failed', hook.id);
    assert.equal((await s.deliveryResult(delivery.id)).status, 'FAILED');

    const again = await s.api.request<{ delivery: { id: string; status: string } }>(
      'POST',
      `/v1/webhooks/merchant/${hook.id}/deliveries/${delivery.id}/redeliver`,
      { token: m.token },
    );
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal(again.body.delivery.status, 'PENDING');
    await eventually(
      async () => ((await deliveryRow(delivery.id)).status === 'SUCCEEDED' ? true : undefined),
      'the redelivery',
    );
    const logs = await logsOf(delivery.id);
    assert.deepEqual(
      logs.map((l) => [l.attempt, l.success]),
      [
        [1, false],
        [2, false],
        [3, false],
        [4, true],
      ],
    );
    const requests = s.receiver.requests(p);
    assert.equal(requests[3]?.headers['x-webhook-id'], delivery.id);

    const other = await s.api.createMerchant();
    const foreign = await s.api.request(
      'POST',
      `/v1/webhooks/merchant/${hook.id}/deliveries/${delivery.id}/redeliver`,
      { token: other.token },
    );
    assert.equal(foreign.status, 404);
  });

  it('signs with the rotated secret from the next attempt on', async () => {
    const m = await s.api.createMerchant();
    const p = path('rotate');
    const hook = await s.createWebhook(m.token, { path: p });
    const rotated = await s.api.request<{ webhook: { secret: string } }>(
      'POST',
      `/v1/webhooks/merchant/${hook.id}/rotate-secret`,
      { token: m.token },
    );
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.webhook.secret, hook.secret);
    s.receiver.expect(p, rotated.body.webhook.secret);
    const delivery = await publishSample(m.merchantId, 'pixkey.updated', hook.id);
    assert.equal((await s.deliveryResult(delivery.id)).status, 'SUCCEEDED');
    assert.equal(s.receiver.requests(p)[0]?.signatureValid, true);
  });

  it('a redelivery that races its old run is started once that run has ended', async () => {
    const m = await s.api.createMerchant();
    const p = path('race');
    s.receiver.script(p, [], { status: 500 });
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'pixkey.updated', hook.id);
    await eventually(async () => ((await logsOf(delivery.id)).length === 1 ? true : undefined), 'the first attempt');
    // As if a redelivery had reset the row while this run still ran: the start is refused, the row stays unstarted.
    await s.knex('webhook_deliveries').where({ id: delivery.id }).update({ workflow_started_at: null });
    await s.dispatcher.dispatchPending();
    assert.equal((await deliveryRow(delivery.id)).workflow_started_at, null);
    // Once the old run has ended, the next poll starts a new run for the still PENDING row.
    s.receiver.script(p, []);
    assert.equal((await s.deliveryResult(delivery.id)).status, 'SUCCEEDED');
    await s.knex('webhook_deliveries').where({ id: delivery.id }).update({ status: 'PENDING', attempt_limit: 5 });
    await eventually(
      async () =>
        (await deliveryRow(delivery.id)).status === 'SUCCEEDED' && (await logsOf(delivery.id)).length === 3
          ? true
          : undefined,
      'the new run',
    );
    assert.ok((await deliveryRow(delivery.id)).workflow_started_at);
  });

  it('the reconciler restarts the workflow of a PENDING delivery that lost it', async () => {
    const m = await s.api.createMerchant();
    const p = path('reconcile');
    const hook = await s.createWebhook(m.token, { path: p });
    const delivery = await publishSample(m.merchantId, 'pixkey.updated', hook.id);
    assert.equal((await s.deliveryResult(delivery.id)).status, 'SUCCEEDED');
    // As if the workflow had been lost mid-way: the row is PENDING again with its attempt made.
    await s.knex('webhook_deliveries').where({ id: delivery.id }).update({ status: 'PENDING', attempt_limit: 3 });
    assert.ok((await s.dispatcher.reconcile()) >= 1);
    await eventually(
      async () => ((await deliveryRow(delivery.id)).status === 'SUCCEEDED' ? true : undefined),
      'the restarted run',
    );
    assert.deepEqual(
      (await logsOf(delivery.id)).map((l) => l.attempt),
      [1, 2],
      'the restarted run continues the numbering',
    );
  });
});
