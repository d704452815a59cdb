/**
 * One PostgreSQL per test run: the embedded one in a temporary folder, or TEST_DATABASE_URL /
 * DATABASE_URL when set (a throwaway database and a superuser's URL: the suite provisions the roles
 * and migrates it). Created lazily by the first suite that asks, migrated once as the owner role,
 * handed to the suites as the service's role (docs/production.md "Database roles"), stopped after
 * the last suite. Tests never truncate: each makes
 * its own merchants with unique ids (createMerchantFixture), so suites are independent and run in
 * any order.
 *
 *   const { knex } = await getTestDb();
 *   const m = await createMerchantFixture(knex, { kycStatus: 'APPROVED' });
 *   await fundMerchant(knex, m.id, 10_000);   // available += 10_000 through the ledger
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import pg from 'pg';
import { APP_ROLE, OWNER_ROLE, provisionRoles } from '../../src/db/roles';
import { bindModels, createKnex } from '../../src/db/knex';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { migrateLatest } from '../../src/db/migrate';
import { newId } from '../../src/lib/ids';
import { Merchant } from '../../src/models/merchant';
import { postAdjustment } from '../../src/services/ledger/ledger';
import { onRunEnd } from './lifecycle';

export interface TestDb {
  /** As the service's role, `pixflow_app`: what every suite runs as (docs/production.md "Database roles"). */
  knex: Knex;
  url: string;
  /**
   * As the owner role, which ran the migrations. Only for tests that write the ledger's rows by
   * hand on purpose (their merchants are `booksOutsideTheDomain`) or test the database's own rules.
   */
  ownerKnex: Knex;
  ownerUrl: string;
}

/** The run's cluster: a superuser URL (to make databases and roles) and the roles' passwords. */
interface Cluster {
  superuserUrl: string;
  passwords: { owner: string; app: string };
}

let instance: Promise<TestDb> | undefined;
let cluster: Cluster | undefined;

export function getTestDb(): Promise<TestDb> {
  instance ??= open();
  return instance;
}

const withDatabase = (url: string, database: string, user?: { name: string; password: string }): string => {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  if (user) {
    parsed.username = user.name;
    parsed.password = encodeURIComponent(user.password);
  }
  return parsed.toString();
};

/**
 * A database of its own in the run's cluster, owned by the owner role, with both roles' URLs:
 * migrated when `migrate` (default), dropped by `drop`.
 */
