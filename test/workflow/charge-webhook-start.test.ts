/**
 * A payment's `charge.paid` deliveries are started by the worker right after the payment commits,
 * without NOTIFY and without the API's dispatcher; a failed start leaves the payment recorded and
 * the delivery to the dispatcher's poll (docs/performance.md "Payment to webhook: the timeline").
 * On a database of its own, where no dispatcher runs, with a LISTEN on the dispatcher's channel.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import pg from 'pg';
import { createChargeActivities } from '../../activities/charges';
import { pixWireOf } from '../../src/acquirer/wire';
import { createLogger } from '../../src/lib/logger';
import { newId } from '../../src/lib/ids';
import { createChargeLifecycle } from '../../src/services/charges/lifecycle';
import { recordEvent, type RecordEventInput } from '../../src/services/platform/events';
import { createWebhookDispatcher } from '../../src/services/webhooks/dispatcher';
import { createWebhooksService } from '../../src/services/webhooks/webhooks';
import { callbackInboxStore } from '../../src/stores/callback-inbox';
import { DELIVERY_CHANNEL } from '../../src/stores/webhooks';
import { webhookDeliveryWorkflowClient } from '../../src/temporal/clients/webhook';
import { eventually, ownChargesStack, readyMerchant, type ChargesStack } from '../support/charges';
import { startReceiver, type Receiver } from '../support/webhook-receiver';
import { SAMPLE_EVENT_DATA, WEBHOOKS_TEST_CONFIG } from '../support/webhooks';

interface Charge {
  id: string;
  txid: string;
}

interface DeliveryRow {
  id: string;
  workflow_started_at: Date | null;
}

describe('charge.paid deliveries started by the worker', function () {
  this.timeout(120_000);
  let s: ChargesStack;
  let receiver: Receiver;
  let listener: pg.Client;
  /** The payloads (merchant ids) of every NOTIFY on the dispatcher's channel in this database. */
  const notified: string[] = [];
  const logger = createLogger({ level: 'silent' });

  before(async () => {
    s = await ownChargesStack('charge_webhook_start', { startsDeliveries: true });
    receiver = await startReceiver();
    listener = new pg.Client({ connectionString: s.db.url });
    await listener.connect();
    listener.on('notification', (n) => notified.push(n.payload ?? ''));
    await listener.query(`LISTEN ${DELIVERY_CHANNEL}`);
  });

  after(async () => {
    await listener.end();
  });

  /** A ready merchant with a webhook on the receiver, subscribed to `charge.paid` and `charge.refunded`. */
  async function merchantWithWebhook() {
    const m = await readyMerchant(s.api);
    const path = `/paid-${crypto.randomBytes(4).toString('hex')}`;
    const webhooks = createWebhooksService({ knex: s.api.knex, config: WEBHOOKS_TEST_CONFIG });
    const hook = await webhooks.create(m.merchantId, {
      url: receiver.url(path),
      events: ['charge.paid', 'charge.refunded'],
    });
    receiver.expect(path, hook.secret);
    return { ...m, path, hookId: hook.id };
  }

  async function newCharge(token: string): Promise<Charge> {
    const res = await s.api.request<{ charge: Charge }>('POST', '/v1/charges', {
      token,
      body: { amount: 10_000, description: 'Pedido' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.charge;
  }

  const deliveryOf = async (hookId: string): Promise<DeliveryRow> =>
    (await s.api.knex('webhook_deliveries').where({ webhook_id: hookId }).first()) as DeliveryRow;

  it('the worker starts the delivery after the commit: marked, received, no NOTIFY, no dispatcher', async () => {
    const m = await merchantWithWebhook();
    const charge = await newCharge(m.token);
    const pay = await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
    assert.equal(pay.status, 202);
    const [paid] = await receiver.waitFor(m.path, 1);
    assert.ok(paid?.signatureValid);
    assert.equal(paid.body.event, 'charge.paid');
    assert.equal(paid.body.data.chargeId, charge.id);
    assert.ok((await deliveryOf(m.hookId)).workflow_started_at, 'marked started by the worker');

    // An event recorded as before still wakes the dispatcher. Notifications arrive in commit
    // order, so once its own has come, one the payment had sent would be here already.
    const other = await recordEvent(s.api.knex, {
      merchantId: m.merchantId,
      type: 'charge.refunded',
      data: SAMPLE_EVENT_DATA['charge.refunded'],
      reference: `test:charge.refunded:${newId('ref')}`,
    } as RecordEventInput);
    await eventually(async () => (notified.includes(m.merchantId) ? true : undefined), 'the NOTIFY of the other event');
    assert.equal(notified.filter((p) => p === m.merchantId).length, 1, 'only the other event notified');
    // No dispatcher here: that delivery is left alone.
    await s.api.knex('webhook_deliveries').where({ event_id: other.id }).update({ status: 'CANCELED' });
  });

  it('a failed start leaves the payment recorded; the dispatcher poll starts the delivery', async () => {
    const m = await merchantWithWebhook();
    const charge = await newCharge(m.token);
    const tried: string[] = [];
    const lifecycle = createChargeLifecycle({
      knex: s.api.knex,
      acquirer: s.acquirer,
      logger,
      webhookDeliveries: {
        start: (d) => {
          tried.push(d.deliveryId);
          return Promise.reject(new Error('Temporal unreachable'));
        },
      },
    });
    const notice = {
      txid: charge.txid,
      endToEndId: `E${Date.now()}`.padEnd(32, '0'),
      amount: 10_000,
      paidAt: new Date().toISOString(),
      payer: { name: 'Pagador', document: '12345678909' },
    };
    await callbackInboxStore(s.api.knex).keep('pix', notice.endToEndId, pixWireOf(notice));
    const recorded = await createChargeActivities(lifecycle).recordPayment(charge.id, notice);
    assert.equal(recorded.kind, 'paid');
    assert.equal(((await s.api.knex('charges').where({ id: charge.id }).first()) as { status: string }).status, 'PAID');
    const unstarted = await deliveryOf(m.hookId);
    assert.deepEqual(tried, [unstarted.id], 'started after the commit, and failed');
    assert.equal(unstarted.workflow_started_at, null, 'left to the dispatcher');

    const dispatcher = createWebhookDispatcher({
      knex: s.api.knex,
      logger,
      workflows: webhookDeliveryWorkflowClient(s.client, s.taskQueue),
    });
    assert.ok((await dispatcher.dispatchPending()) >= 1);
    assert.ok((await deliveryOf(m.hookId)).workflow_started_at, 'marked by the dispatcher');
    const [paid] = await receiver.waitFor(m.path, 1);
    assert.equal(paid?.body.event, 'charge.paid');
    assert.equal(paid.body.data.chargeId, charge.id);
  });
});
