/**
 * A delivery whose webhook secret the worker cannot decrypt (docs/operations.md "Webhook secret
 * encryption"): a key missing from WEBHOOK_SECRET_KEYS, or another key under the same id. The
 * attempt is logged once, the delivery stops FAILED with a WEBHOOK_SECRET_UNAVAILABLE case naming
 * the key, nothing is POSTed, and the reconciler does not start it again.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { webhookDeliveryWorkflowId } from '../../src/temporal/workflow-ids';
import { eventually } from '../support/charges';
import { SAMPLE_EVENT_DATA, webhookStack, type WebhookStack } from '../support/webhooks';

const randomKey = (id: string): string => `${id}:${crypto.randomBytes(32).toString('base64')}`;

describe('webhook delivery with a secret that cannot be decrypted', function () {
  this.timeout(120_000);
  let s: WebhookStack;

  before(async () => {
    s = await webhookStack();
  });

  async function parkedDelivery(secretKeys: string, label: string) {
    const m = await s.api.createMerchant();
    const path = `/${label}-${crypto.randomBytes(4).toString('hex')}`;
    const hook = await s.createWebhook(m.token, { path, events: ['pixkey.updated'] });
    // The worker's ring lacks the key the API encrypted under (the dev ring's `dev`).
    s.withDeliverySettings(hook.id, { secretKeys });
    const eventId = await s.publish(m.merchantId, 'pixkey.updated', SAMPLE_EVENT_DATA['pixkey.updated'] ?? {});
    const delivery = await s.startedDelivery(eventId, hook.id);
    assert.deepEqual(await s.deliveryResult(delivery.id), { status: 'FAILED', lastAttempt: 1 });
    return { m, hook, path, delivery };
  }

  async function assertParked(deliveryId: string, webhookId: string, message: RegExp): Promise<void> {
    const row = (await s.knex('webhook_deliveries').where({ id: deliveryId }).first()) as {
      status: string;
      attempts: number;
      last_error: string;
      completed_at: Date | null;
    };
    assert.deepEqual([row.status, row.attempts], ['FAILED', 1]);
    assert.match(row.last_error, message);
    assert.ok(row.completed_at);
    const logs = (await s.knex('webhook_delivery_logs').where({ delivery_id: deliveryId })) as Array<{
      attempt: number;
      success: boolean;
      status_code: number | null;
      error: string;
    }>;
    assert.deepEqual(
      logs.map((l) => [l.attempt, l.success, l.status_code]),
      [[1, false, null]],
    );
    assert.match(logs[0]?.error ?? '', /^webhook secret unavailable: /);
    const cases = (await s.knex('operator_cases').where({ subject_id: deliveryId })) as Array<{
      kind: string;
      status: string;
      reason: string;
      details: { webhookId: string; keyId: string };
    }>;
    assert.equal(cases.length, 1);
    assert.deepEqual([cases[0]?.kind, cases[0]?.status], ['WEBHOOK_SECRET_UNAVAILABLE', 'OPEN']);
    assert.deepEqual([cases[0]?.details.webhookId, cases[0]?.details.keyId], [webhookId, 'dev']);
    assert.match(cases[0]?.reason ?? '', /restore the key to WEBHOOK_SECRET_KEYS/);
  }

  it('a key missing from the ring: one attempt logged, FAILED, an operator case; nothing POSTed or restarted', async () => {
    const { hook, path, delivery } = await parkedDelivery(randomKey('k-other'), 'missing-key');
    await assertParked(delivery.id, hook.id, /key "dev", which WEBHOOK_SECRET_KEYS does not list/);
    assert.deepEqual(s.receiver.requests(path), []);
    // The reconciler restarts only PENDING deliveries: this one is not started again.
    const before = await s.knex('webhook_deliveries').where({ id: delivery.id }).first('workflow_started_at');
    await s.dispatcher.reconcile();
    const after = await s.knex('webhook_deliveries').where({ id: delivery.id }).first('workflow_started_at');
    assert.deepEqual(after, before);
    assert.equal(
      (await s.client.workflow.getHandle(webhookDeliveryWorkflowId(delivery.id)).describe()).status.name,
      'COMPLETED',
    );
    await assertParked(delivery.id, hook.id, /key "dev"/);
  });

  it('another key under the same id: the same parking, naming that key', async () => {
    const { hook, path, delivery } = await parkedDelivery(randomKey('dev'), 'wrong-key');
    await assertParked(delivery.id, hook.id, /does not authenticate under key "dev"/);
    assert.deepEqual(s.receiver.requests(path), []);
  });

  it('once the key is back, a redelivery goes out signed and the delivery succeeds', async () => {
    const { m, hook, path, delivery } = await parkedDelivery(randomKey('k-other'), 'restored');
    s.withDeliverySettings(hook.id, {});
    const again = await s.api.request<{ delivery: { status: string } }>(
      'POST',
      `/v1/webhooks/merchant/${hook.id}/deliveries/${delivery.id}/redeliver`,
      { token: m.token },
    );
    assert.equal(again.status, 202, JSON.stringify(again.body));
    await eventually(async () => {
      const row = (await s.knex('webhook_deliveries').where({ id: delivery.id }).first('status')) as { status: string };
      return row.status === 'SUCCEEDED' ? true : undefined;
    }, 'the redelivery to succeed');
    const [req] = s.receiver.requests(path);
    assert.equal(req?.signatureValid, true);
  });
});
