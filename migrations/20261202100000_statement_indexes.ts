/**
 * The merchant's statement (docs/api.md "Statement"): a MED refund's line names its infraction,
 * found by the refund's id, so `infractions (refund_id)` is indexed (a probe per such line of a
 * page or a CSV, instead of a scan of the infractions).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index infractions_refund_id_idx on infractions (refund_id) where refund_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists infractions_refund_id_idx');
}
