/**
 * The shared check of test/support/openapi-validator.ts, which test/support/api.ts runs on every
 * answer and the webhook receiver on every body: real answers pass, and the same answers with a
 * field deliberately wrong (mistyped, missing, undocumented) or an undocumented status fail, so a
 * drift between what the API sends and /openapi.json fails the suites.
 */
import assert from 'node:assert/strict';
import { SAMPLE_EVENT_DATA } from '../support/webhooks';
import { startApi, type TestApi } from '../support/api';
import { assertResponseMatchesDocument, responseProblems, webhookBodyProblems } from '../support/openapi-validator';
import { WEBHOOK_EVENT_TYPES } from '../../src/contracts/webhook-events';

describe('responses and webhook bodies are checked against /openapi.json', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => {
    api = await startApi();
  });

  it('checks against the document the app serves', async () => {
    const served = await api.request<Record<string, unknown>>('GET', '/openapi.json');
    assert.ok(served.body.webhooks, 'the served document has the webhooks object');
    const res = await api.request<{ merchant: Record<string, unknown> }>('GET', '/v1/merchants/me', {
      token: (await api.createMerchant()).token,
    });
    const schema = (served.body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> })
      .paths['/v1/merchants/me']?.get?.responses['200'];
    assert.ok(schema, 'GET /v1/merchants/me 200 is documented');
    assert.deepEqual(responseProblems('GET', '/v1/merchants/me', 200, 'application/json', res.body), []);
  });

  it('fails a real answer with a field deliberately wrong, missing or undocumented', async () => {
    const m = await api.createMerchant();
    const res = await api.request<{ merchant: Record<string, unknown> }>('GET', '/v1/merchants/me', { token: m.token });
    assert.equal(res.status, 200);
    const check = (body: unknown) => responseProblems('GET', '/v1/merchants/me', 200, 'application/json', body);

    const mistyped = { merchant: { ...res.body.merchant, feeBps: String(res.body.merchant.feeBps) } };
    assert.deepEqual(check(mistyped), ['/merchant/feeBps must be integer']);
    const { kycStatus: _dropped, ...rest } = res.body.merchant;
    assert.deepEqual(check({ merchant: rest }), ["/merchant must have required property 'kycStatus'"]);
    assert.deepEqual(check({ merchant: { ...res.body.merchant, secretField: 1 } }), [
      '/merchant must NOT have additional properties: secretField',
    ]);
    assert.deepEqual(check({ merchant: { ...res.body.merchant, status: 'ZOMBIE' } }), [
      '/merchant/status must be equal to one of the allowed values',
    ]);
    assert.throws(
      () => assertResponseMatchesDocument('GET', '/v1/merchants/me', 200, 'application/json', mistyped),
      /GET \/v1\/merchants\/me → 200 does not match \/openapi\.json/,
    );
  });

  it('fails an undocumented status and an error without its code or requestId; errors may carry more', () => {
    assert.deepEqual(responseProblems('GET', '/v1/merchants/me/balance', 418, 'application/json', { message: 'x' }), [
      'status 418 is not documented for GET /v1/merchants/me/balance',
    ]);
    const error = { message: 'Not found', code: 'not_found', requestId: 'req_1' };
    assert.deepEqual(responseProblems('GET', '/v1/charges/ch_x', 404, 'application/json', error), []);
    assert.deepEqual(responseProblems('GET', '/v1/charges/ch_x', 404, 'application/json', { ...error, more: 1 }), []);
    const partial = responseProblems('GET', '/v1/charges/ch_x', 404, 'application/json', { message: 'x' });
    assert.ok(partial.includes("(root) must have required property 'code'"), partial.join('; '));
    assert.ok(partial.includes("(root) must have required property 'requestId'"), partial.join('; '));
  });

  it('fails a webhook body that drifts from the webhooks object, for every event of the catalogue', () => {
    for (const event of WEBHOOK_EVENT_TYPES) {
      const body = { event, timestamp: new Date().toISOString(), data: SAMPLE_EVENT_DATA[event] };
      assert.deepEqual(webhookBodyProblems(JSON.stringify(body)), [], event);
      // A mistyped amount (pixkey.updated has none: there it is an undocumented field).
      const wrong = { ...body, data: { ...SAMPLE_EVENT_DATA[event], amount: 'a lot' } };
      assert.ok(
        webhookBodyProblems(JSON.stringify(wrong)).some((p) => p.includes('amount')),
        event,
      );
      const extra = { ...body, data: { ...SAMPLE_EVENT_DATA[event], surprise: true } };
      assert.ok(
        webhookBodyProblems(JSON.stringify(extra)).some((p) => p.includes('surprise')),
        event,
      );
    }
    assert.deepEqual(webhookBodyProblems('{"event":"charge.exploded","timestamp":"x","data":{}}'), [
      'event "charge.exploded" is not documented',
    ]);
  });
});
