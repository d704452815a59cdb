import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { MIGRATION_NAMES, migrateDown, migrateLatest, migrateRollbackAll } from '../../src/db/migrate';
import { newId } from '../../src/lib/ids';
import * as ledger from '../../src/services/ledger/ledger';
import { webhookSecretBox } from '../../src/lib/secret-box';
import { createMerchantFixture, createTestDatabase, balancesAndPosted } from '../support/db';
import { decryptAny, encryptAs, ringFromEnv } from '../../migrations/support/webhook-secret-crypto';

const SLOTS = '20261201150000_webhook_secret_slots';

const DOMAIN_TABLES = [
  'users',
  'merchants',
  'pix_keys',
  'api_keys',
  'customers',
  'charges',
  'charge_refunds',
  'ledger_accounts',
  'ledger_transactions',
  'ledger_postings',
  'ledger_statement_lines',
  'withdrawals',
  'webhooks',
  'events',
  'webhook_deliveries',
  'webhook_delivery_logs',
  'infractions',
  // A merchant's defense of an infraction and its files (docs/api.md "Infractions").
  'infraction_defenses',
  'infraction_defense_files',
  'notifications',
  'acquirer_callbacks',
  'audit_log',
  // Counters of the rate limits shared by API processes (docs/api.md "Rate limits").
  'rate_limits',
  'idempotency_keys',
  // Charges per merchant and status, kept by a trigger (docs/performance.md "Where a charge's time goes").
  'charge_counts',
  // Charges per merchant, status and hour of creation: where a deep page begins (docs/performance.md "Where a read's time goes").
  'charge_hour_counts',
  // Withdrawals per merchant and deliveries per webhook, kept by triggers (docs/api.md "Pagination limits").
  'list_counts',
  // What a workflow leaves for an operator (docs/operations.md "Operator cases").
  'operator_cases',
  // Pix Automático (docs/api.md "Subscriptions").
  'subscriptions',
  'subscription_cycles',
  // Due-date charge batches, the acquirer's lotecobv (docs/api.md "Charge batches").
  'charge_batches',
  'charge_batch_items',
];

async function publicTables(knex: Knex): Promise<string[]> {
  return knex('information_schema.tables')
    .where({ table_schema: 'public' })
    .whereNotIn('table_name', ['knex_migrations', 'knex_migrations_lock'])
    .orderBy('table_name')
    .pluck('table_name');
}

