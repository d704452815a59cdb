import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { merchantsWithHandMadeBooks, openedTestDb } from './db';
import { runTeardowns } from './lifecycle';
import { teardownTestEnv } from './temporal';

// Mocha root hook plugin: runs once after every suite of the run.
export const mochaHooks = {
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    try {
      // Whatever the suites did, the books of every merchant they made must still reconcile
      // (docs/operations.md "Checking the books"): a failure here names each broken rule. Only merchants whose
      // books a test wrote by hand on purpose are left out.
      const db = openedTestDb();
      if (db) {
        const report = await checkLedgerInvariant((await db).knex, {
          excludeMerchantIds: [...merchantsWithHandMadeBooks],
        });
        if (!report.ok) {
          throw new Error(
            'ledger invariant violated after the run (a test that writes ledger rows by hand on purpose marks its merchant with ' +
              `createMerchantFixture(knex, { booksOutsideTheDomain: true })): ${JSON.stringify(report.violations, null, 2)}`,
          );
        }
      }
    } finally {
      await runTeardowns();
      await teardownTestEnv();
    }
  },
};
