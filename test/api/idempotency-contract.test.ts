/**
 * One idempotency key, two different bodies (docs/api.md "Idempotency"): a charge replays the
 * first charge as the API contract says (201, then 200 with it and `idempotent: true`), while a
 * withdrawal, where money leaves, answers 422 and moves nothing.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { TestApi } from '../support/api';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { DEST, fundedMerchant, withdrawalsStack, type WithdrawBody } from '../support/withdrawals';

interface ChargeAnswer {
  charge: { id: string; amount: number; txid: string | null; customer: unknown };
  idempotent?: boolean;
}

describe('one idempotency key, different bodies: charges replay, withdrawals refuse', function () {
  this.timeout(120_000);
  let api: TestApi;
  let knex: Knex;

  before(async () => {
    ({ api, knex } = await withdrawalsStack());
  });
  afterEach(async () => {
    await assertLedgerInvariant(knex);
  });

  it('POST /v1/charges twice with one key and different bodies: 201, then 200 with the first charge', async () => {
    const m = await fundedMerchant(api, 0);
    const key = `contract-${crypto.randomUUID()}`;
    const post = (body: Record<string, unknown>) =>
      api.request<ChargeAnswer>('POST', '/v1/charges', { token: m.token, body, headers: { 'Idempotency-Key': key } });
    const first = await post({ amount: 2990, description: 'Pedido 1001' });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.idempotent, undefined);
    // A client retrying with, say, a regenerated description and another amount.
    const second = await post({ amount: 3990, description: 'Pedido 1001 (retry)', expiresIn: 600 });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.idempotent, true);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(
      [second.body.charge.id, second.body.charge.amount, second.body.charge.txid],
      [first.body.charge.id, 2990, first.body.charge.txid],
    );
    const rows = (await knex('charges').where({ merchant_id: m.merchantId })) as Array<{ amount: number }>;
    assert.deepEqual(
      rows.map((r) => r.amount),
      [2990],
    );
  });

  it('a withdrawal the same way: 201, then 422 idempotency_key_reused, one debit', async () => {
    const m = await fundedMerchant(api, 10_000);
    const key = `contract-${crypto.randomUUID()}`;
    const post = (amount: number) =>
      api.request<WithdrawBody & { code?: string }>('POST', '/v1/merchants/me/withdrawals', {
        token: m.token,
        body: { amount, ...DEST },
        headers: { 'Idempotency-Key': key },
      });
    const first = await post(1_000);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const second = await post(2_000);
    assert.deepEqual([second.status, second.body.code], [422, 'idempotency_key_reused']);
    assert.equal(second.body.message, `Idempotency key "${key}" was already used with a different request body`);
    assert.equal((await knex('withdrawals').where({ merchant_id: m.merchantId })).length, 1);
    const balance = await api.request<{ balance: { available: number } }>('GET', '/v1/merchants/me/balance', {
      token: m.token,
    });
    assert.equal(balance.body.balance.available, 9_000);
  });
});
