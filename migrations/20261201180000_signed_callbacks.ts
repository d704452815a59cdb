/**
 * Which inbox rows the acquirer signed (docs/architecture.md "Workflows carry intent; activities
 * check facts"): `signed` is true only for a callback the route verified and kept; rows the service
 * writes itself (an outcome learnt by asking, a payment parked for an operator) are not evidence.
 * Rows kept before this column were taken as callbacks then, and stay so.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('acquirer_callbacks', (t) => {
    t.boolean('signed').notNullable().defaultTo(false);
  });
  await knex('acquirer_callbacks').update({ signed: true });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('acquirer_callbacks', (t) => {
    t.dropColumn('signed');
  });
}
