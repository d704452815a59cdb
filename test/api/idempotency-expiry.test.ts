/**
 * Idempotency keys expire (docs/api.md "Idempotency"): keys older than IDEMPOTENCY_KEY_TTL_SECONDS
 * are purged by the periodic job (charge and withdrawal keys released, refund and adjustment key
 * rows deleted), younger ones still replay, and after the purge the same key makes a new resource.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { MerchantFixture, TestApi } from '../support/api';
import { DEST, fundedMerchant, withdrawalsStack } from '../support/withdrawals';
import { purgeExpiredIdempotencyKeys, startIdempotencyKeyPurge } from '../../src/services/platform/idempotency-purge';
import { createLogger } from '../../src/lib/logger';

const TTL = 86_400;
const DAY_AND_HOUR = `${TTL + 3600} seconds`;

describe('idempotency keys expire and are purged', function () {
  this.timeout(120_000);
  let api: TestApi;
  let knex: Knex;
  let m: MerchantFixture;
  let admin: string;

  before(async () => {
    ({ api, knex } = await withdrawalsStack());
    m = await fundedMerchant(api, 100_000);
    admin = await api.adminToken();
  });

  const key = (label: string): string => `${label}-${crypto.randomUUID()}`;

  const charge = (k: string) =>
    api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount: 500, description: 'expiry' },
      headers: { 'Idempotency-Key': k },
    });
  const withdraw = (k: string) =>
    api.request<{ withdraw: { id: string } }>('POST', '/v1/merchants/me/withdrawals', {
      token: m.token,
      body: { amount: 100, ...DEST },
      headers: { 'Idempotency-Key': k },
    });
  const adjust = (k: string) =>
    api.request<{ adjustment: { id: string } }>('POST', `/v1/admin/merchants/${m.merchantId}/adjustments`, {
      token: admin,
      body: { amount: 100, reason: 'expiry test' },
      headers: { 'Idempotency-Key': k },
    });

  /** Ages what a key made by more than the window, as if it had been made yesterday. */
  async function age(k: { charge?: string; withdrawal?: string; keyRow?: string }): Promise<void> {
    const ago = knex.raw(`now() - interval '${DAY_AND_HOUR}'`);
    if (k.charge) await knex('charges').where({ id: k.charge }).update({ created_at: ago });
    if (k.withdrawal) await knex('withdrawals').where({ id: k.withdrawal }).update({ created_at: ago });
    if (k.keyRow)
      await knex('idempotency_keys').where({ owner_id: m.merchantId, key: k.keyRow }).update({ created_at: ago });
  }

  it('purges expired keys, keeps fresh ones, and an expired key then creates a new resource', async () => {
    const [oldC, newC, oldW, newW, oldA, newA] = ['c', 'c', 'w', 'w', 'a', 'a'].map(key) as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const created = {
      oldC: await charge(oldC),
      newC: await charge(newC),
      oldW: await withdraw(oldW),
      newW: await withdraw(newW),
      oldA: await adjust(oldA),
      newA: await adjust(newA),
    };
    for (const [name, res] of Object.entries(created))
      assert.equal(res.status, 201, `${name}: ${JSON.stringify(res.body)}`);
    await age({ charge: created.oldC.body.charge.id, withdrawal: created.oldW.body.withdraw.id, keyRow: oldA });

    const purged = await purgeExpiredIdempotencyKeys(knex, { ttlSeconds: TTL });
    assert.ok(purged.charges >= 1 && purged.withdrawals >= 1 && purged.keyRows >= 1, JSON.stringify(purged));

    // Expired: released or deleted. Fresh: untouched.
    const chargeKey = async (id: string) =>
      (await knex('charges').where({ id }).first('idempotency_key')).idempotency_key;
    const withdrawalKey = async (id: string) =>
      (await knex('withdrawals').where({ id }).first('idempotency_key')).idempotency_key;
    const keyRow = async (k: string) => knex('idempotency_keys').where({ owner_id: m.merchantId, key: k }).first('key');
    assert.equal(await chargeKey(created.oldC.body.charge.id), null);
    assert.equal(await chargeKey(created.newC.body.charge.id), newC);
    assert.equal(await withdrawalKey(created.oldW.body.withdraw.id), null);
    assert.equal(await withdrawalKey(created.newW.body.withdraw.id), newW);
    assert.equal(await keyRow(oldA), undefined);
    assert.ok(await keyRow(newA));

    // Fresh keys still replay.
    for (const [res, id] of [
      [await charge(newC), created.newC.body.charge.id],
      [await withdraw(newW), created.newW.body.withdraw.id],
    ] as const) {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('idempotent-replayed'), 'true');
      assert.equal(JSON.stringify(res.body).includes(id), true);
    }
    const replayedA = await adjust(newA);
    assert.equal(replayedA.status, 200);
    assert.equal(replayedA.body.adjustment.id, created.newA.body.adjustment.id);

    // Expired keys are new requests: a new charge, withdrawal and adjustment, not a replay.
    const again = { c: await charge(oldC), w: await withdraw(oldW), a: await adjust(oldA) };
    assert.equal(again.c.status, 201, JSON.stringify(again.c.body));
    assert.notEqual(again.c.body.charge.id, created.oldC.body.charge.id);
    assert.equal(again.w.status, 201, JSON.stringify(again.w.body));
    assert.notEqual(again.w.body.withdraw.id, created.oldW.body.withdraw.id);
    assert.equal(again.a.status, 201, JSON.stringify(again.a.body));
    assert.notEqual(again.a.body.adjustment.id, created.oldA.body.adjustment.id);
    for (const res of Object.values(again)) assert.equal(res.headers.get('idempotent-replayed'), null);
  });

  it('the scheduled job purges on its first pass and stops cleanly', async () => {
    const k = key('job');
    const res = await adjust(k);
    assert.equal(res.status, 201);
    await age({ keyRow: k });
    const job = startIdempotencyKeyPurge({ knex, logger: createLogger({ level: 'silent' }), ttlSeconds: TTL });
    await job.stop();
    assert.equal(await knex('idempotency_keys').where({ owner_id: m.merchantId, key: k }).first('key'), undefined);
  });
});
