import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Knex } from 'knex';
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { DatabaseRoleError, bindModels, openDatabase } from '../../src/db';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { createKnex } from '../../src/db/knex';
import { migrateLatest } from '../../src/db/migrate';
import { assertLeastPrivilege, roleFacts } from '../../src/db/privileges';
import { createLogger } from '../../src/lib/logger';
import { newId } from '../../src/lib/ids';
import * as ledger from '../../src/services/ledger/ledger';
import { createMerchantFixture, fundMerchant, getTestDb, superuserTestKnex } from '../support/db';
import { needing, type Artefact } from '../support/external-artefacts';

/**
 * The database's promises hold against the service's own role (docs/production.md "Database
 * roles"): every suite runs as `pixflow_app` (test/support/db.ts), and here PostgreSQL itself
 * refuses that role each way around the ledger's rules.
 */
describe('least privilege in PostgreSQL', () => {
  let knex: Knex;
  let owner: Knex;
  let merchantId: string;
  before(async () => {
    ({ knex, ownerKnex: owner } = await getTestDb());
    merchantId = (await createMerchantFixture(knex)).id;
    await fundMerchant(knex, merchantId, 1_000);
  });

  /** PostgreSQL's insufficient_privilege (42501), whatever the wording. */
  const refused = async (work: Promise<unknown>, message: RegExp): Promise<void> => {
    await assert.rejects(work, (err: Error & { code?: string }) => {
      assert.equal(err.code, '42501', err.message);
      assert.match(err.message, message);
      return true;
    });
  };

  it('the suites run as pixflow_app, which is no superuser, cannot create roles or bypass RLS, and owns nothing', async () => {
    const { rows } = (await knex.raw(`select current_user as role, r.rolsuper, r.rolcreaterole, r.rolbypassrls,
        (select count(*)::int from pg_class c where pg_has_role(current_user, c.relowner, 'USAGE')
           and c.relnamespace = 'public'::regnamespace) as owned
      from pg_roles r where r.rolname = current_user`)) as { rows: Array<Record<string, unknown>> };
    assert.deepEqual(rows, [
      { role: 'pixflow_app', rolsuper: false, rolcreaterole: false, rolbypassrls: false, owned: 0 },
    ]);
  });

  it('UPDATE ledger_accounts is refused', async () => {
    await refused(
      knex('ledger_accounts').where({ merchant_id: merchantId, kind: 'available' }).update({ balance: 1_000_000 }),
      /permission denied for table ledger_accounts/,
    );
    await refused(
      knex('ledger_accounts').insert({ id: newId('acc'), merchant_id: merchantId, kind: 'blocked', balance: 0 }),
      /permission denied for table ledger_accounts/,
    );
  });

  it('UPDATE ledger_transactions is refused (and DELETE, and writing postings)', async () => {
    await refused(
      knex('ledger_transactions')
        .where({ merchant_id: merchantId })
        .update({ metadata: JSON.stringify({ fromPending: 1 }) }),
      /permission denied for table ledger_transactions/,
    );
    await refused(
      knex('ledger_transactions').where({ merchant_id: merchantId }).delete(),
      /permission denied for table ledger_transactions/,
    );
    await refused(
      knex('ledger_postings').insert({ transaction_id: newId('ltx'), account_id: newId('acc'), amount: 1 }),
      /permission denied for table ledger_postings/,
    );
  });

  it('CREATE TEMP TABLE is refused (nothing can shadow a table), and so is creating anything in the schema', async () => {
    await refused(
      knex.raw('create temp table ledger_accounts (id text)'),
      /permission denied to create temporary tables/,
    );
    await refused(knex.raw('create table shadow (id text)'), /permission denied for schema public/);
    await refused(
      knex.raw(`create function public.now() returns timestamptz language sql as 'select null::timestamptz'`),
      /permission denied for schema public/,
    );
  });

  it('ALTER TABLE … DISABLE TRIGGER is refused, and so is a trigger of its own on a business table', async () => {
    await refused(
      knex.raw('alter table ledger_accounts disable trigger all'),
      /must be owner of table ledger_accounts/,
    );
    await refused(
      knex.raw('alter table ledger_postings disable trigger user'),
      /must be owner of table ledger_postings/,
    );
    await refused(
      knex.raw(`create trigger sneak after insert on charges for each row execute function ledger_postings_apply()`),
      /permission denied for table charges/,
    );
  });

  it('SET session_replication_role is refused (triggers cannot be switched off for the session)', async () => {
    await refused(
      knex.raw('set session_replication_role = replica'),
      /permission denied to set parameter "session_replication_role"/,
    );
  });

  it('posts only through ledger_post_batch, whose rules it cannot get around by calling it by hand', async () => {
    const { rows } = (await owner.raw(`select p.proname, p.prosecdef, p.proconfig, pg_get_userbyid(p.proowner) as owner,
        has_function_privilege('public', p.oid, 'execute') as public_may,
        has_function_privilege('pixflow_app', p.oid, 'execute') as app_may
      from pg_proc p where p.proname in ('ledger_post_batch', 'ledger_lock_balances') order by p.proname`)) as {
      rows: Array<Record<string, unknown>>;
    };
    assert.deepEqual(
      rows.map((r) => [r.proname, r.prosecdef, r.proconfig, r.owner, r.public_may, r.app_may]),
      [
        ['ledger_lock_balances', true, ['search_path=public, pg_catalog, pg_temp'], 'pixflow_owner', false, true],
        ['ledger_post_batch', true, ['search_path=public, pg_catalog, pg_temp'], 'pixflow_owner', false, true],
      ],
    );
    // Postings that do not sum to zero: the function posts them, the commit refuses them.
    const movement = {
      id: newId('ltx'),
      reference: `forged:${newId('ref')}`,
      kind: 'forged',
      postings: [{ kind: 'available', amount: 500 }],
    };
    await assert.rejects(
      knex.raw('select ledger_post_batch(?, ?::jsonb, ?::jsonb)', [
        merchantId,
        JSON.stringify([movement]),
        JSON.stringify({ available: newId('acc') }),
      ]),
      /does not sum to zero/,
    );
    // A debit beyond the balance is refused by the function itself, changing nothing.
    const overdraft = {
      ...movement,
      id: newId('ltx'),
      reference: `forged:${newId('ref')}`,
      postings: [
        { kind: 'available', amount: -5_000 },
        { kind: 'in_transit', amount: 5_000 },
      ],
    };
    const answer = (await knex.raw('select ledger_post_batch(?, ?::jsonb, ?::jsonb) as o', [
      merchantId,
      JSON.stringify([overdraft]),
      JSON.stringify({ available: newId('acc'), in_transit: newId('acc') }),
    ])) as { rows: Array<{ o: unknown }> };
    assert.deepEqual(answer.rows[0]?.o, [{ status: 'refused', account: 'available', requested: 5_000 }]);
    // (The accounts it touches exist from then on, empty, as with any first movement.)
    assert.deepEqual(await ledger.getAccounts(knex, merchantId), {
      available: 1_000,
      adjustments: -1_000,
      in_transit: 0,
    });
  });

  it('a role with UPDATE on ledger_accounts cannot move balance and posted together from a trigger of its own', async () => {
    // The hole of the former guard (pg_trigger_depth() < 2): an UPDATE at depth 2 passed.
    const su = await superuserTestKnex();
    const intruder = `intruder_${crypto.randomBytes(4).toString('hex')}`;
    const m = (await createMerchantFixture(knex)).id;
    await fundMerchant(knex, m, 100);
    await su.raw(`create role ${intruder} nologin`);
    try {
      await su.raw(`grant select, update on ledger_accounts to ${intruder}`);
      await su.raw(`create schema ${intruder} authorization ${intruder}`);
      await su.transaction(async (trx) => {
        await trx.raw(`set local role ${intruder}`);
        await trx.raw(`create table ${intruder}.poke (merchant_id text)`);
        await trx.raw(`create function ${intruder}.poke() returns trigger language plpgsql as $$ begin
            update public.ledger_accounts set balance = balance + 1_000_000, posted = posted + 1_000_000
              where merchant_id = new.merchant_id and kind = 'available';
            return null; end $$`);
        await trx.raw(
          `create trigger poke after insert on ${intruder}.poke for each row execute function ${intruder}.poke()`,
        );
      });
      await assert.rejects(
        su.transaction(async (trx) => {
          await trx.raw(`set local role ${intruder}`);
          await trx(`${intruder}.poke`).insert({ merchant_id: m });
        }),
        /posted is the running sum of its postings, written only by the posting trigger/,
      );
      assert.deepEqual(await ledger.getAccounts(knex, m), { available: 100, adjustments: -100 });
    } finally {
      await su.raw(`drop schema if exists ${intruder} cascade`);
      await su.raw(`drop owned by ${intruder}`);
      await su.raw(`drop role ${intruder}`);
    }
  });

  const PSQL = psql();
  const initRolesTitle = needing(PSQL, "tools/compose/init-roles.sh gives compose's PostgreSQL the same two roles");
  if (!PSQL.path) it(initRolesTitle);
  else
    it(initRolesTitle, async function () {
      this.timeout(120_000);
      // A cluster of its own, stripped back to what the postgres image starts from: no roles of ours.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-init-roles-'));
      fs.chmodSync(dir, 0o755);
      const cluster = await startEmbeddedPostgres({
        dataDir: path.join(dir, 'data'),
        persistent: false,
        database: 'pixflow',
      });
      try {
        const su = new URL(cluster.superuserUrl);
        await sql(cluster.superuserUrl, [
          'reassign owned by pixflow_owner to postgres',
          'drop owned by pixflow_owner',
          'drop owned by pixflow_app',
          'drop role pixflow_app',
          'drop role pixflow_owner',
        ]);
        const secrets = path.join(dir, 'secrets');
        fs.mkdirSync(secrets);
        fs.writeFileSync(path.join(secrets, 'db_owner_password'), 'compose-owner-password');
        fs.writeFileSync(path.join(secrets, 'db_app_password'), 'compose-app-password');
        const run = spawnSync('sh', [path.join(__dirname, '../../tools/compose/init-roles.sh')], {
          encoding: 'utf8',
          env: {
            PATH: process.env.PATH,
            PGHOST: su.hostname,
            PGPORT: su.port,
            PGPASSWORD: decodeURIComponent(su.password),
            POSTGRES_USER: 'postgres',
            POSTGRES_DB: 'pixflow',
            PIXFLOW_DB_SECRETS_DIR: secrets,
          },
        });
        assert.equal(run.status, 0, run.stderr);
        const as = (user: string, password: string): string => {
          const u = new URL(cluster.superuserUrl);
          u.username = user;
          u.password = password;
          return u.toString();
        };
        const app = as('pixflow_app', 'compose-app-password');
        const owner = as('pixflow_owner', 'compose-owner-password');
        const migrated = createKnex(owner, 2);
        try {
          await migrateLatest(migrated);
        } finally {
          await migrated.destroy();
        }
        const appKnex = createKnex(app, 2);
        try {
          assert.deepEqual(await roleFacts(appKnex), {
            role: 'pixflow_app',
            superuser: false,
            bypassrls: false,
            createrole: false,
            owned: null,
          });
          await refused(appKnex.raw('create temp table t (v int)'), /permission denied to create temporary tables/);
          await refused(
            appKnex.raw('update ledger_accounts set balance = 0'),
            /permission denied for table ledger_accounts/,
          );
        } finally {
          await appKnex.destroy();
        }
      } finally {
        await cluster.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

  describe('production refuses to start with a role that could get around the rules', () => {
    it('names a superuser, and a role that owns the tables, in one line; the service role passes', async () => {
      const su = await superuserTestKnex();
      await assert.rejects(assertLeastPrivilege(su), (err: Error) => {
        assert.ok(err instanceof DatabaseRoleError);
        assert.match(
          err.message,
          /^DATABASE_URL's role postgres is a superuser: in production the service runs as a role that owns nothing/,
        );
        assert.doesNotMatch(err.message, /\n/);
        return true;
      });
      await assert.rejects(assertLeastPrivilege(owner), /role pixflow_owner owns table \w+/);
      await assertLeastPrivilege(knex);
    });

    it('npm run api with NODE_ENV=production and a superuser DATABASE_URL exits 1 with that line alone', async function () {
      this.timeout(60_000);
      const { superuserUrl } = await urls();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-roles-api-'));
      try {
        const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../src/cli/api.ts')], {
          encoding: 'utf8',
          timeout: 50_000,
          env: {
            PATH: process.env.PATH,
            NODE_ENV: 'production',
            DATA_DIR: dataDir,
            LOG_LEVEL: 'silent',
            DATABASE_URL: superuserUrl,
            TEMPORAL_ADDRESS: '127.0.0.1:1',
            ACQUIRER_URL: 'http://127.0.0.1:1',
            ACQUIRER_SANDBOX: 'true',
            JWT_SECRET: 'a-production-jwt-secret-of-32-characters!',
            API_KEY_PEPPER: 'a-production-pepper',
            ACQUIRER_CALLBACK_SECRET: 'a-production-callback-secret',
            METRICS_TOKEN: 'a-production-metrics-token',
            WEBHOOK_SECRET_KEYS: `k1:${crypto.randomBytes(32).toString('base64')}`,
          },
        });
        assert.equal(run.status, 1, run.stderr);
        assert.match(
          run.stderr.trim(),
          /^DATABASE_URL's role postgres is a superuser: in production the service runs as a role that owns nothing .*"Database roles"\)$/,
        );
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it('openDatabase with NODE_ENV=production and a superuser DATABASE_URL fails with that line', async () => {
      const { superuserUrl, url } = await urls();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-roles-'));
      try {
        const config = { ...loadConfig({ DATA_DIR: dataDir }), isProduction: true };
        const logger = createLogger({ level: 'silent' });
        await assert.rejects(openDatabase({ ...config, DATABASE_URL: superuserUrl }, logger), DatabaseRoleError);
        const db = await openDatabase({ ...config, DATABASE_URL: url }, logger);
        await db.close();
      } finally {
        // openDatabase binds the models to its knex: give them back the run's.
        bindModels(knex);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
});

/** psql, which the postgres image runs tools/compose/init-roles.sh with. */
function psql(): Artefact {
  const v = spawnSync('psql', ['--version'], { encoding: 'utf8' });
  return v.status === 0 ? { path: 'psql' } : { reason: 'no psql on PATH (Debian: postgresql-client)' };
}

/** Runs statements one by one on `url`. */
async function sql(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The run database's URLs as the superuser and as the service's role. */
async function urls(): Promise<{ superuserUrl: string; url: string }> {
  const { url } = await getTestDb();
  const su = await superuserTestKnex();
  const config = su.client.config as { connection: { connectionString: string } };
  return { superuserUrl: config.connection.connectionString, url };
}
