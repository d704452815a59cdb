/**
 * One PostgreSQL per test run: the embedded one in a temporary folder, or TEST_DATABASE_URL /
 * DATABASE_URL when set (a throwaway database: the suite migrates it). Created lazily by the first
 * suite that asks, migrated once, stopped after the last suite. Tests never truncate: each makes
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
import { bindModels, createKnex } from '../../src/db/knex';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { migrateLatest } from '../../src/db/migrate';
import { newId } from '../../src/lib/ids';
import { Merchant } from '../../src/models/merchant';
import { postAdjustment } from '../../src/services/ledger/ledger';
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

/**
 * A database of its own in the run's PostgreSQL, migrated, dropped after the run: for suites whose
 * stacks run every reconciler over the whole database (the reliability stacks), so that what
 * earlier suites left pending on purpose is not theirs to retry.
 */
export async function isolatedTestDb(name: string): Promise<TestDb> {
  const shared = await getTestDb();
  const database = `pixflow_${name.replace(/[^a-z0-9_]/g, '_')}_${crypto.randomBytes(3).toString('hex')}`;
  await shared.knex.raw(`create database ${database}`);
  const parsed = new URL(shared.url);
  parsed.pathname = `/${database}`;
  const url = parsed.toString();
  const knex = createKnex(url, 10);
  await migrateLatest(knex);
  onRunEnd(async () => {
    await knex.destroy();
    await shared.knex.raw(`drop database if exists ${database} with (force)`).catch(() => undefined);
  });
  return { knex, url };
}

/** The run's database if some suite opened it, without opening it (for run-wide checks). */
export function openedTestDb(): Promise<TestDb> | undefined {
  return instance;
}

async function open(): Promise<TestDb> {
  const configured = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  let url: string;
  if (configured) {
    url = configured;
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-test-pg-'));
    // As root the server runs as the `postgres` OS user, which must reach the folder.
    fs.chmodSync(dir, 0o755);
    const embedded = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'data'),
      persistent: false,
      database: 'pixflow_test',
    });
    url = embedded.url;
    onRunEnd(async () => {
      await embedded.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
  const knex = createKnex(url, 20);
  await migrateLatest(knex);
  bindModels(knex);
  onRunEnd(() => knex.destroy());
  return { knex, url };
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
