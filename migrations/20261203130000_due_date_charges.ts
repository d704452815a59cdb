/**
 * Due-date charges (docs/api.md "Due-date charges"): a DUE_DATE charge keeps its rules (due date,
 * validity after it, fine, interest, discount, abatement: src/domain/due-date-amount.ts) and, once
 * paid, what the payer paid (`amount_paid`, beside the nominal `amount`) with its breakdown.
 * Batches (`POST /v1/charges/batch`, the acquirer's lotecobv) keep each item's outcome.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table charges
    add column due_date date,
    add column validity_after_due integer,
    add column due_rules jsonb,
    add column amount_paid bigint,
    add column payment_breakdown jsonb`);
  await knex.raw(`alter table charges add constraint charges_due_date_check
    check ((type = 'DUE_DATE') = (due_date is not null and due_rules is not null and validity_after_due is not null))`);
  await knex.raw(
    `alter table charges add constraint charges_amount_paid_check check (amount_paid is null or amount_paid > 0)`,
  );
  // Refunds are of what was paid, which a fine and interest make more than the nominal amount.
  await knex.raw(`alter table charges drop constraint charges_refunded_check,
    add constraint charges_refunded_check check (refunded_amount >= 0 and refunded_amount <= coalesce(amount_paid, amount))`);
  // A due-date charge is payable until the end of its validity, which may be months away.
  await knex.raw(`alter table charges drop constraint charges_expires_in_check,
    add constraint charges_expires_in_check check (expires_in >= 60 and (expires_in <= 604800 or type = 'DUE_DATE'))`);
  await knex.raw(`create sequence charge_batch_acquirer_ids`);
  await knex.raw(`create table charge_batches (
    id text primary key,
    merchant_id text not null references merchants(id),
    acquirer_batch_id bigint not null unique default nextval('charge_batch_acquirer_ids'),
    idempotency_key text,
    status text not null default 'PROCESSING' check (status in ('PROCESSING', 'COMPLETED')),
    item_count integer not null,
    created_at timestamptz not null default now(),
    completed_at timestamptz,
    unique (merchant_id, idempotency_key)
  )`);
  await knex.raw(`create table charge_batch_items (
    batch_id text not null references charge_batches(id),
    index integer not null,
    charge_id text references charges(id),
    status text not null check (status in ('PENDING', 'ACCEPTED', 'REFUSED')),
    error_code text,
    error_message text,
    primary key (batch_id, index)
  )`);
  await knex.raw('create index charge_batches_merchant_idx on charge_batches (merchant_id, created_at desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists charge_batch_items');
  await knex.raw('drop table if exists charge_batches');
  await knex.raw('drop sequence if exists charge_batch_acquirer_ids');
  await knex.raw(`alter table charges drop constraint charges_refunded_check,
    add constraint charges_refunded_check check (refunded_amount >= 0 and refunded_amount <= amount)`);
  await knex.raw(`alter table charges drop constraint charges_expires_in_check,
    add constraint charges_expires_in_check check (expires_in between 60 and 604800)`);
  await knex.raw(`alter table charges drop constraint if exists charges_amount_paid_check,
    drop constraint if exists charges_due_date_check,
    drop column if exists payment_breakdown, drop column if exists amount_paid, drop column if exists due_rules,
    drop column if exists validity_after_due, drop column if exists due_date`);
}
