/**
 * Webhook deliveries as an outbox (README "Webhooks"): the envelope's bytes are stored once with
 * the delivery, in the transaction of the change they announce; `workflow_started_at` stays null
 * until the dispatcher has started the delivery's workflow, so a start lost to a crash is found
 * again. `attempt_limit` is the last attempt number of the current series (null: the first series,
 * sized by configuration); a redelivery opens a new series. One log row per attempt number makes
 * logging an attempt idempotent when its activity is retried.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.text('payload');
    t.integer('attempt_limit');
    t.timestamp('workflow_started_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.text('last_error');
  });
  await knex.raw(`alter table webhook_deliveries add constraint webhook_deliveries_attempt_limit_check
    check (attempt_limit is null or attempt_limit >= 1)`);
  await knex.raw(`create index webhook_deliveries_outbox_idx on webhook_deliveries (created_at)
    where workflow_started_at is null and status = 'PENDING'`);
  await knex.raw(
    'create index webhook_deliveries_webhook_list_idx on webhook_deliveries (webhook_id, created_at desc, id desc)',
  );
  await knex.raw('drop index if exists webhook_delivery_logs_delivery_idx');
  await knex.raw(
    'create unique index webhook_delivery_logs_attempt_uidx on webhook_delivery_logs (delivery_id, attempt)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_delivery_logs_attempt_uidx');
  await knex.raw('create index webhook_delivery_logs_delivery_idx on webhook_delivery_logs (delivery_id, attempt)');
  await knex.raw('drop index if exists webhook_deliveries_webhook_list_idx');
  await knex.raw('drop index if exists webhook_deliveries_outbox_idx');
  await knex.raw('alter table webhook_deliveries drop constraint if exists webhook_deliveries_attempt_limit_check');
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumns('payload', 'attempt_limit', 'workflow_started_at', 'completed_at', 'last_error');
  });
}
