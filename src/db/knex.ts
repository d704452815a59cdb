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
    // A connection attempt to an unreachable server gives up after 5 s (README "Database
    // outages"), so the API answers 503 instead of hanging.
    asyncStackTraces: false,
  });
}

/** Binds every objection model (they all extend Model) to `knex` as their default database. */
export function bindModels(knex: Knex): void {
  Model.knex(knex);
}
