/**
 * Operator cases (README "Operator cases"): what a workflow cannot decide alone — an accepted
 * infraction with nothing to return, a refused devolução, a contradicting transfer outcome, a
 * charge whose cob cannot be checked before expiry — is a row here, opened once per `reference`
 * (so a retried activity opens nothing twice), with an audit entry and a metric, until an operator
 * resolves it with `npm run ops -- cases resolve`.
 *
 * `infractions.operator_action` carries an operator's decision to the infraction's workflow (the
 * database is the system of record; the signal only wakes it). `infractions.fee_returned` is the
 * part of a devolução the platform paid from its fee on the payment (README "MED infractions").
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('operator_cases', (t) => {
    t.text('id').primary();
    t.text('reference').notNullable().unique();
    t.text('kind').notNullable();
    t.text('status').notNullable().defaultTo('OPEN');
    t.text('merchant_id').references('id').inTable('merchants');
    t.text('subject_type').notNullable();
    t.text('subject_id').notNullable();
    t.text('reason').notNullable();
    t.jsonb('details').notNullable().defaultTo('{}');
    t.text('resolution');
    t.text('resolved_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('resolved_at', { useTz: true });
  });
  await knex.raw(`alter table operator_cases
    add constraint operator_cases_status_check check (status in ('OPEN','RESOLVED')),
    add constraint operator_cases_resolved_check check ((status = 'RESOLVED') = (resolved_at is not null))`);
  await knex.raw(`create index operator_cases_open_idx on operator_cases (created_at, id) where status = 'OPEN'`);
  await knex.raw(`create index operator_cases_subject_idx on operator_cases (subject_id)`);
  await knex.schema.alterTable('infractions', (t) => {
    t.text('operator_action');
    t.bigInteger('fee_returned').notNullable().defaultTo(0);
  });
  await knex.raw(`alter table infractions
    add constraint infractions_operator_action_check check (operator_action is null or operator_action in ('pending', 'retry', 'release')),
    add constraint infractions_fee_returned_check check (fee_returned >= 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table infractions
    drop constraint if exists infractions_fee_returned_check,
    drop constraint if exists infractions_operator_action_check`);
  await knex.schema.alterTable('infractions', (t) => {
    t.dropColumn('fee_returned');
    t.dropColumn('operator_action');
  });
  await knex.schema.dropTableIfExists('operator_cases');
}
