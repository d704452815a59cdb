/**
 * Acquirer callbacks as an attacker would send them
 * (docs/operations.md "The callback inbox and reconciliation"): the same signed payment delivered again and again — in parallel and after it
 * was applied — is applied once (one inbox row, one ledger posting set, one balance); a body whose
 * bytes differ from what the signature covers is 401 and changes nothing.
 */
import assert from 'node:assert/strict';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import type { MerchantFixture } from '../support/api';
import { CALLBACK_SECRET, chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { DEST, fundedMerchant, withdrawalsStack, WITHDRAWALS_CALLBACK_SECRET } from '../support/withdrawals';
import { assertErrorBody } from '../support/errors';

describe('security: acquirer callbacks replayed or tampered with', function () {
  this.timeout(60_000);
  let s: ChargesStack;
  let seq = 0;

  before(async () => {
    s = await chargesStack();
  });
  afterEach(() => assertLedgerInvariant(s.api.knex));

  const e2eId = (): string => `E${Date.now()}${process.pid}${++seq}`.padEnd(32, '5').slice(0, 32);
  const post = (body: string, signature: string) =>
    fetch(`${s.api.baseUrl}/v1/acquirer/pix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CALLBACK_SIGNATURE_HEADER]: signature },
      body,
    });

  async function pendingCharge(amount: number): Promise<{ m: MerchantFixture; id: string; txid: string }> {
    const m = await readyMerchant(s.api);
    const res = await s.api.request<{ charge: { id: string; txid: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount, description: 'replay target' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { m, id: res.body.charge.id, txid: res.body.charge.txid };
  }

  const state = async (merchantId: string, chargeId: string) => ({
    charge: (await s.api
      .knex('charges')
      .where({ id: chargeId })
      .first('status', 'paid_at', 'refunded_amount')) as Record<string, unknown>,
    transactions: (await s.api
      .knex('ledger_transactions')
      .where({ merchant_id: merchantId })
      .orderBy('id')
      .pluck('id')) as string[],
    accounts: (await s.api
      .knex('ledger_accounts')
      .where({ merchant_id: merchantId })
      .orderBy('kind')
      .select('kind', 'balance')) as unknown[],
  });

  it('the same signed payment sent 6 times in parallel and again after it was applied is applied once', async () => {
    const { m, id, txid } = await pendingCharge(10_000);
    const e2e = e2eId();
    const body = JSON.stringify({
      pix: [{ endToEndId: e2e, txid, valor: '100.00', horario: new Date().toISOString() }],
    });
    const signature = signCallback(CALLBACK_SECRET, body);
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(body, signature)));
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 200, 200, 200, 200, 200],
    );
    await eventually(async () => {
      const st = await state(m.merchantId, id);
      return st.charge.status === 'PAID' && st.transactions.length > 0 ? st : undefined;
    }, 'the payment to be applied');
    const applied = await state(m.merchantId, id);
    assert.equal(applied.transactions.length, 1, 'one ledger transaction for one payment');

    for (let i = 0; i < 3; i++) assert.equal((await post(body, signature)).status, 200);
    assert.equal((await s.api.knex('acquirer_callbacks').where({ kind: 'pix', external_id: e2e })).length, 1);
    // A replay is answered only once it is in the inbox, and the inbox keeps one row per id: the
    // charge's books cannot have moved.
    assert.deepEqual(await state(m.merchantId, id), applied);
    const balance = await s.api.request<{ balance: { pending: number; available: number } }>(
      'GET',
      '/v1/merchants/me/balance',
      { token: m.token },
    );
    assert.equal(balance.body.balance.pending + balance.body.balance.available, 10_000 - 99);
  });

  it('a body that is not the signed bytes (amount, txid or payer changed) is 401 and changes nothing', async () => {
    const { m, id, txid } = await pendingCharge(10_000);
    const other = await pendingCharge(20_000);
    const e2e = e2eId();
    const genuine = JSON.stringify({
      pix: [{ endToEndId: e2e, txid, valor: '100.00', horario: new Date().toISOString() }],
    });
    const signature = signCallback(CALLBACK_SECRET, genuine);
    const before = await state(m.merchantId, id);
    const otherBefore = await state(other.m.merchantId, other.id);
    for (const tampered of [
      genuine.replace('"100.00"', '"1.00"'),
      genuine.replace(txid, other.txid).replace('"100.00"', '"200.00"'),
      genuine.replace('}]}', ',"pagador":{"nome":"Mallory","cpf":"12345678909"}}]}'),
      `${genuine}\n`,
    ]) {
      const res = await post(tampered, signature);
      assert.equal(res.status, 401, tampered);
      assertErrorBody((await res.json()) as object);
    }
    // Signed with another secret: refused too.
    assert.equal((await post(genuine, signCallback('not-the-acquirer', genuine))).status, 401);
    assert.equal((await s.api.knex('acquirer_callbacks').where({ kind: 'pix', external_id: e2e })).length, 0);
    assert.deepEqual(await state(m.merchantId, id), before);
    assert.deepEqual(await state(other.m.merchantId, other.id), otherBefore);
    assert.equal(before.charge.status, 'PENDING');
  });

  it('the same signed transfer completion sent 4 times in parallel and again after it was applied completes the withdrawal once', async () => {
    const w = await withdrawalsStack();
    const m = await fundedMerchant(w.api, 5_000);
    const created = await w.api.request<{ withdraw: { id: string } }>('POST', '/v1/merchants/me/withdrawals', {
      token: m.token,
      body: { amount: 2_000, ...DEST },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.withdraw.id;
    const sent = await eventually(async () => {
      const r = (await w.knex('withdrawals').where({ id }).first('transfer_id', 'batch_id')) as {
        transfer_id: string | null;
        batch_id: string | null;
      };
      return r.transfer_id ? r : undefined;
    }, 'the transfer to be sent');
    const body = JSON.stringify({
      transfer: {
        id: sent.transfer_id,
        batchId: sent.batch_id ?? 'b',
        idempotencyKey: id,
        valor: '20.00',
        chave: DEST.pixKey,
        tipoChave: DEST.pixKeyType,
        status: 'COMPLETED',
        horario: { criacao: new Date().toISOString() },
      },
    });
    const signature = signCallback(WITHDRAWALS_CALLBACK_SECRET, body);
    const postTransfer = () =>
      fetch(`${w.api.baseUrl}/v1/acquirer/transfers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [CALLBACK_SIGNATURE_HEADER]: signature },
        body,
      });
    const answers = await Promise.all(Array.from({ length: 4 }, postTransfer));
    assert.deepEqual(
      answers.map((r) => r.status),
      [202, 202, 202, 202],
    );
    await eventually(async () => {
      const r = (await w.knex('withdrawals').where({ id }).first('status')) as { status: string };
      const events = await w.knex('events').where({ merchant_id: m.merchantId, type: 'withdraw.completed' });
      return r.status === 'COMPLETED' && events.length > 0 ? r : undefined;
    }, 'the withdrawal to complete');
    const after = async () => ({
      transactions: (await w
        .knex('ledger_transactions')
        .where({ merchant_id: m.merchantId })
        .orderBy('id')
        .pluck('id')) as string[],
      events: (await w
        .knex('events')
        .where({ merchant_id: m.merchantId, type: 'withdraw.completed' })
        .pluck('id')) as string[],
      inbox: (
        await w.knex('acquirer_callbacks').where({ kind: 'transfers' }).whereLike('external_id', `${sent.transfer_id}%`)
      ).length,
    });
    const applied = await after();
    assert.equal(applied.events.length, 1);
    assert.equal(applied.inbox, 1);
    for (let i = 0; i < 2; i++) assert.equal((await postTransfer()).status, 202);
    assert.deepEqual(await after(), applied);
    const balance = await w.api.request<{ balance: { available: number } }>('GET', '/v1/merchants/me/balance', {
      token: m.token,
    });
    assert.equal(balance.body.balance.available, 3_000);
  });
});
