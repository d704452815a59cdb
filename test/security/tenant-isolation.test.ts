/**
 * OWASP API1 beyond path ids: another merchant's data cannot be reached through an idempotency key
 * it happens to know (keys are per merchant: the same key is a new request), a list filter naming
 * another merchant (ignored: lists are the caller's), or an event (delivered only to the owner's
 * webhooks); an ADMIN token on merchant routes gets `{message}`, never some merchant's data.
 */
import assert from 'node:assert/strict';
import { DEST, fundedMerchant, withdrawalsStack, type WithdrawalsStack } from '../support/withdrawals';
import { SAMPLE_EVENT_DATA, webhookStack } from '../support/webhooks';
import type { MerchantFixture } from '../support/api';
import { assertErrorBody } from '../support/errors';

describe('security: tenant isolation beyond path ids', function () {
  this.timeout(60_000);
  let s: WithdrawalsStack;
  let a: MerchantFixture;
  let b: MerchantFixture;

  before(async () => {
    s = await withdrawalsStack();
    a = await fundedMerchant(s.api, 10_000);
    b = await fundedMerchant(s.api, 10_000);
  });

  it("an idempotency key another merchant used is a new request, never a replay of that merchant's answer", async () => {
    const key = `shared-key-${a.merchantId}`;
    for (const [path, bodyA, bodyB, field] of [
      ['/v1/charges', { amount: 777, description: 'A' }, { amount: 888, description: 'B' }, 'charge'],
      ['/v1/merchants/me/withdrawals', { amount: 500, ...DEST }, { amount: 600, ...DEST }, 'withdraw'],
    ] as const) {
      const first = await s.api.request<Record<string, { id: string }>>('POST', path, {
        token: a.token,
        headers: { 'x-idempotency-key': key },
        body: bodyA,
      });
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const second = await s.api.request<Record<string, unknown>>('POST', path, {
        token: b.token,
        headers: { 'x-idempotency-key': key },
        body: bodyB,
      });
      assert.equal(second.status, 201, JSON.stringify(second.body));
      const created = second.body[field] as { id: string; amount: number };
      assert.notEqual(created.id, first.body[field]?.id);
      assert.equal(created.amount, bodyB.amount);
      assert.equal(second.body.idempotent, undefined);
    }
  });

  it("a list filter naming another merchant is ignored: the list is the caller's", async () => {
    const res = await s.api.request<{ charges: Array<{ id: string }> }>(
      'GET',
      `/v1/charges?merchantId=${a.merchantId}&merchant_id=${a.merchantId}`,
      {
        token: b.token,
      },
    );
    assert.equal(res.status, 200);
    const ids = res.body.charges.map((c) => c.id);
    const owned = (await s.api.knex('charges').where({ merchant_id: b.merchantId }).pluck('id')) as string[];
    assert.ok(ids.length > 0 && ids.every((id) => owned.includes(id)), JSON.stringify(ids));
  });

  it("a merchant's event is delivered to its own webhooks only", async () => {
    const wh = await webhookStack();
    const mine = await wh.createWebhook(a.token, { path: `/iso-a-${a.merchantId}` });
    const theirs = await wh.createWebhook(b.token, { path: `/iso-b-${b.merchantId}` });
    const eventId = await wh.publish(
      a.merchantId,
      'withdraw.failed',
      SAMPLE_EVENT_DATA['withdraw.failed'] as Record<string, unknown>,
    );
    const delivery = await wh.startedDelivery(eventId, mine.id);
    assert.equal((await wh.deliveryResult(delivery.id)).status, 'SUCCEEDED');
    assert.equal((await wh.knex('webhook_deliveries').where({ event_id: eventId, webhook_id: theirs.id })).length, 0);
    assert.equal(wh.receiver.requests(`/iso-b-${b.merchantId}`).length, 0);
  });

  it('an ADMIN token on merchant routes gets {message}, no merchant data', async () => {
    const admin = await s.api.adminToken();
    for (const [method, path] of [
      ['GET', '/v1/charges'],
      ['GET', '/v1/merchants/me'],
      ['GET', '/v1/merchants/me/balance'],
      ['GET', '/v1/merchants/me/withdrawals'],
      ['GET', '/v1/api-keys'],
    ] as const) {
      const res = await s.api.request<Record<string, unknown>>(method, path, { token: admin });
      assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
      assertErrorBody(res.body, path);
    }
  });
});
