/**
 * A charge's type (docs/api.md "Charges"): IMMEDIATE (a cob), DUE_DATE (a cobv) or RECURRING (a Pix
 * Automático cycle's cobr). Existing charges are immediate. The type-filtered list walks
 * (merchant, type, created_at desc, id desc), with status included so that its count and an added
 * status filter read the index alone; the unfiltered list keeps its own indexes.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table charges add column type text not null default 'IMMEDIATE'`);
  await knex.raw(
    `alter table charges add constraint charges_type_check check (type in ('IMMEDIATE', 'DUE_DATE', 'RECURRING'))`,
  );
  await knex.raw(
    'create index charges_merchant_type_created_idx on charges (merchant_id, type, created_at desc, id desc) include (status)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists charges_merchant_type_created_idx');
  await knex.raw('alter table charges drop constraint if exists charges_type_check');
  await knex.raw('alter table charges drop column if exists type');
}
