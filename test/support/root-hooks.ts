import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { merchantsWithHandMadeBooks, openedTestDb } from './db';
import { runTeardowns } from './lifecycle';
import { openedTestEnv, stuckWorkflows, teardownTestEnv, type StuckWorkflow } from './temporal';

/**
 * A workflow or activity task a worker would have taken within milliseconds: one older than this
 * waits on a queue nobody polls (docs/testing.md "One Temporal server per run").
 */
const STUCK_AFTER_MS = 5_000;

/** Work found stuck after a test file, with the file that ran last before it was found. */
const stuckFound: Array<{ after: string; stuck: StuckWorkflow[] }> = [];
let lastFile: string | undefined;

/**
 * Terminates the work that holds the shared time-skipping clock and notes it: failing the hook
 * itself would skip every later suite, so the run fails at its end instead, naming what was found.
 */
async function releaseStuckWork(after: string): Promise<void> {
  const env = await openedTestEnv()?.catch(() => undefined);
  if (!env) return;
  // Anything waiting at all? (Usually not: the fast path.) Then watch it until it is taken or has
  // waited long enough to be called stuck.
  let stuck = await stuckWorkflows(env, 0);
  const deadline = Date.now() + STUCK_AFTER_MS + 1_000;
  while (stuck.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    stuck = await stuckWorkflows(env, 0);
  }
  stuck = await stuckWorkflows(env, STUCK_AFTER_MS);
  if (stuck.length === 0) return;
  stuckFound.push({ after, stuck });
  console.error(
    `${stuck.length} workflow(s) left waiting for a worker after ${after} (terminated): ` +
      stuck
        .slice(0, 5)
        .map((s) => `${s.workflowId} on ${s.taskQueue}: ${s.waiting.join(', ')}`)
        .join('; '),
  );
  await Promise.all(
    stuck.map((s) =>
      env.client.workflow
        .getHandle(s.workflowId, s.runId)
        .terminate('left waiting for a worker at the end of a test file')
        .catch(() => undefined),
    ),
  );
}

// Mocha root hook plugin: the check between test files, and once after every suite of the run.
export const mochaHooks = {
  // Before the first test of each file, what the previous file left.
  async beforeEach(this: Mocha.Context): Promise<void> {
    const file = this.currentTest?.file;
    if (lastFile !== undefined && file !== lastFile) {
      this.timeout(60_000);
      await releaseStuckWork(lastFile);
    }
    lastFile = file;
  },

  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    try {
      if (lastFile !== undefined) await releaseStuckWork(lastFile);
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
      if (stuckFound.length > 0) {
        throw new Error(
          'workflows were left waiting for a worker, holding the shared time-skipping clock ' +
            '(docs/testing.md "One Temporal server per run"); found after these files:\n' +
            stuckFound
              .map(
                (f) =>
                  `- ${f.after}: ` +
                  f.stuck.map((s) => `${s.workflowId} on ${s.taskQueue} (${s.waiting.join(', ')})`).join('; '),
              )
              .join('\n'),
        );
      }
    } finally {
      await runTeardowns();
      await teardownTestEnv();
    }
  },
};
