/**
 * One PostgreSQL per test run: the embedded one in a temporary folder, or TEST_DATABASE_URL /
 * DATABASE_URL when set (a throwaway database: the suite migrates it). Created lazily by the first
 * suite that asks, migrated once, stopped after the last suite. Tests never truncate: each makes
 * its own merchants with unique ids, so suites are independent and run in any order.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex } from '../../src/db/knex';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { migrateLatest } from '../../src/db/migrations';
import { onRunEnd } from './lifecycle';

export interface TestDb {
  knex: Knex;
  url: string;
}

let instance: Promise<TestDb> | undefined;

export function getTestDb(): Promise<TestDb> {
  instance ??= open();
  return instance;
}

async function open(): Promise<TestDb> {
  const configured = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  let url: string;
  if (configured) {
    url = configured;
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-test-pg-'));
    fs.chmodSync(dir, 0o755);
    const embedded = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), persistent: false, database: 'pixflow_test' });
    url = embedded.url;
    onRunEnd(async () => {
      await embedded.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
  const knex = createKnex(url, 20);
  await migrateLatest(knex);
  onRunEnd(() => knex.destroy());
  return { knex, url };
}
