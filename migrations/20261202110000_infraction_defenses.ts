/**
 * Merchants' MED defenses (docs/api.md "Infractions"): one defense per infraction, with up to five
 * evidence files kept in PostgreSQL (bytea), and each infraction's defense deadline and the
 * acquirer's report details. The deadline of an infraction received before this migration is 72 h
 * after it arrived, as for new ones (the MED's usual window).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('infractions', (t) => {
    t.text('report_details');
    t.timestamp('defense_deadline', { useTz: true });
  });
  await knex.raw(`update infractions set defense_deadline = created_at + interval '72 hours'`);
  await knex.raw(`alter table infractions
    alter column defense_deadline set default now() + interval '72 hours',
    alter column defense_deadline set not null`);

  await knex.schema.createTable('infraction_defenses', (t) => {
    t.text('id').primary();
    // One defense per infraction: the unique key is what refuses a second one under a race.
    t.text('infraction_id').notNullable().unique().references('infractions.id');
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('defense').notNullable();
    t.text('status').notNullable().defaultTo('PENDING');
    t.text('acquirer_defense_id');
    /** Why the acquirer did not take it (REFUSED). */
    t.text('refusal_reason');
    t.timestamp('forwarded_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table infraction_defenses
    add constraint infraction_defenses_status_check check (status in ('PENDING','DEFENDED','REFUSED')),
    add constraint infraction_defenses_defense_check check (char_length(defense) between 1 and 1000)`);
  await knex.raw(
    `create index infraction_defenses_pending_idx on infraction_defenses (created_at) where status = 'PENDING'`,
  );

  await knex.schema.createTable('infraction_defense_files', (t) => {
    t.text('id').primary();
    t.text('defense_id').notNullable().references('infraction_defenses.id');
    t.text('merchant_id').notNullable().references('merchants.id');
    t.integer('position').notNullable();
    t.text('name').notNullable();
    t.text('mime_type').notNullable();
    t.integer('size').notNullable();
    t.binary('content').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['defense_id', 'position']);
  });
  await knex.raw(`alter table infraction_defense_files
    add constraint infraction_defense_files_mime_type_check check (mime_type in ('application/pdf','image/png','image/jpeg')),
    add constraint infraction_defense_files_size_check check (size between 1 and 10485760 and size = octet_length(content)),
    add constraint infraction_defense_files_position_check check (position between 0 and 4)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('infraction_defense_files');
  await knex.schema.dropTableIfExists('infraction_defenses');
  await knex.schema.alterTable('infractions', (t) => {
    t.dropColumn('defense_deadline');
    t.dropColumn('report_details');
  });
}