export async function createTestDatabase(
  name: string,
  opts: { migrate?: boolean } = {},
): Promise<TestDb & { drop(): Promise<void> }> {
  await getTestDb();
  const c = cluster as Cluster;
  const database = `pixflow_${name.replace(/[^a-z0-9_]/g, '_')}_${crypto.randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: c.superuserUrl });
  await admin.connect();
  try {
    await provisionRoles(admin, database, c.passwords);
  } finally {
    await admin.end();
  }
  const ownerUrl = withDatabase(c.superuserUrl, database, { name: OWNER_ROLE, password: c.passwords.owner });
  const url = withDatabase(c.superuserUrl, database, { name: APP_ROLE, password: c.passwords.app });
  const ownerKnex = createKnex(ownerUrl, 4);
  if (opts.migrate !== false) await migrateLatest(ownerKnex);
  const knex = createKnex(url, 10);
  let dropped = false;
  const drop = async (): Promise<void> => {
    if (dropped) return;
    dropped = true;
    await Promise.all([knex.destroy(), ownerKnex.destroy()]);
    const su = new pg.Client({ connectionString: c.superuserUrl });
    await su.connect();
    try {
      await su.query(`drop database if exists ${database} with (force)`);
    } finally {
      await su.end();
    }
  };
  onRunEnd(() => drop().catch(() => undefined));
  return { knex, url, ownerKnex, ownerUrl, drop };
}

/**
 * A database of its own in the run's PostgreSQL, migrated, dropped after the run: for suites whose
 * stacks run every reconciler over the whole database (the reliability stacks), so that what
 * earlier suites left pending on purpose is not theirs to retry.
 */
export async function isolatedTestDb(name: string): Promise<TestDb> {
  return createTestDatabase(name);
}

let superuser: Knex | undefined;

/**
 * The run's database as the cluster's superuser: only for tests of what only a superuser can do
 * (writing books where triggers do not run, as a restore does).
 */
export async function superuserTestKnex(): Promise<Knex> {
  await getTestDb();
  if (!superuser) {
    const knex = createKnex((cluster as Cluster).superuserUrl, 2);
    superuser = knex;
    onRunEnd(() => knex.destroy());
  }
  return superuser;
}

/** The run's database if some suite opened it, without opening it (for run-wide checks). */
export function openedTestDb(): Promise<TestDb> | undefined {
  return instance;
}

/**
 * The run's cluster: the embedded PostgreSQL in a temporary folder, or TEST_DATABASE_URL /
 * DATABASE_URL, which must then be a superuser's (the suite provisions both roles in it).
 */
async function startCluster(): Promise<{ superuserUrl: string; database: string }> {
  const configured = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (configured) return { superuserUrl: configured, database: new URL(configured).pathname.slice(1) };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-test-pg-'));
  // As root the server runs as the `postgres` OS user, which must reach the folder.
  fs.chmodSync(dir, 0o755);
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'data'),
    persistent: false,
    database: 'pixflow_test',
  });
  onRunEnd(async () => {
    await embedded.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { superuserUrl: embedded.superuserUrl, database: 'pixflow_test' };
}

async function open(): Promise<TestDb> {
  const { superuserUrl, database } = await startCluster();
  const passwords = {
    owner: crypto.randomBytes(18).toString('base64url'),
    app: crypto.randomBytes(18).toString('base64url'),
  };
  const admin = new pg.Client({ connectionString: superuserUrl });
  await admin.connect();
  try {
    await provisionRoles(admin, database, passwords);
    // test/db/counter-deadlocks.test.ts shortens the deadlock timeout in its transactions.
    await admin.query(`grant set on parameter deadlock_timeout to ${APP_ROLE}`);
  } finally {
    await admin.end();
  }
  cluster = { superuserUrl, passwords };
  const ownerUrl = withDatabase(superuserUrl, database, { name: OWNER_ROLE, password: passwords.owner });
  const url = withDatabase(superuserUrl, database, { name: APP_ROLE, password: passwords.app });
  const ownerKnex = createKnex(ownerUrl, 4);
  await migrateLatest(ownerKnex);
  const knex = createKnex(url, 20);
  bindModels(knex);
  onRunEnd(() => Promise.all([knex.destroy(), ownerKnex.destroy()]).then(() => undefined));
  return { knex, url, ownerKnex, ownerUrl };
}

export type MerchantFixtureInput = Partial<
  Pick<
    Merchant,
    'name' | 'email' | 'status' | 'kycStatus' | 'acquirerAccountId' | 'feeBps' | 'feeFixed' | 'settlementDelaySeconds'
  >
> & {
  /**
   * The test writes this merchant's ledger or business rows around the services on purpose (to
   * test the ledger's primitives or the database's own guards), so its books need not reconcile:
   * the run-wide ledger check leaves it out.
   */
  booksOutsideTheDomain?: boolean;
};

/** Merchants whose books tests build by hand (see `booksOutsideTheDomain`). */
export const merchantsWithHandMadeBooks = new Set<string>();

/** A fresh merchant with a unique id and document (ACTIVE, KYC PENDING, 99 bps, no delay). */
export async function createMerchantFixture(knex: Knex, input: MerchantFixtureInput = {}): Promise<Merchant> {
  const id = newId('mch');
  if (input.booksOutsideTheDomain) merchantsWithHandMadeBooks.add(id);
  return Merchant.query(knex).insertAndFetch({
    id,
    name: input.name ?? `Test merchant ${id.slice(-6)}`,
    // Unique 14-digit document; tests that need valid check digits set their own through the API.
    document: String(crypto.randomInt(10 ** 13, 10 ** 14 - 1)),
    email: input.email ?? `${id.toLowerCase()}@merchants.test`,
    status: input.status ?? 'ACTIVE',
    kycStatus: input.kycStatus ?? 'PENDING',
    acquirerAccountId: input.acquirerAccountId ?? null,
    feeBps: input.feeBps ?? 99,
    feeFixed: input.feeFixed ?? 0,
    settlementDelaySeconds: input.settlementDelaySeconds ?? 0,
  });
}

/** Credits the merchant's available balance through the ledger (an adjustment), as tests' funding. */
export async function fundMerchant(knex: Knex, merchantId: string, amount: number): Promise<void> {
  await knex.transaction((trx) =>
    postAdjustment(trx, { merchantId, amount, reason: 'test funding', reference: `test-funding:${newId('fund')}` }),
  );
}

/** Each ledger account of a merchant as [kind, balance, running sum of its postings], by kind. */
export async function balancesAndPosted(knex: Knex, merchantId: string): Promise<Array<[string, number, number]>> {
  const rows = (await knex('ledger_accounts')
    .where({ merchant_id: merchantId })
    .orderBy('kind')
    .select('kind', 'balance', 'posted')) as Array<{ kind: string; balance: number; posted: number }>;
  return rows.map((a) => [a.kind, Number(a.balance), Number(a.posted)]);
}
