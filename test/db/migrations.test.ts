import assert from 'node:assert/strict';
import { createKnex } from '../../src/db/knex';
import { migrateLatest, migrateRollbackAll } from '../../src/db/migrate';
import { getTestDb } from '../support/db';

describe('migrations', () => {
  it('apply to an empty database, roll back completely, and apply again', async () => {
    const { knex: admin, url } = await getTestDb();
    const name = `mig_${Date.now()}`;
    await admin.raw(`create database ${name}`);
    const u = new URL(url);
    u.pathname = `/${name}`;
    const knex = createKnex(u.toString(), 2);
    try {
      assert.ok((await migrateLatest(knex)).length >= 1);
      assert.deepEqual(await migrateLatest(knex), []);
      const tables = await knex('information_schema.tables').where({ table_schema: 'public' }).pluck('table_name');
      for (const t of ['merchants', 'users', 'charges', 'ledger_postings', 'withdrawals', 'webhooks', 'audit_log']) {
        assert.ok(tables.includes(t), `missing table ${t}`);
      }
      assert.ok((await migrateRollbackAll(knex)).length >= 1);
      const left = await knex('information_schema.tables')
        .where({ table_schema: 'public' })
        .whereNotIn('table_name', ['knex_migrations', 'knex_migrations_lock'])
        .pluck('table_name');
      assert.deepEqual(left, []);
      assert.ok((await migrateLatest(knex)).length >= 1);
    } finally {
      await knex.destroy();
      await admin.raw(`drop database ${name} with (force)`);
    }
  });
});
