/**
 * Asserts the ledger invariant (docs/operations.md "Checking the books") over every merchant the run made,
 * except those whose books a test wrote by hand on purpose. Called at the end of each test of the
 * money suites, so a broken rule is pinned on the test that broke it.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { merchantsWithHandMadeBooks } from './db';

export async function assertLedgerInvariant(knex: Knex): Promise<void> {
  const report = await checkLedgerInvariant(knex, { excludeMerchantIds: [...merchantsWithHandMadeBooks] });
  assert.ok(report.ok, `ledger invariant violated: ${JSON.stringify(report.violations, null, 2)}`);
}
