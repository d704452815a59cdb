/**
 * The operations series of /metrics (docs/operations.md "Metrics and logs") through a scripted
 * scenario on the real stack: a payment that matches no charge is returned to the payer, the
 * acquirer refuses the devolução (it knows no such payment), and the callback parks. /metrics then
 * shows the parked callback by kind, the inbox gauges, and the failed acquirer call by operation
 * and kind, with its latency.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { chargesStack, type ChargesStack } from '../support/charges';
import { getTestDb } from '../support/db';
import { sample } from '../support/metrics';
import { createLogger } from '../../src/lib/logger';
import { createAcquirerCallbacks } from '../../src/services/inbox/acquirer-callbacks';
import { watchCallbackInbox } from '../../src/observability/metrics';

describe('metrics: callback inbox and acquirer calls', function () {
  this.timeout(120_000);
  let s: ChargesStack;

  before(async () => {
    s = await chargesStack();
  });

  after(() => watchCallbackInbox(() => Promise.resolve({ received: 0, oldestAgeSeconds: 0, parkedByKind: {} })));

  const scrape = async (): Promise<string> => {
    const res = await fetch(`${s.api.baseUrl}/metrics`);
    assert.equal(res.status, 200);
    return res.text();
  };

  it('shows one parked callback and one failed acquirer call of a scripted scenario', async () => {
    const { knex } = await getTestDb();
    // Unmatched payments are returned at once (no grace), so the scenario needs no waiting.
    const callbacks = createAcquirerCallbacks({
      knex,
      workflows: s.workflows,
      logger: createLogger({ level: 'silent' }),
      acquirer: s.acquirer,
      unmatchedGraceMs: 0,
    });
    watchCallbackInbox(() => callbacks.inbox.backlog());
    const before = await scrape();
    const errors = (text: string): number =>
      sample(text, 'pixflow_acquirer_errors_total', { operation: 'requestRefund', kind: 'not_found' });
    const failedCalls = (text: string): number =>
      sample(text, 'pixflow_acquirer_request_duration_seconds_count', { operation: 'requestRefund', outcome: 'error' });

    const e2eId = `E${crypto.randomBytes(16).toString('hex').slice(0, 31)}`;
    await callbacks.pix({
      pix: [
        {
          endToEndId: e2eId,
          txid: `nocharge${crypto.randomBytes(12).toString('hex')}`,
          valor: '12.34',
          horario: new Date().toISOString(),
        },
      ],
    });
    const row = await knex('acquirer_callbacks').where({ kind: 'pix', external_id: e2eId }).first<{ status: string }>();
    assert.equal(row.status, 'PARKED', 'the acquirer refused the return: the callback parks');

    const after = await scrape();
    assert.equal(errors(after) - errors(before), 1, 'one failed call, by operation and kind');
    assert.equal(failedCalls(after) - failedCalls(before), 1, 'its latency, as an error');
    assert.ok(
      sample(after, 'pixflow_acquirer_request_duration_seconds_count', { operation: 'oauthToken', outcome: 'ok' }) >= 1,
    );
    assert.equal(
      sample(after, 'pixflow_callback_inbox_parked', { kind: 'pix' }) -
        sample(before, 'pixflow_callback_inbox_parked', { kind: 'pix' }),
      1,
      'one more parked pix callback',
    );
    const parkedInDb = await knex('acquirer_callbacks')
      .where({ status: 'PARKED', kind: 'pix' })
      .count<{ n: string }[]>('* as n');
    assert.equal(sample(after, 'pixflow_callback_inbox_parked', { kind: 'pix' }), Number(parkedInDb[0]?.n));
    const waiting = await knex('acquirer_callbacks').where({ status: 'RECEIVED' }).count<{ n: string }[]>('* as n');
    assert.equal(sample(after, 'pixflow_callback_inbox_backlog'), Number(waiting[0]?.n));
    assert.match(after, /^pixflow_callback_inbox_oldest_age_seconds \d/m);
    for (const name of [
      'pixflow_refunds_total',
      'pixflow_infractions_total',
      'pixflow_webhook_delivery_latency_seconds',
    ]) {
      assert.match(after, new RegExp(`^# TYPE ${name} `, 'm'), `${name} is exposed`);
    }
  });
});
