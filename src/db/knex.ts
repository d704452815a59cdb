/**
 * The one knex factory: pool size from config, bigint parsing. Models are never bound globally:
 * every query passes its knex or transaction (`Model.query(trx)`), so one process can talk to two
 * databases (tests do) and a forgotten transaction is visible in the code.
 */
import knexFactory, { type Knex } from 'knex';
import { installPgTypeParsers } from './pg-types';

export function createKnex(connectionString: string, poolMax = 10): Knex {
  installPgTypeParsers();
  const knex = knexFactory({
    client: 'pg',
    connection: connectionString,
    pool: { min: 0, max: poolMax },
    // Errors name the constraint; services translate the ones a client can cause.
    asyncStackTraces: false,
  });
  return knex;
}
