/**
 * Migrations are listed here, statically imported, instead of being discovered on disk: the same
 * list then works under tsx (npm start, mocha) and from compiled JavaScript, with no loader tricks.
 * Add each new migration file to MIGRATIONS in order.
 */
import type { Knex } from 'knex';
import * as initialSchema from '../../migrations/20261122000000_initial_schema';
import * as checksAndWorkIndexes from '../../migrations/20261122010000_checks_and_work_indexes';
import * as callbackInboxAndIdempotency from '../../migrations/20261123110000_callback_inbox_and_idempotency';
import * as authHardening from '../../migrations/20261123120000_auth_hardening';
import * as webhookDeliveryOutbox from '../../migrations/20261123130000_webhook_delivery_outbox';
import * as infractionRefunds from '../../migrations/20261123140000_infraction_refunds';
import * as cacheInvalidationAndChargeCounts from '../../migrations/20261123150000_cache_invalidation_and_charge_counts';
import * as merchantProfileCache from '../../migrations/20261123160000_merchant_profile_cache';
import * as chargeHourCounts from '../../migrations/20261125230000_charge_hour_counts';
import * as operatorCases from '../../migrations/20261126090000_operator_cases';
import * as ledgerConstraints from '../../migrations/20261126100000_ledger_constraints';
import * as requestFingerprintsAndListCounts from '../../migrations/20261126110000_request_fingerprints_and_list_counts';
import * as webhookSecretEncryption from '../../migrations/20261126130000_webhook_secret_encryption';
import * as idempotencyKeyExpiry from '../../migrations/20261126140000_idempotency_key_expiry';
import * as traceContext from '../../migrations/20261126150000_trace_context';
import * as orderedCountUpserts from '../../migrations/20261127050000_ordered_count_upserts';
import * as webhookSecretSlots from '../../migrations/20261201150000_webhook_secret_slots';
import * as leastPrivilege from '../../migrations/20261201170000_least_privilege';
import * as signedCallbacks from '../../migrations/20261201180000_signed_callbacks';
import * as statementIndexes from '../../migrations/20261202100000_statement_indexes';
import * as statementLines from '../../migrations/20261202100100_statement_lines';
import * as infractionDefenses from '../../migrations/20261202110000_infraction_defenses';
import * as chargeTypes from '../../migrations/20261203120000_charge_types';
import * as dueDateCharges from '../../migrations/20261203130000_due_date_charges';
import * as subscriptions from '../../migrations/20261203140000_subscriptions';
import * as subscriptionCycleAmounts from '../../migrations/20261204050000_subscription_cycle_amounts';

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const MIGRATIONS: Array<[name: string, module: MigrationModule]> = [
  ['20261122000000_initial_schema', initialSchema],
  ['20261122010000_checks_and_work_indexes', checksAndWorkIndexes],
  ['20261123110000_callback_inbox_and_idempotency', callbackInboxAndIdempotency],
  ['20261123120000_auth_hardening', authHardening],
  ['20261123130000_webhook_delivery_outbox', webhookDeliveryOutbox],
  ['20261123140000_infraction_refunds', infractionRefunds],
  ['20261123150000_cache_invalidation_and_charge_counts', cacheInvalidationAndChargeCounts],
  ['20261123160000_merchant_profile_cache', merchantProfileCache],
  ['20261125230000_charge_hour_counts', chargeHourCounts],
  ['20261126090000_operator_cases', operatorCases],
  ['20261126100000_ledger_constraints', ledgerConstraints],
  ['20261126110000_request_fingerprints_and_list_counts', requestFingerprintsAndListCounts],
  ['20261126130000_webhook_secret_encryption', webhookSecretEncryption],
  ['20261126140000_idempotency_key_expiry', idempotencyKeyExpiry],
  ['20261126150000_trace_context', traceContext],
  ['20261127050000_ordered_count_upserts', orderedCountUpserts],
  ['20261201150000_webhook_secret_slots', webhookSecretSlots],
  ['20261201170000_least_privilege', leastPrivilege],
  ['20261201180000_signed_callbacks', signedCallbacks],
  ['20261202100000_statement_indexes', statementIndexes],
  ['20261202100100_statement_lines', statementLines],
  ['20261202110000_infraction_defenses', infractionDefenses],
  ['20261203120000_charge_types', chargeTypes],
  ['20261203130000_due_date_charges', dueDateCharges],
  ['20261203140000_subscriptions', subscriptions],
  ['20261204050000_subscription_cycle_amounts', subscriptionCycleAmounts],
];

/** Names of every migration, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = MIGRATIONS.map(([name]) => name);

class StaticMigrationSource implements Knex.MigrationSource<string> {
  getMigrations(): Promise<string[]> {
    return Promise.resolve(MIGRATIONS.map(([name]) => name));
  }
  getMigrationName(name: string): string {
    return name;
  }
  getMigration(name: string): Promise<Knex.Migration> {
    const found = MIGRATIONS.find(([n]) => n === name);
    if (!found) return Promise.reject(new Error(`unknown migration ${name}`));
    return Promise.resolve(found[1]);
  }
}

const migrationConfig = (): Knex.MigratorConfig => ({
  migrationSource: new StaticMigrationSource(),
  tableName: 'knex_migrations',
});

/**
 * Applies every pending migration; returns the names applied. With none pending it takes no lock,
 * so a role that may only read knex_migrations (the service's) can check a migrated database;
 * one with pending migrations and no right to apply them gets a message naming the fix.
 */
export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, pending] = (await knex.migrate.list(migrationConfig())) as [unknown[], unknown[]];
  if (pending.length === 0) return [];
  try {
    const [, applied] = (await knex.migrate.latest(migrationConfig())) as [number, string[]];
    return applied;
  } catch (err) {
    if ((err as { code?: string }).code === '42501')
      throw new Error(
        `migrations pending, and this role may not apply them (${(err as Error).message}): run npm run migrate ` +
          'with DATABASE_MIGRATION_URL, the owner role (docs/production.md "Database roles")',
        { cause: err },
      );
    throw err;
  }
}

/** Rolls back every migration (tests and `npm run migrate -- --rollback`). */
export async function migrateRollbackAll(knex: Knex): Promise<string[]> {
  const [, rolled] = (await knex.migrate.rollback(migrationConfig(), true)) as [number, string[]];
  return rolled;
}

/** Undoes one applied migration, by name (tests of a migration's `down`). */
export async function migrateDown(knex: Knex, name: string): Promise<string[]> {
  const [, undone] = (await knex.migrate.down({ ...migrationConfig(), name })) as [number, string[]];
  return undone;
}
