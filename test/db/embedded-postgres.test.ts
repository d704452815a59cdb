import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded-postgres';

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A pid no process has: beyond the kernel's default pid_max. */
const DEAD_PID = 4_194_304 + 7;

function writePostmasterPid(dataDir: string, pid: number, port: number): void {
  // The first lines of a real postmaster.pid: pid, data dir, start time, port, socket dir.
  fs.writeFileSync(path.join(dataDir, 'postmaster.pid'), `${pid}\n${dataDir}\n1700000000\n${port}\n/tmp\n`);
}

describe('embedded PostgreSQL', () => {
  let root: string;
  let dataDir: string;
  let running: EmbeddedDatabase | undefined;

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-embedded-pg-'));
    fs.chmodSync(root, 0o755);
    dataDir = path.join(root, 'postgres');
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('initialises a fresh folder, creates the database and serves it', async () => {
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.match(running.url, /^postgres:\/\/.+@127\.0\.0\.1:\d+\/persist_me$/);
    await query(running.ownerUrl, 'create table kept (v int); insert into kept values (42)');
  });

  it('runs the service as pixflow_app and migrations as pixflow_owner, with generated passwords in secrets.json (0600)', async () => {
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    const file = path.join(root, 'secrets.json');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
    for (const key of ['POSTGRES_SUPERUSER_PASSWORD', 'DATABASE_OWNER_PASSWORD', 'DATABASE_APP_PASSWORD']) {
      assert.ok((stored[key] ?? '').length >= 24, key);
    }
    assert.equal(decodeURIComponent(new URL(running.url).password), stored.DATABASE_APP_PASSWORD);
    const roles = await query(
      running.superuserUrl,
      `select rolname, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls from pg_roles
        where rolname in ('pixflow_app', 'pixflow_owner') order by rolname`,
    );
    assert.deepEqual(
      roles.rows.map((r: Record<string, unknown>) => [
        r.rolname,
        r.rolsuper,
        r.rolcreaterole,
        r.rolcreatedb,
        r.rolbypassrls,
      ]),
      [
        ['pixflow_app', false, false, false, false],
        ['pixflow_owner', false, false, false, false],
      ],
    );
    assert.deepEqual((await query(running.url, 'select current_user as u')).rows, [{ u: 'pixflow_app' }]);
    assert.deepEqual(
      (
        await query(
          running.superuserUrl,
          `select pg_get_userbyid(datdba) as o from pg_database where datname = 'persist_me'`,
        )
      ).rows,
      [{ o: 'pixflow_owner' }],
    );
    await assert.rejects(query(running.url, 'create temporary table t (v int)'), /permission denied/);
    await assert.rejects(query(running.url, 'create table t (v int)'), /permission denied/);
  });

  it('moves a cluster of an earlier version off the fixed superuser password, and hands its tables to the owner', async () => {
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    // As an earlier version left it: the fixed password, no generated one, a table of the superuser.
    await query(running.superuserUrl, `alter role postgres password 'pixflow'`);
    const inDatabase = new URL(running.superuserUrl);
    inDatabase.password = 'pixflow';
    await query(inDatabase.toString(), 'create table made_by_postgres (v int)');
    await running.stop();
    const file = path.join(root, 'secrets.json');
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
    delete stored.POSTGRES_SUPERUSER_PASSWORD;
    fs.writeFileSync(file, JSON.stringify(stored), { mode: 0o600 });

    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    inDatabase.port = String(running.port);
    await assert.rejects(query(inDatabase.toString(), 'select 1'), /password authentication failed/);
    assert.deepEqual(
      (await query(running.superuserUrl, `select tableowner from pg_tables where tablename = 'made_by_postgres'`)).rows,
      [{ tableowner: 'pixflow_owner' }],
    );
    await query(running.ownerUrl, 'drop table made_by_postgres');
  });

  it('restarts on the existing folder (no initialise) with the data kept', async () => {
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.deepEqual((await query(running.ownerUrl, 'select v from kept')).rows, [{ v: 42 }]);
  });

  it('shares a server already running on the folder; only the owner stops it', async () => {
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    const second = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.equal(second.port, running.port);
    await second.stop();
    assert.deepEqual((await query(running.ownerUrl, 'select v from kept')).rows, [{ v: 42 }]);
  });

  it('starts over a stale postmaster.pid whose process is gone', async () => {
    writePostmasterPid(dataDir, DEAD_PID, 1);
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.deepEqual((await query(running.ownerUrl, 'select v from kept')).rows, [{ v: 42 }]);
  });

  it('starts over a stale postmaster.pid whose pid now belongs to another program', async () => {
    // This very node process stands in for the unrelated program that reused the pid.
    writePostmasterPid(dataDir, process.pid, 1);
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.notEqual(running.port, 1);
    assert.deepEqual((await query(running.ownerUrl, 'select v from kept')).rows, [{ v: 42 }]);
  });

  it('listens on a configured port', async () => {
    const probe = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    const port = probe.port;
    await probe.stop();
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me', port });
    assert.equal(running.port, port);
    assert.deepEqual((await query(running.ownerUrl, 'select v from kept')).rows, [{ v: 42 }]);
  });
});
