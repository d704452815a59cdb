/**
 * The whole pixflow domain in one first migration (docs/DATA-MODEL.md), so later features add
 * behaviour, not rewrites. Money is bigint cents. Every rule the database can hold, it holds:
 * uniqueness of idempotency references, non-negative balances, zero-sum ledger transactions.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('merchants', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('document').notNullable().unique();
    t.text('email').notNullable();
    t.text('status').notNullable().defaultTo('ACTIVE');
    t.text('kyc_status').notNullable().defaultTo('PENDING');
    t.text('acquirer_account_id');
    t.integer('fee_bps').notNullable();
    t.bigInteger('fee_fixed').notNullable();
    t.integer('settlement_delay_seconds').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at', 'id']);
  });
  await knex.raw(`alter table merchants
    add constraint merchants_status_check check (status in ('ACTIVE','SUSPENDED')),
    add constraint merchants_kyc_check check (kyc_status in ('PENDING','APPROVED','REJECTED')),
    add constraint merchants_fee_bps_check check (fee_bps between 0 and 10000),
    add constraint merchants_fee_fixed_check check (fee_fixed >= 0),
    add constraint merchants_delay_check check (settlement_delay_seconds >= 0)`);

  await knex.schema.createTable('users', (t) => {
    t.text('id').primary();
    t.text('email').notNullable().unique();
    t.text('password_hash').notNullable();
    t.text('role').notNullable();
    t.text('merchant_id').references('merchants.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['merchant_id']);
  });
  await knex.raw(`alter table users
    add constraint users_role_check check (role in ('USER','ADMIN')),
    add constraint users_role_merchant_check check ((role = 'ADMIN') = (merchant_id is null)),
    add constraint users_email_lower_check check (email = lower(email))`);

  await knex.schema.createTable('pix_keys', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('type').notNullable();
    t.text('key').notNullable();
    t.text('status').notNullable().defaultTo('PENDING');
    t.text('acquirer_key_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['type', 'key']);
    t.index(['merchant_id', 'created_at']);
  });
  await knex.raw(`alter table pix_keys
    add constraint pix_keys_type_check check (type in ('CPF','CNPJ','EMAIL','PHONE','CHAVE_ALEATORIA')),
    add constraint pix_keys_status_check check (status in ('PENDING','ACTIVE','INACTIVE'))`);

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('created_by_user_id').references('users.id');
    t.text('name').notNullable();
    t.text('description');
    t.text('key_hash').notNullable().unique();
    t.text('key_last4').notNullable();
    t.text('status').notNullable().defaultTo('ACTIVE');
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['merchant_id', 'created_at']);
  });

  await knex.schema.createTable('customers', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('name').notNullable();
    t.text('email').notNullable();
    t.text('phone').notNullable();
    t.text('document').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['merchant_id', 'document']);
  });

  await knex.schema.createTable('charges', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('customer_id').references('customers.id');
    t.bigInteger('amount').notNullable();
    t.text('description').notNullable();
    t.text('status').notNullable().defaultTo('PENDING');
    t.integer('expires_in').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.text('txid').unique();
    t.text('qr_code');
    t.text('idempotency_key');
    t.jsonb('tracking');
    t.text('e2e_id').unique();
    t.text('payer_name');
    t.text('payer_document');
    t.timestamp('paid_at', { useTz: true });
    t.bigInteger('fee_amount');
    t.timestamp('settle_at', { useTz: true });
    t.timestamp('settled_at', { useTz: true });
    t.bigInteger('refunded_amount').notNullable().defaultTo(0);
    t.text('failure_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['merchant_id', 'idempotency_key']);
  });
  await knex.raw(`alter table charges
    add constraint charges_status_check check (status in ('PENDING','PAID','FAILED','CANCELED','REFUNDED')),
    add constraint charges_amount_check check (amount >= 1),
    add constraint charges_refunded_check check (refunded_amount >= 0 and refunded_amount <= amount),
    add constraint charges_expires_in_check check (expires_in between 60 and 604800)`);
  await knex.raw('create index charges_merchant_created_idx on charges (merchant_id, created_at desc, id desc)');
  await knex.raw(
    'create index charges_merchant_status_created_idx on charges (merchant_id, status, created_at desc, id desc)',
  );
  await knex.raw(`create index charges_pending_expiry_idx on charges (expires_at) where status = 'PENDING'`);

  await knex.schema.createTable('charge_refunds', (t) => {
    t.text('id').primary();
    t.text('charge_id').notNullable().references('charges.id');
    t.text('merchant_id').notNullable().references('merchants.id');
    t.bigInteger('amount').notNullable();
    t.text('reason');
    t.text('kind').notNullable().defaultTo('MERCHANT');
    t.text('status').notNullable().defaultTo('REQUESTED');
    t.text('rtr_id');
    t.text('e2e_id');
    t.text('failure_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('confirmed_at', { useTz: true });
    t.index(['charge_id', 'created_at']);
  });
  await knex.raw(`alter table charge_refunds
    add constraint charge_refunds_amount_check check (amount >= 1),
    add constraint charge_refunds_kind_check check (kind in ('MERCHANT','UNPAYABLE_PAYMENT','INFRACTION')),
    add constraint charge_refunds_status_check check (status in ('REQUESTED','CONFIRMED','FAILED'))`);

  // Ledger. Every account belongs to a merchant, including the platform-side ones (fee_revenue,
  // acquirer, adjustments): platform totals are sums by kind, and no single hot row serialises
  // every payment of every merchant.
  await knex.schema.createTable('ledger_accounts', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('kind').notNullable();
    t.bigInteger('balance').notNullable().defaultTo(0);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['merchant_id', 'kind']);
  });
  await knex.raw(`alter table ledger_accounts
    add constraint ledger_accounts_kind_check check (kind in
      ('available','pending','blocked','in_transit','fee_revenue','acquirer','adjustments')),
    add constraint ledger_accounts_non_negative check (kind in ('acquirer','adjustments') or balance >= 0)`);

  await knex.schema.createTable('ledger_transactions', (t) => {
    t.text('id').primary();
    t.text('reference').notNullable().unique();
    t.text('kind').notNullable();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('description');
    t.jsonb('metadata');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['merchant_id', 'created_at']);
  });

  await knex.schema.createTable('ledger_postings', (t) => {
    t.bigIncrements('id').primary();
    t.text('transaction_id').notNullable().references('ledger_transactions.id');
    t.text('account_id').notNullable().references('ledger_accounts.id');
    t.bigInteger('amount').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['transaction_id']);
    t.index(['account_id', 'id']);
  });
  await knex.raw('alter table ledger_postings add constraint ledger_postings_non_zero check (amount <> 0)');
  // Zero-sum per transaction, checked at commit (deferred) so postings can be inserted one by one.
  await knex.raw(`
    create function ledger_check_zero_sum() returns trigger language plpgsql as $$
    declare s numeric;
    begin
      select coalesce(sum(amount), 0) into s from ledger_postings where transaction_id = new.transaction_id;
      if s <> 0 then
        raise exception 'ledger transaction % does not sum to zero (%)', new.transaction_id, s
          using errcode = '23514';
      end if;
      return null;
    end $$`);
  await knex.raw(`
    create constraint trigger ledger_postings_zero_sum after insert or update on ledger_postings
    deferrable initially deferred for each row execute function ledger_check_zero_sum()`);
  // Postings are history: never edited, never deleted.
  await knex.raw(`
    create function ledger_postings_immutable() returns trigger language plpgsql as $$
    begin raise exception 'ledger postings are append-only'; end $$`);
  await knex.raw(`
    create trigger ledger_postings_no_change before update or delete on ledger_postings
    for each row execute function ledger_postings_immutable()`);

  await knex.schema.createTable('withdrawals', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.bigInteger('amount').notNullable();
    t.text('description');
    t.text('pix_key_type').notNullable();
    t.text('pix_key').notNullable();
    t.text('status').notNullable().defaultTo('PROCESSING');
    t.text('batch_id');
    t.text('transfer_id').unique();
    t.text('idempotency_key');
    t.text('failure_reason');
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('failed_at', { useTz: true });
    t.timestamp('refunded_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['merchant_id', 'idempotency_key']);
  });
  await knex.raw(`alter table withdrawals
    add constraint withdrawals_amount_check check (amount >= 100),
    add constraint withdrawals_status_check check (status in ('PROCESSING','COMPLETED','FAILED','REFUNDED'))`);
  await knex.raw(
    'create index withdrawals_merchant_created_idx on withdrawals (merchant_id, created_at desc, id desc)',
  );

  await knex.schema.createTable('webhooks', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('name');
    t.text('url').notNullable();
    t.jsonb('events').notNullable().defaultTo('[]');
    t.text('secret').notNullable();
    t.text('status').notNullable().defaultTo('ACTIVE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['merchant_id', 'created_at']);
  });
  await knex.raw(`alter table webhooks add constraint webhooks_status_check check (status in ('ACTIVE','INACTIVE'))`);

  await knex.schema.createTable('events', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('type').notNullable();
    t.jsonb('data').notNullable();
    t.text('reference').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['merchant_id', 'created_at']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary();
    t.text('event_id').notNullable().references('events.id');
    // No FK to webhooks: a deleted webhook's delivery history stays readable.
    t.text('webhook_id').notNullable();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('status').notNullable().defaultTo('PENDING');
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('last_status_code');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['event_id', 'webhook_id']);
    t.index(['webhook_id', 'created_at']);
  });
  await knex.raw(`alter table webhook_deliveries add constraint webhook_deliveries_status_check
    check (status in ('PENDING','SUCCEEDED','FAILED','CANCELED'))`);

  await knex.schema.createTable('webhook_delivery_logs', (t) => {
    t.text('id').primary();
    t.text('delivery_id').notNullable().references('webhook_deliveries.id');
    t.text('webhook_id').notNullable();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('event').notNullable();
    t.text('url').notNullable();
    t.text('payload').notNullable();
    t.integer('status_code');
    t.text('response');
    t.integer('attempt').notNullable();
    t.boolean('success').notNullable();
    t.text('error');
    t.integer('duration_ms');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    'create index webhook_delivery_logs_webhook_idx on webhook_delivery_logs (webhook_id, created_at desc, id desc)',
  );

  await knex.schema.createTable('infractions', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('charge_id').references('charges.id');
    t.text('acquirer_infraction_id').notNullable().unique();
    t.text('e2e_id');
    t.bigInteger('amount').notNullable();
    t.text('reason');
    t.text('status').notNullable().defaultTo('OPEN');
    t.bigInteger('blocked_amount').notNullable().defaultTo(0);
    t.timestamp('refunded_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['merchant_id', 'created_at']);
  });
  await knex.raw(`alter table infractions add constraint infractions_status_check
    check (status in ('OPEN','ACCEPTED','REJECTED','REFUNDED'))`);

  await knex.schema.createTable('notifications', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('kind').notNullable();
    t.text('title').notNullable();
    t.text('body').notNullable();
    t.jsonb('data');
    t.text('reference').unique();
    t.timestamp('read_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index notifications_merchant_created_idx on notifications (merchant_id, created_at desc)');

  await knex.schema.createTable('acquirer_callbacks', (t) => {
    t.text('id').primary();
    t.text('kind').notNullable();
    t.text('external_id').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['kind', 'external_id']);
  });

  await knex.schema.createTable('audit_log', (t) => {
    t.text('id').primary();
    t.text('actor_user_id');
    t.text('actor_email').notNullable();
    t.text('action').notNullable();
    t.text('target_type').notNullable();
    t.text('target_id').notNullable();
    t.jsonb('details').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index audit_log_created_idx on audit_log (created_at desc, id desc)');
  await knex.raw('create index audit_log_target_idx on audit_log (target_type, target_id, created_at desc)');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'audit_log',
    'acquirer_callbacks',
    'notifications',
    'infractions',
    'webhook_delivery_logs',
    'webhook_deliveries',
    'events',
    'webhooks',
    'withdrawals',
    'ledger_postings',
    'ledger_transactions',
    'ledger_accounts',
    'charge_refunds',
    'charges',
    'customers',
    'api_keys',
    'pix_keys',
    'users',
    'merchants',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.raw('drop function if exists ledger_check_zero_sum() cascade');
  await knex.raw('drop function if exists ledger_postings_immutable() cascade');
}
