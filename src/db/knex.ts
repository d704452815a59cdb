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
    // `jit = off` for every session (a startup option, no round trip): the service runs short,
    // indexed statements, and a plan whose estimate crosses jit_above_cost is compiled on every
    // call, tens to hundreds of ms for a statement that runs in a fraction of one (seen with the
    // batched list statement before its plan was bounded: docs/performance.md "Where a read's time goes",
    // Balance reads). A DATABASE_URL that sets `options` itself keeps its own.
    connection: { connectionString, connectionTimeoutMillis: 5_000, options: '-c jit=off' },
    pool: { min: 0, max: poolMax },
    // A connection attempt to an unreachable server gives up after 5 s
    // (docs/production.md "Database outages"), so the API answers 503 instead of hanging.
    asyncStackTraces: false,
  });
}

/** Binds every objection model (they all extend Model) to `knex` as their default database. */
export function bindModels(knex: Knex): void {
  Model.knex(knex);
}
