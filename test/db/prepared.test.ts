/**
 * Named prepared statements (src/db/prepared.ts): run on a pooled connection under their name, so
 * PostgreSQL keeps them per session; errors reject and give the connection back; inside a
 * transaction the same SQL runs on the transaction's connection.
 */
import assert from 'node:assert/strict';
import { preparedStatement, queryPrepared } from '../../src/db/prepared';
import { getTestDb } from '../support/db';

const SELF = preparedStatement(
  'test_prepared_self',
  'select name, $$x$$ || ?::text as echo from pg_prepared_statements where name = ?',
);
const CAST = preparedStatement('test_prepared_cast', 'select ?::int as n');

describe('prepared statements', () => {
  it('are prepared under their name on the connection that runs them, with their values', async () => {
    const { knex } = await getTestDb();
    const runs = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        queryPrepared<{ name: string; echo: string }>(knex, SELF, [String(i), SELF.name]),
      ),
    );
    runs.forEach((rows, i) => assert.deepEqual(rows, [{ name: SELF.name, echo: `x${i}` }]));
  });

  it('run with JIT compilation off in every pooled session (short statements never pay for it)', async () => {
    const { knex } = await getTestDb();
    const settings = await Promise.all(
      Array.from({ length: 12 }, () => knex.raw(`select current_setting('jit') as jit`)),
    );
    for (const r of settings) assert.deepEqual((r as { rows: unknown[] }).rows, [{ jit: 'off' }]);
  });

  it('reject with the database error and give the connection back', async () => {
    const { knex } = await getTestDb();
    // More failures than the pool has connections: a connection kept after an error would stall this.
    for (let i = 0; i < 25; i++) {
      await assert.rejects(queryPrepared(knex, CAST, ['not a number']), /invalid input syntax for type integer/);
    }
    assert.deepEqual(await queryPrepared(knex, CAST, ['7']), [{ n: 7 }]);
  });

  it('run on the transaction inside one', async () => {
    const { knex } = await getTestDb();
    const n = await knex.transaction(async (trx) => {
      // A setting local to the transaction: only a statement inside it sees 41.
      await trx.raw("select set_config('pixflow.prepared_probe', '41', true)");
      const rows = await queryPrepared<{ n: number }>(
        trx,
        preparedStatement('test_prepared_tx', "select current_setting('pixflow.prepared_probe')::int + ? as n"),
        [1],
      );
      return rows[0]?.n;
    });
    assert.equal(n, 42);
  });
});
