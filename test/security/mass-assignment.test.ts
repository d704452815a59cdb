/**
 * OWASP API3 (broken object property level authorization / mass assignment): fields a client must
 * not set — status, merchantId, fees, ids, secrets, key values, roles, balances — sent in bodies
 * are ignored (docs/api.md "Errors": unknown body fields are ignored), never
 * applied: the stored rows show the server's values.
 */
import assert from 'node:assert/strict';
import type { MerchantFixture, TestApi } from '../support/api';
import { randomCpf, uniqueEmail } from '../support/api';
import { DEST, fundedMerchant, withdrawalsStack } from '../support/withdrawals';
import { webhookStack } from '../support/webhooks';
import { webhookSecretBox } from '../../src/lib/secret-box';

const FORGED = {
  id: 'forged_01',
  merchantId: 'mer_forged',
  merchant_id: 'mer_forged',
  status: 'PAID',
  fee: 0,
  feeAmount: 0,
  fee_amount: 0,
  feeBps: 0,
  netAmount: 999_999_999,
  refundedAmount: 0,
  balance: { available: 999_999_999 },
  createdAt: '2000-01-01T00:00:00.000Z',
};

describe('security: mass assignment', function () {
  this.timeout(60_000);
  let api: TestApi;
  let m: MerchantFixture;
  let other: MerchantFixture;

  before(async () => {
    const s = await withdrawalsStack();
    api = s.api;
    m = await fundedMerchant(api, 50_000);
    other = await fundedMerchant(api, 0);
  });

  it('POST /v1/charges: status, merchantId, fee, ids and amounts beyond `amount` are not taken', async () => {
    const res = await api.request<{ charge: { id: string; status: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: {
        amount: 10_000,
        description: 'mass',
        ...FORGED,
        merchantId: other.merchantId,
        txid: 'forgedtxid0000000000000000000',
        paidAt: FORGED.createdAt,
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.notEqual(res.body.charge.id, FORGED.id);
    assert.equal(res.body.charge.status, 'PENDING');
    const row = (await api.knex('charges').where({ id: res.body.charge.id }).first()) as Record<string, unknown>;
    assert.equal(row.merchant_id, m.merchantId);
    assert.equal(row.status, 'PENDING');
    assert.equal(row.paid_at, null);
    assert.notEqual(row.txid, 'forgedtxid0000000000000000000');
    assert.ok(Number(row.fee_amount ?? 0) === 0 || Number(row.fee_amount) === 99, `fee ${String(row.fee_amount)}`);
    assert.equal(Number(row.refunded_amount ?? 0), 0);
    assert.equal(
      await api
        .knex('charges')
        .where({ merchant_id: other.merchantId })
        .first()
        .then((r) => r === undefined),
      true,
    );
  });

  it('POST /v1/merchants/me/withdrawals: status, merchantId, fee and ids are not taken', async () => {
    const res = await api.request<{ withdraw: { id: string; status: string } }>(
      'POST',
      '/v1/merchants/me/withdrawals',
      {
        token: m.token,
        body: {
          amount: 1_000,
          ...DEST,
          ...FORGED,
          status: 'COMPLETED',
          merchantId: other.merchantId,
          batchId: 'b-forged',
          transferId: 't-forged',
        },
      },
    );
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.notEqual(res.body.withdraw.id, FORGED.id);
    assert.equal(res.body.withdraw.status, 'PROCESSING');
    const row = (await api.knex('withdrawals').where({ id: res.body.withdraw.id }).first()) as Record<string, unknown>;
    assert.equal(row.merchant_id, m.merchantId);
    assert.notEqual(row.batch_id, 'b-forged');
    assert.notEqual(row.transfer_id, 't-forged');
    assert.equal(Number(row.amount), 1_000);
    const balance = await api.request<{ balance: { available: number } }>('GET', '/v1/merchants/me/balance', {
      token: m.token,
    });
    assert.equal(balance.body.balance.available, 49_000);
    const others = await api.request<{ balance: { available: number } }>('GET', '/v1/merchants/me/balance', {
      token: other.token,
    });
    assert.equal(others.body.balance.available, 0);
  });

  it('POST /v1/charges/:id/refund on a charge not paid: a forged status does not make it refundable', async () => {
    const created = await api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount: 500, description: 'r' },
    });
    const res = await api.request('POST', `/v1/charges/${created.body.charge.id}/refund`, {
      token: m.token,
      body: { amount: 500, status: 'PAID', chargeStatus: 'PAID' },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(
      await api
        .knex('charge_refunds')
        .where({ charge_id: created.body.charge.id })
        .first()
        .then((r) => r === undefined),
      true,
    );
  });

  it('webhooks: POST and PATCH take neither secret, merchantId nor id', async () => {
    const wh = await webhookStack();
    const chosen = 'whsec_chosen-by-the-client-000000000000000000';
    const created = await wh.api.request<{ webhook: { id: string; secret: string; status: string } }>(
      'POST',
      '/v1/webhooks/merchant',
      {
        token: m.token,
        body: {
          url: 'https://example.com/hook',
          ...FORGED,
          merchantId: other.merchantId,
          secret: chosen,
          status: 'ACTIVE',
        },
      },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.notEqual(created.body.webhook.id, FORGED.id);
    assert.notEqual(created.body.webhook.secret, chosen);
    const patched = await wh.api.request('PATCH', `/v1/webhooks/merchant/${created.body.webhook.id}`, {
      token: m.token,
      body: {
        name: 'renamed',
        secret: chosen,
        merchantId: other.merchantId,
        id: FORGED.id,
        createdAt: FORGED.createdAt,
      },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const row = (await wh.knex('webhooks').where({ id: created.body.webhook.id }).first()) as Record<string, unknown>;
    assert.equal(row.merchant_id, m.merchantId);
    assert.equal(row.name, 'renamed');
    // The stored secret (encrypted at rest) is still the one the service generated.
    const stored = webhookSecretBox(undefined).decrypt(
      String(row.secret_ciphertext),
      'webhook-current',
      created.body.webhook.id,
    );
    assert.equal(stored, created.body.webhook.secret);
    assert.notEqual(stored, chosen);
    assert.notEqual(new Date(row.created_at as string).getUTCFullYear(), 2000);
    assert.equal(
      await wh
        .knex('webhooks')
        .where({ merchant_id: other.merchantId })
        .first()
        .then((r) => r === undefined),
      true,
    );
  });

  it('POST /v1/api-keys takes neither value, status, merchantId nor id', async () => {
    const chosen = 'pk_live_chosen_by_the_client_0000000000';
    const res = await api.request<{ apiKey: { id: string; value: string; status: string } }>('POST', '/v1/api-keys', {
      token: m.token,
      body: {
        name: 'mass',
        ...FORGED,
        value: chosen,
        key: chosen,
        status: 'ACTIVE',
        merchantId: other.merchantId,
        createdByUserId: other.userId,
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.notEqual(res.body.apiKey.value, chosen);
    assert.notEqual(res.body.apiKey.id, FORGED.id);
    const row = (await api.knex('api_keys').where({ id: res.body.apiKey.id }).first()) as Record<string, unknown>;
    assert.equal(row.merchant_id, m.merchantId);
    assert.equal(row.created_by_user_id, m.userId);
    assert.equal((await api.request('GET', '/v1/merchants/me', { token: chosen })).status, 401);
  });

  it('admin: a merchant is created with a USER (never an ADMIN) and no balance, whatever the body says', async () => {
    const admin = await api.adminToken();
    const email = uniqueEmail('mass');
    const res = await api.request<{ merchant: { id: string }; user: { id: string; role: string } }>(
      'POST',
      '/v1/admin/merchants',
      {
        token: admin,
        body: {
          name: 'Mass',
          document: randomCpf(),
          email,
          password: 'merchant-password-1',
          role: 'ADMIN',
          user: { role: 'ADMIN' },
          id: FORGED.id,
          balance: FORGED.balance,
          tokenVersion: 0,
        },
      },
    );
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.user.role, 'USER');
    assert.notEqual(res.body.merchant.id, FORGED.id);
    const user = (await api.knex('users').where({ id: res.body.user.id }).first()) as Record<string, unknown>;
    assert.equal(user.role, 'USER');
    assert.equal(user.merchant_id, res.body.merchant.id);
    const accounts = (await api.knex('ledger_accounts').where({ merchant_id: res.body.merchant.id })) as Array<{
      balance: string;
    }>;
    assert.ok(accounts.every((a) => Number(a.balance) === 0));
  });

  it('admin: PATCH of a user or merchant changes neither role, merchant, id nor token version', async () => {
    const admin = await api.adminToken();
    const target = await api.createMerchant();
    const before = (await api.knex('users').where({ id: target.userId }).first()) as Record<string, unknown>;
    const res = await api.request('PATCH', `/v1/admin/users/${target.userId}`, {
      token: admin,
      body: {
        status: 'ACTIVE',
        role: 'ADMIN',
        merchantId: null,
        id: FORGED.id,
        tokenVersion: 0,
        email: 'hijack@pixflow.test',
        passwordHash: 'x',
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const after = (await api.knex('users').where({ id: target.userId }).first()) as Record<string, unknown>;
    assert.equal(after.role, 'USER');
    assert.equal(after.merchant_id, target.merchantId);
    assert.equal(after.email, before.email);
    assert.equal(after.password_hash, before.password_hash);
    const m2 = await api.request('PATCH', `/v1/admin/merchants/${target.merchantId}`, {
      token: admin,
      body: { name: 'Renamed', id: FORGED.id, document: '00000000000', balance: FORGED.balance, email: 'x@y.test' },
    });
    assert.ok(m2.status === 200 || m2.status === 400, JSON.stringify(m2.body));
    const merchant = (await api.knex('merchants').where({ id: target.merchantId }).first()) as Record<string, unknown>;
    assert.equal(merchant.document, target.document);
    const accounts = (await api.knex('ledger_accounts').where({ merchant_id: target.merchantId })) as Array<{
      balance: string;
    }>;
    assert.ok(accounts.every((a) => Number(a.balance) === 0));
  });
});
