/**
 * Where the trace of a payment crosses the database (docs/operations.md "Tracing"): a webhook
 * delivery keeps the W3C `traceparent` of the work that recorded its event, so the dispatcher
 * starts its workflow in the same trace; a kept acquirer callback keeps the one of the request
 * that brought it, so the inbox reconciler hands it on in that trace. Null when tracing is off,
 * and for older rows.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.text('traceparent').nullable();
  });
  await knex.schema.alterTable('acquirer_callbacks', (t) => {
    t.text('traceparent').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('acquirer_callbacks', (t) => {
    t.dropColumn('traceparent');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('traceparent');
  });
}
