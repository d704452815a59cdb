/**
 * Access control that can be withdrawn (README "Auth hardening"):
 * - `users.status` (ACTIVE | DISABLED): a disabled user is refused on every authenticated route;
 * - `users.token_version`: copied into each login JWT (`ver`); bumping it makes every JWT issued
 *   before unusable (operator revocation);
 * - `rate_limits`: the counters of rate-limiter-flexible's PostgreSQL store, shared by every API
 *   process so a limit holds across processes. Its shape is the one the library expects
 *   (key, points, expire in epoch milliseconds); the library deletes expired rows itself.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.text('status').notNullable().defaultTo('ACTIVE');
    t.integer('token_version').notNullable().defaultTo(0);
  });
  await knex.raw(`alter table users
    add constraint users_status_check check (status in ('ACTIVE','DISABLED')),
    add constraint users_token_version_check check (token_version >= 0)`);

  // UNLOGGED: counters need no crash safety (a crash at worst resets the current windows), and
  // skipping the write-ahead log spares every counted request a WAL flush.
  await knex.raw(`create unlogged table rate_limits (
    key varchar(255) primary key,
    points integer not null default 0,
    expire bigint
  )`);
  await knex.raw('create index rate_limits_expire_idx on rate_limits (expire)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('rate_limits');
  await knex.raw('alter table users drop constraint users_status_check, drop constraint users_token_version_check');
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('status');
    t.dropColumn('token_version');
  });
}
