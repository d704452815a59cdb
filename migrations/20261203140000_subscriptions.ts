/**
 * Subscriptions (docs/api.md "Subscriptions"): a Pix Automático recurrence per row, its cycles in
 * `subscription_cycles`, each cycle's money a `charges` row of type RECURRING that names its
 * subscription and cycle, so ledger, settlement, refunds, MED and the statement apply unchanged.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table subscriptions (
    id text primary key,
    merchant_id text not null references merchants(id),
    status text not null default 'PENDING_APPROVAL' check (status in
      ('PENDING_APPROVAL', 'ACTIVE', 'CANCELED', 'REFUSED', 'EXPIRED', 'COMPLETED')),
    payer_name text not null,
    payer_document text not null,
    periodicity text not null check (periodicity in ('WEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMIANNUAL', 'YEARLY')),
    amount integer check (amount > 0),
    max_amount integer check (max_amount > 0),
    first_date date not null,
    end_date date,
    retry_policy text not null check (retry_policy in ('NONE', 'THREE_IN_SEVEN_DAYS')),
    description text not null,
    id_rec text unique,
    qr_code text,
    canceled_by text check (canceled_by in ('MERCHANT', 'PAYER')),
    ending_reason text,
    idempotency_key text,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    approved_at timestamptz,
    ended_at timestamptz,
    check ((amount is null) <> (max_amount is null)),
    unique (merchant_id, idempotency_key)
  )`);
  await knex.raw(
    'create index subscriptions_merchant_created_idx on subscriptions (merchant_id, created_at desc, id desc)',
  );
  await knex.raw(`create table subscription_cycles (
    subscription_id text not null references subscriptions(id),
    number integer not null check (number >= 1),
    due_date date not null,
    amount integer not null check (amount > 0),
    status text not null default 'PENDING' check (status in ('SCHEDULED', 'PENDING', 'PAID', 'FAILED', 'CANCELED')),
    charge_id text references charges(id),
    attempts integer not null default 1,
    failure_reason text,
    paid_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    primary key (subscription_id, number)
  )`);
  await knex.raw('alter table charges add column subscription_id text references subscriptions(id)');
  await knex.raw('alter table charges add column subscription_cycle integer');
  // A cycle's charge lives from its cobr's creation (3 days ahead) past the last retry (7 days after).
  await knex.raw('alter table charges drop constraint charges_expires_in_check');
  await knex.raw(`alter table charges add constraint charges_expires_in_check
    check (expires_in >= 60 and (expires_in <= 604800 or type = 'DUE_DATE' or (type = 'RECURRING' and expires_in <= 2592000)))`);
  await knex.raw(
    `alter table charges add constraint charges_subscription_check check ((type = 'RECURRING') = (subscription_id is not null))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table charges drop constraint if exists charges_subscription_check');
  await knex.raw('alter table charges drop constraint charges_expires_in_check');
  await knex.raw(
    `alter table charges add constraint charges_expires_in_check check (expires_in >= 60 and (expires_in <= 604800 or type = 'DUE_DATE'))`,
  );
  await knex.raw('alter table charges drop column if exists subscription_cycle');
  await knex.raw('alter table charges drop column if exists subscription_id');
  await knex.raw('drop table if exists subscription_cycles');
  await knex.raw('drop table if exists subscriptions');
}
