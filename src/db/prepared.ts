/**
 * Named prepared statements for the hottest reads (docs/performance.md "Where a read's time goes").
 *
 * A statement sent through knex is compiled by knex and then parsed and planned by PostgreSQL on
 * every call; on 2 cores, under load, that planning competes with everything else for the CPU. A
 * named statement is parsed once per pooled connection (node-postgres remembers which names each
 * connection has prepared) and PostgreSQL may keep its plan, so a repeated read costs an execute.
 *
 * The SQL is written once with `?` placeholders, as knex raw takes it: inside a transaction the
 * statement runs through the transaction with `db.raw` (its connection is the transaction's), on
 * the pool it runs prepared on a pooled connection. Only fixed statements go here, never SQL built
 * from input.
 *
 * Named statements live in the database session: this needs connections straight to PostgreSQL
 * (as today) or a pooler that keeps sessions, not a transaction-pooling proxy that hands one
 * session's statements to another. A migration that changes the type of a column one of these
 * selects makes PostgreSQL refuse the cached statement until the connection is replaced.
 */
import type { Knex } from 'knex';
import type { Db } from './types';
import pg, { type Client as PgClient, type QueryResultRow } from 'pg';

export interface PreparedStatement {
  /** The name the statement is prepared under on each connection (unique per statement). */
  readonly name: string;
  /** The statement with `?` placeholders (knex raw). */
  readonly sql: string;
  /** The statement with `$n` placeholders (PostgreSQL). */
  readonly text: string;
}

const names = new Set<string>();

/** Declares a fixed statement once, at module load; `name` must be unique in the process. */
export function preparedStatement(name: string, sql: string): PreparedStatement {
  if (names.has(name)) throw new Error(`prepared statement ${name} declared twice`);
  names.add(name);
  let n = 0;
  return { name, sql, text: sql.replace(/\?/g, () => `$${++n}`) };
}

/** Runs `statement` with `values` and returns its rows. */
export async function queryPrepared<R extends QueryResultRow>(
  db: Db,
  statement: PreparedStatement,
  values: unknown[],
): Promise<R[]> {
  if (db.isTransaction) {
    return ((await db.raw(statement.sql, values as Knex.RawBinding[])) as { rows: R[] }).rows;
  }
  const client = db.client as {
    acquireConnection(): Promise<PgClient>;
    releaseConnection(c: PgClient): Promise<unknown>;
  };
  const conn = await client.acquireConnection();
  try {
    return await runNamed<R>(conn, statement, values);
  } finally {
    await client.releaseConnection(conn);
  }
}

/**
 * `conn.query({ name, text, values })` without its per-call cost: node-postgres copies a config
 * object property by property through their descriptors (`cloneQueryConfig`, ≈ 4 % of a balance
 * read's main thread in a CPU profile, docs/performance.md "Where a read's time goes"); a `Query` made from the
 * text is not copied, and the name is then set on it as the config would have set it.
 */
function runNamed<R extends QueryResultRow>(
  conn: PgClient,
  statement: PreparedStatement,
  values: unknown[],
): Promise<R[]> {
  return new Promise<R[]>((resolve, reject) => {
    const query = new pg.Query<R>(statement.text, values, (err, result) => (err ? reject(err) : resolve(result.rows)));
    (query as pg.Query<R> & { name?: string }).name = statement.name;
    conn.query(query);
  });
}