describe('migrations', () => {
  let knex: Knex;
  let drop: () => Promise<void>;

  // A database of its own: rolling back must not disturb the suites sharing the run's database.
  // Migrations run as the owner role, as `npm run migrate` does (docs/production.md "Database roles").
  before(async () => {
    const db = await createTestDatabase('mig', { migrate: false });
    knex = db.ownerKnex;
    drop = db.drop;
  });
  after(async () => {
    await drop();
  });

  it('list every file of migrations/ in src/db/migrate.ts, in order', () => {
    const files = fs
      .readdirSync(path.join(__dirname, '../../migrations'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    assert.deepEqual(files, MIGRATION_NAMES);
  });

  it('apply to an empty database, then have nothing left to apply', async () => {
    assert.deepEqual(await migrateLatest(knex), MIGRATION_NAMES);
    assert.equal(MIGRATION_NAMES[0], '20261122000000_initial_schema');
    assert.deepEqual(await migrateLatest(knex), []);
    assert.deepEqual(await publicTables(knex), [...DOMAIN_TABLES].sort());
  });

  it('install the zero-sum check as a DEFERRABLE INITIALLY DEFERRED constraint trigger', async () => {
    const { rows } = await knex.raw<{ rows: Array<{ tgdeferrable: boolean; tginitdeferred: boolean }> }>(
      `select tgdeferrable, tginitdeferred from pg_trigger where tgname = 'ledger_postings_zero_sum'`,
    );
    assert.deepEqual(rows, [{ tgdeferrable: true, tginitdeferred: true }]);
  });

  it('index every list query by its filter and order', async () => {
    const indexes: string[] = await knex('pg_indexes').where({ schemaname: 'public' }).pluck('indexdef');
    const has = (table: string, columns: string): boolean =>
      indexes.some((d) => d.includes(` ON public.${table} `) && d.includes(`(${columns})`));
    for (const [table, columns] of [
      ['charges', 'merchant_id, created_at DESC, id DESC'],
      ['charges', 'merchant_id, status, created_at DESC, id DESC'],
      ['withdrawals', 'merchant_id, created_at DESC, id DESC'],
      ['api_keys', 'merchant_id, created_at'],
      ['pix_keys', 'merchant_id, created_at'],
      ['webhooks', 'merchant_id, created_at'],
      ['webhook_delivery_logs', 'webhook_id, created_at DESC, id DESC'],
      ['notifications', 'merchant_id, created_at DESC'],
      ['ledger_transactions', 'merchant_id, created_at'],
      ['ledger_postings', 'account_id, id'],
      ['audit_log', 'created_at DESC, id DESC'],
      ['audit_log', 'target_type, target_id, created_at DESC'],
      ['merchants', 'created_at, id'],
      ['charge_hour_counts', 'merchant_id, hour DESC'],
      ['webhook_deliveries', 'webhook_id, created_at DESC, id DESC'],
    ]) {
      assert.ok(has(table, columns), `index on ${table} (${columns})`);
    }
  });

  it('ledger constraints: down lifts the rules, up backfills the posted sums and refuses books that break them', async () => {
    const LEDGER_CONSTRAINTS = '20261126100000_ledger_constraints';
    const TRIGGERS = [
      'ledger_postings_apply',
      'ledger_postings_no_truncate',
      'ledger_accounts_guard_insert',
      'ledger_accounts_guard_update',
      'ledger_accounts_balance_posted',
      'ledger_transactions_has_postings',
      'ledger_transactions_fixed_merchant',
    ];
    const triggers = async (): Promise<string[]> =>
      knex('pg_trigger').whereIn('tgname', TRIGGERS).orderBy('tgname').pluck('tgname');
    const m = (await createMerchantFixture(knex)).id;
    await ledger.creditChargePayment(knex, { chargeId: newId('ch'), merchantId: m, amount: 1_000, fee: 10 });

    assert.deepEqual(await migrateDown(knex, LEDGER_CONSTRAINTS), [LEDGER_CONSTRAINTS]);
    assert.deepEqual(await triggers(), []);
    assert.equal(await knex.schema.hasColumn('ledger_accounts', 'posted'), false);
    // Books written while the rules are down: more postings (to backfill), and an empty transaction.
    await ledger.settleChargePayment(knex, { chargeId: newId('ch'), merchantId: m, net: 990 });
    const empty = newId('ltx');
    await knex('ledger_transactions').insert({ id: empty, reference: empty, kind: 'raw', merchant_id: m });
    await assert.rejects(
      migrateLatest(knex),
      /0 account balance\(s\) differ from their postings, 0 posting\(s\) to another merchant's account, 1 transaction\(s\) without postings/,
    );
    await knex('ledger_transactions').where({ id: empty }).delete();

    assert.deepEqual(await migrateLatest(knex), [LEDGER_CONSTRAINTS]);
    assert.deepEqual(await triggers(), [...TRIGGERS].sort());
    assert.deepEqual(await balancesAndPosted(knex, m), [
      ['acquirer', -1_000, -1_000],
      ['available', 990, 990],
      ['fee_revenue', 10, 10],
      ['pending', 0, 0],
    ]);
    await assert.rejects(
      knex('ledger_accounts').where({ merchant_id: m, kind: 'available' }).update({ balance: 1 }),
      /postings sum to 990/,
    );
  });

  it('webhook secret encryption: up encrypts the plaintext secrets, down decrypts them back', async () => {
    const NAME = '20261126130000_webhook_secret_encryption';
    const m = (await createMerchantFixture(knex)).id;
    assert.deepEqual(await migrateDown(knex, SLOTS), [SLOTS]);
    assert.deepEqual(await migrateDown(knex, NAME), [NAME]);
    const id = newId('wh');
    const secret = `whsec_${'A'.repeat(42)}w`;
    await knex('webhooks').insert({
      id,
      merchant_id: m,
      url: 'https://example.com/h',
      events: '[]',
      secret,
      status: 'ACTIVE',
    });

    assert.deepEqual(await migrateLatest(knex), [NAME, SLOTS]);
    const row = (await knex('webhooks').where({ id }).first()) as Record<string, unknown>;
    assert.equal(row.secret, undefined);
    assert.ok(!JSON.stringify(row).includes(secret.slice(6)), 'the secret is in clear after the migration');
    assert.equal(webhookSecretBox(undefined).decrypt(String(row.secret_ciphertext), 'webhook-current', id), secret);

    assert.deepEqual(await migrateDown(knex, SLOTS), [SLOTS]);
    assert.deepEqual(await migrateDown(knex, NAME), [NAME]);
    assert.equal(((await knex('webhooks').where({ id }).first('secret')) as { secret: string }).secret, secret);
    assert.deepEqual(await migrateLatest(knex), [NAME, SLOTS]);
  });

  it('webhook secret slots: aesgcm1 values become aesgcm2 bound to their slot; down goes back; an unreadable one stays', async () => {
    const m = (await createMerchantFixture(knex)).id;
    const { ring } = ringFromEnv({});
    const [a, b] = [newId('wh'), newId('wh')];
    const v1 = (plain: string, slot: 'webhook-current' | 'webhook-previous', whId: string) =>
      encryptAs('aesgcm1', ring, 'dev', plain, slot, whId);
    const lost = `aesgcm1:gone:${'A'.repeat(16)}:${'B'.repeat(8)}:${'C'.repeat(22)}`;
    assert.deepEqual(await migrateDown(knex, SLOTS), [SLOTS]);
    await knex('webhooks').insert([
      {
        id: a,
        merchant_id: m,
        url: 'https://example.com/a',
        events: '[]',
        status: 'ACTIVE',
        secret_ciphertext: v1('whsec_new', 'webhook-current', a),
        previous_secret_ciphertext: v1('whsec_old', 'webhook-previous', a),
        previous_secret_expires_at: knex.raw(`now() + interval '1 hour'`),
      },
      { id: b, merchant_id: m, url: 'https://example.com/b', events: '[]', status: 'ACTIVE', secret_ciphertext: lost },
    ]);
    assert.deepEqual(await migrateLatest(knex), [SLOTS]);
    const box = webhookSecretBox(undefined);
    const rowA = (await knex('webhooks').where({ id: a }).first()) as Record<string, string>;
    assert.match(String(rowA.secret_ciphertext), /^aesgcm2:dev:/);
    assert.equal(box.decrypt(String(rowA.secret_ciphertext), 'webhook-current', a), 'whsec_new');
    assert.equal(box.decrypt(String(rowA.previous_secret_ciphertext), 'webhook-previous', a), 'whsec_old');
    assert.throws(() => box.decrypt(String(rowA.previous_secret_ciphertext), 'webhook-current', a), /authenticate/);
    assert.equal((await knex('webhooks').where({ id: b }).first('secret_ciphertext')).secret_ciphertext, lost);
    assert.equal(box.keyIdOf(lost), 'gone');

    assert.deepEqual(await migrateDown(knex, SLOTS), [SLOTS]);
    const backA = (await knex('webhooks').where({ id: a }).first()) as Record<string, string>;
    assert.equal(decryptAny(ring, String(backA.secret_ciphertext), 'webhook-current', a)?.format, 'aesgcm1');
    assert.equal(decryptAny(ring, String(backA.previous_secret_ciphertext), 'webhook-previous', a)?.plain, 'whsec_old');
    assert.deepEqual(await migrateLatest(knex), [SLOTS]);
    await knex('webhooks').whereIn('id', [a, b]).delete();
  });

  it('roll back completely and apply again', async () => {
    assert.deepEqual(await migrateRollbackAll(knex), [...MIGRATION_NAMES].reverse());
    assert.deepEqual(await publicTables(knex), []);
    const { rows } = await knex.raw<{ rows: unknown[] }>(
      `select 1 from pg_proc where proname like 'ledger_%' or proname like 'pixflow_%'`,
    );
    assert.deepEqual(rows, []);
    assert.deepEqual(await migrateLatest(knex), MIGRATION_NAMES);
  });
});
