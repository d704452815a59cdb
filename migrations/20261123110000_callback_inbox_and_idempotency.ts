/**
 * The acquirer callback inbox becomes the durable source of truth for acquirer events (README
 * "The callback inbox and reconciliation"): every stored callback carries its processing state,
 * RECEIVED → APPLIED | PARKED, with the attempts made, the last error and when to try again, so a
 * reconciler can re-drive whatever is not applied yet. Plus `idempotency_keys`, the one table that
 * makes refunds and operator adjustments replay-safe under one `x-idempotency-key` (README
 * "Idempotent refunds and adjustments").
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('acquirer_callbacks', (t) => {
    t.text('status').notNullable().defaultTo('RECEIVED');
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    /** How it was applied (e.g. `paid`, `returned_to_payer`), for operators. */
    t.text('resolution');
    t.timestamp('applied_at', { useTz: true });
    t.timestamp('parked_at', { useTz: true });
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table acquirer_callbacks
    add constraint acquirer_callbacks_status_check check (status in ('RECEIVED','APPLIED','PARKED')),
    add constraint acquirer_callbacks_attempts_check check (attempts >= 0)`);
  await knex.raw(
    `create index acquirer_callbacks_due_idx on acquirer_callbacks (next_attempt_at) where status = 'RECEIVED'`,
  );
  await knex.raw(
    `create index acquirer_callbacks_parked_idx on acquirer_callbacks (parked_at) where status = 'PARKED'`,
  );

  await knex.schema.createTable('idempotency_keys', (t) => {
    /** What the key protects: `charge_refund`, `adjustment`. */
    t.text('scope').notNullable();
    /** Whose key space it is: the merchant. */
    t.text('owner_id').notNullable();
    t.text('key').notNullable();
    /** The resource the first request acted on (a charge id, a merchant id). */
    t.text('target_id').notNullable();
    /** The first request's answer, replayed to every later one; null while it runs. */
    t.jsonb('result');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['scope', 'owner_id', 'key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('idempotency_keys');
  await knex.raw('drop index if exists acquirer_callbacks_parked_idx');
  await knex.raw('drop index if exists acquirer_callbacks_due_idx');
  await knex.raw(`alter table acquirer_callbacks
    drop constraint if exists acquirer_callbacks_status_check,
    drop constraint if exists acquirer_callbacks_attempts_check`);
  await knex.schema.alterTable('acquirer_callbacks', (t) => {
    for (const c of [
      'status',
      'attempts',
      'last_error',
      'next_attempt_at',
      'resolution',
      'applied_at',
      'parked_at',
      'updated_at',
    ])
      t.dropColumn(c);
  });
}
