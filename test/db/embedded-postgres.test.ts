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
    await query(running.url, 'create table kept (v int); insert into kept values (42)');
  });

  it('restarts on the existing folder (no initialise) with the data kept', async () => {
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.deepEqual((await query(running.url, 'select v from kept')).rows, [{ v: 42 }]);
  });

  it('shares a server already running on the folder; only the owner stops it', async () => {
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    const second = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.equal(second.port, running.port);
    await second.stop();
    assert.deepEqual((await query(running.url, 'select v from kept')).rows, [{ v: 42 }]);
  });

  it('starts over a stale postmaster.pid whose process is gone', async () => {
    writePostmasterPid(dataDir, DEAD_PID, 1);
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.deepEqual((await query(running.url, 'select v from kept')).rows, [{ v: 42 }]);
  });

  it('starts over a stale postmaster.pid whose pid now belongs to another program', async () => {
    // This very node process stands in for the unrelated program that reused the pid.
    writePostmasterPid(dataDir, process.pid, 1);
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    assert.notEqual(running.port, 1);
    assert.deepEqual((await query(running.url, 'select v from kept')).rows, [{ v: 42 }]);
  });

  it('listens on a configured port', async () => {
    const probe = await startEmbeddedPostgres({ dataDir, database: 'persist_me' });
    const port = probe.port;
    await probe.stop();
    running = await startEmbeddedPostgres({ dataDir, database: 'persist_me', port });
    assert.equal(running.port, port);
    assert.deepEqual((await query(running.url, 'select v from kept')).rows, [{ v: 42 }]);
  });
});
