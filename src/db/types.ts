import type { Knex } from 'knex';

/** A knex instance or a transaction: stores and the ledger run in whatever transaction the caller owns. */
export type Db = Knex | Knex.Transaction;
