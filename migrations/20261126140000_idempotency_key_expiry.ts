/**
 * Idempotency keys expire (docs/api.md "Idempotency"): the periodic purge finds keys older than
 * IDEMPOTENCY_KEY_TTL_SECONDS by these indexes. On charges and withdrawals they are partial (only
 * rows that still hold a key), so they stay the size of one window's traffic.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'create index charges_idempotency_expiry_idx on charges (created_at) where idempotency_key is not null',
  );
  await knex.raw(
    'create index withdrawals_idempotency_expiry_idx on withdrawals (created_at) where idempotency_key is not null',
  );
  await knex.raw('create index idempotency_keys_created_idx on idempotency_keys (created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists idempotency_keys_created_idx');
  await knex.raw('drop index if exists withdrawals_idempotency_expiry_idx');
  await knex.raw('drop index if exists charges_idempotency_expiry_idx');
}
