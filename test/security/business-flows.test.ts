/**
 * OWASP API6 (unrestricted access to sensitive business flows): money cannot be multiplied by
 * racing requests. Ten full refunds of one paid charge sent at once (each with its own idempotency
 * key) refund it at most once; ten withdrawals of the whole balance sent at once take it at most
 * once. The ledger invariant holds after each.
 */
import assert from 'node:assert/strict';
import { chargesStack, eventually, readyMerchant } from '../support/charges';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { DEST, fundedMerchant, withdrawalsStack } from '../support/withdrawals';

describe('security: racing money flows', function () {
  this.timeout(60_000);

  it('ten concurrent full refunds of one paid charge: refunded at most once', async () => {
    const s = await chargesStack();
    const m = await readyMerchant(s.api);
    const created = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount: 10_000, description: 'race' },
    });
    assert.equal(created.status, 201);
    const id = created.body.charge.id;
    assert.equal(
      (await s.api.request('POST', `/v1/sandbox/charges/${id}/pay`, { token: m.token, body: {} })).status,
      202,
    );
    await eventually(async () => {
      const r = (await s.api.knex('charges').where({ id }).first('status')) as { status: string };
      const tx = await s.api.knex('ledger_transactions').where({ merchant_id: m.merchantId });
      return r.status === 'PAID' && tx.length > 0 ? r : undefined;
    }, 'the charge to be paid');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        s.api.request('POST', `/v1/charges/${id}/refund`, {
          token: m.token,
          headers: { 'x-idempotency-key': `race-${id}-${i}` },
          body: { amount: 9_901 },
        }),
      ),
    );
    const accepted = answers.filter((r) => r.status === 202).length;
    assert.ok(
      answers.every((r) => [202, 400, 409].includes(r.status)),
      answers.map((r) => r.status).join(','),
    );
    assert.equal(accepted, 1, answers.map((r) => `${r.status} ${JSON.stringify(r.body)}`).join('\n'));
    const refunds = (await s.api.knex('charge_refunds').where({ charge_id: id }).select('amount')) as Array<{
      amount: string;
    }>;
    assert.equal(refunds.length, 1);
    await assertLedgerInvariant(s.api.knex);
  });

  it('ten concurrent withdrawals of the whole balance: taken at most once', async () => {
    const w = await withdrawalsStack();
    const m = await fundedMerchant(w.api, 5_000);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        w.api.request('POST', '/v1/merchants/me/withdrawals', { token: m.token, body: { amount: 5_000, ...DEST } }),
      ),
    );
    assert.equal(answers.filter((r) => r.status === 201).length, 1, answers.map((r) => r.status).join(','));
    assert.ok(answers.every((r) => r.status === 201 || r.status === 400));
    const balance = await w.api.request<{ balance: { available: number } }>('GET', '/v1/merchants/me/balance', {
      token: m.token,
    });
    assert.equal(balance.body.balance.available, 0);
    assert.equal((await w.knex('withdrawals').where({ merchant_id: m.merchantId })).length, 1);
    await assertLedgerInvariant(w.knex);
  });
});
