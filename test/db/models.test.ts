import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { newId } from '../../src/lib/ids';
import { AcquirerCallback } from '../../src/models/acquirer-callback';
import { ApiKey } from '../../src/models/api-key';
import { AuditLog } from '../../src/models/audit-log';
import { Charge } from '../../src/models/charge';
import { ChargeRefund } from '../../src/models/charge-refund';
import { Infraction } from '../../src/models/infraction';
import { LedgerAccount } from '../../src/models/ledger-account';
import { Merchant } from '../../src/models/merchant';
import { PixKey } from '../../src/models/pix-key';
import { User } from '../../src/models/user';
import { Withdrawal } from '../../src/models/withdrawal';
import { createMerchantFixture, getTestDb } from '../support/db';

/** Every field written comes back equal, with numbers for bigint columns and Dates for timestamps. */
function assertRoundTrip(stored: object, written: Record<string, unknown>): void {
  const row = stored as Record<string, unknown>;
  for (const [field, value] of Object.entries(written)) {
    assert.deepEqual(row[field], value, `field ${field}`);
  }
  for (const field of ['createdAt', 'updatedAt', 'receivedAt']) {
    if (field in row) assert.ok(row[field] instanceof Date, `${field} is a Date`);
  }
}

describe('models', () => {
  let knex: Knex;
  let merchant: Merchant;
  before(async () => {
    ({ knex } = await getTestDb());
    merchant = await createMerchantFixture(knex, {
      feeFixed: 25,
      kycStatus: 'APPROVED',
      acquirerAccountId: 'acct-1',
      booksOutsideTheDomain: true,
    });
  });

  it('merchant: camelCase properties over snake_case columns, numbers for bigint', async () => {
    const fetched = await Merchant.query(knex).findById(merchant.id);
    assert.ok(fetched);
    assert.equal(fetched.feeFixed, 25);
    assert.equal(typeof fetched.feeFixed, 'number');
    assert.equal(fetched.kycStatus, 'APPROVED');
    assert.equal(fetched.acquirerAccountId, 'acct-1');
    assert.ok(fetched.createdAt instanceof Date);
  });

  it('round-trips users, pix keys, api keys, charges and refunds', async () => {
    const user = {
      id: newId('usr'),
      email: `${newId('u').toLowerCase()}@x.test`,
      passwordHash: '$argon2id$x',
      role: 'USER' as const,
      merchantId: merchant.id,
    };
    assertRoundTrip(await User.query(knex).insertAndFetch(user), user);

    const pixKey = {
      id: newId('pxk'),
      merchantId: merchant.id,
      type: 'EMAIL' as const,
      key: `${newId('k').toLowerCase()}@x.test`,
      status: 'ACTIVE' as const,
      acquirerKeyId: 'ak-1',
    };
    assertRoundTrip(await PixKey.query(knex).insertAndFetch(pixKey), pixKey);

    const apiKey = {
      id: newId('ak'),
      merchantId: merchant.id,
      createdByUserId: user.id,
      name: 'n',
      description: null,
      keyHash: newId('hash'),
      keyLast4: 'abcd',
      status: 'ACTIVE' as const,
      lastUsedAt: new Date('2026-01-02T03:04:05.678Z'),
    };
    assertRoundTrip(await ApiKey.query(knex).insertAndFetch(apiKey), apiKey);

    const customer = {
      id: newId('cus'),
      merchant_id: merchant.id,
      name: 'Ana',
      email: 'ana@x.test',
      phone: '+5511999999999',
      document: '52998224725',
    };
    await knex('customers').insert(customer);

    const charge = {
      id: newId('ch'),
      merchantId: merchant.id,
      customerId: customer.id,
      amount: 123_456_789_012,
      description: 'big',
      status: 'PAID' as const,
      expiresIn: 3600,
      expiresAt: new Date('2026-01-02T04:00:00.000Z'),
      txid: newId('tx'),
      idempotencyKey: newId('idem'),
      tracking: { utmSource: 'google', clientIp: '10.0.0.1' },
      e2eId: newId('E'),
      feeAmount: 1_222_222_222,
      refundedAmount: 0,
      paidAt: new Date('2026-01-02T03:30:00.000Z'),
    };
    assertRoundTrip(await Charge.query(knex).insertAndFetch(charge), charge);

    const refund = {
      id: newId('rf'),
      chargeId: charge.id,
      merchantId: merchant.id,
      amount: 100,
      reason: 'r',
      kind: 'MERCHANT' as const,
      status: 'REQUESTED' as const,
    };
    assertRoundTrip(await ChargeRefund.query(knex).insertAndFetch(refund), refund);
  });

  it('round-trips withdrawals', async () => {
    const withdrawal = {
      id: newId('wd'),
      merchantId: merchant.id,
      amount: 5_000,
      pixKeyType: 'CPF' as const,
      pixKey: '52998224725',
      status: 'PROCESSING' as const,
      idempotencyKey: null,
    };
    assertRoundTrip(await Withdrawal.query(knex).insertAndFetch(withdrawal), withdrawal);
  });

  it('round-trips infractions, acquirer callbacks and the audit log', async () => {
    const infraction = {
      id: newId('inf'),
      merchantId: merchant.id,
      chargeId: null,
      acquirerInfractionId: newId('med'),
      amount: 700,
      blockedAmount: 500,
      status: 'OPEN' as const,
      reason: 'fraud',
    };
    assertRoundTrip(await Infraction.query(knex).insertAndFetch(infraction), infraction);

    const callback = { id: newId('acb'), kind: 'pix', externalId: newId('E'), payload: { pix: [{ valor: '1.00' }] } };
    assertRoundTrip(await AcquirerCallback.query(knex).insertAndFetch(callback), callback);

    const audit = {
      id: newId('aud'),
      actorUserId: null,
      actorEmail: 'ops@x.test',
      action: 'merchant.update',
      targetType: 'merchant',
      targetId: merchant.id,
      details: { kycStatus: 'APPROVED' },
    };
    assertRoundTrip(await AuditLog.query(knex).insertAndFetch(audit), audit);
  });

  it('reads ledger accounts written by a balanced transaction, numbers for bigint', async () => {
    const m = await createMerchantFixture(knex, { booksOutsideTheDomain: true });
    const txId = newId('ltx');
    const [a, b] = [newId('acc'), newId('acc')];
    // By hand, past the ledger's functions: as the owner role (the service's may not write these).
    const { ownerKnex } = await getTestDb();
    await ownerKnex.transaction(async (trx) => {
      await LedgerAccount.query(trx).insert([
        { id: a, merchantId: m.id, kind: 'available', balance: 10 },
        { id: b, merchantId: m.id, kind: 'adjustments', balance: -10 },
      ]);
      await trx('ledger_transactions').insert({
        id: txId,
        reference: txId,
        kind: 'test',
        merchant_id: m.id,
        metadata: JSON.stringify({ why: 'round trip' }),
      });
      await trx('ledger_postings').insert([
        { transaction_id: txId, account_id: a, amount: 10 },
        { transaction_id: txId, account_id: b, amount: -10 },
      ]);
    });
    const accounts = await LedgerAccount.query(knex).where({ merchant_id: m.id }).orderBy('kind');
    assert.deepEqual(
      accounts.map((x) => [x.kind, x.balance]),
      [
        ['adjustments', -10],
        ['available', 10],
      ],
    );
  });

  it('are bound to the test database, so a query without an explicit knex works', async () => {
    assert.ok(await Merchant.query().findById(merchant.id));
  });
});
