/**
 * The one knex factory: pool size from config, bigint parsing.
 *
 * `bindModels` makes a knex the default of every objection model (`Model.knex(knex)`), so a plain
 * `Merchant.query()` works in a process with one database. Services still pass their knex or
 * transaction explicitly (`Model.query(trx)`): a write that must join a transaction then says so
 * in the code, and tests that open a second database are not confused by the default.
 */
import knexFactory, { type Knex } from 'knex';
import { Model } from 'objection';
import { installPgTypeParsers } from './pg-types';

export function createKnex(connectionString: string, poolMax = 10): Knex {
  installPgTypeParsers();
  return knexFactory({
    client: 'pg',
    connection: { connectionString, connectionTimeoutMillis: 5_000 },
    pool: { min: 0, max: poolMax },
    // Bounded waits while PostgreSQL is unreachable: a new connection gives up after 5 s and a
    // request waiting for a pooled one after 10 s (knex's default is 60 s), so the API answers 503
    // instead of hanging (README "Database outages").
    acquireConnectionTimeout: 10_000,
    asyncStackTraces: false,
  });
}

/** Binds every objection model (they all extend Model) to `knex` as their default database. */
export function bindModels(knex: Knex): void {
  Model.knex(knex);
}
