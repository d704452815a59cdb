import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { merchantsWithHandMadeBooks, openedTestDb } from './db';
import { runTeardowns } from './lifecycle';
import {
  endRun,
  openedTestEnvs,
  resetTimeSkipping,
  stuckWorkflows,
  teardownTestEnvs,
  type StuckWorkflow,
} from './temporal';

/**
 * A workflow or activity task a worker would have taken within milliseconds: one older than this
 * waits on a queue nobody polls (docs/testing.md "One Temporal server of each kind per run").
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
  for (const env of await openedTestEnvs()) {
    // Anything waiting at all? (Usually not: the fast path.) Then watch it until it is taken or has
    // waited long enough to be called stuck.
    let stuck = await stuckWorkflows(env, 0);
    const deadline = Date.now() + STUCK_AFTER_MS + 1_000;
    while (stuck.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      stuck = await stuckWorkflows(env, 0);
    }
    stuck = await stuckWorkflows(env, STUCK_AFTER_MS);
    if (stuck.length === 0) continue;
    // Only on the time-skipping server does such a run hold anything (the shared clock); on the
    // dev server one a whole API started as its suite stopped (not yet visible to that suite's own
    // cleanup) is ended here and said, not failed.
    if (env.supportsTimeSkipping) stuckFound.push({ after, stuck });
    console.error(
      `${stuck.length} workflow(s) left waiting for a worker after ${after} (terminated): ` +
        stuck
          .slice(0, 5)
          .map((s) => `${s.workflowId} on ${s.taskQueue}: ${s.waiting.join(', ')}`)
          .join('; '),
    );
    await Promise.all(
      stuck.map((s) =>
        endRun(env.client, s.workflowId, s.runId, 'left waiting for a worker at the end of a test file'),
      ),
    );
  }
}

/** Whether `test` is the last test of its file in the run (mocha runs a suite's tests, then its suites). */
function lastOfItsFile(test: Mocha.Runnable): boolean {
  let root = test.parent;
  while (root?.parent) root = root.parent;
  let last: Mocha.Test | undefined;
  const walk = (suite: Mocha.Suite): void => {
    for (const t of suite.tests) if (t.file === test.file) last = t;
    suite.suites.forEach(walk);
  };
  if (root) walk(root);
  return last === test;
}

/**
 * Each test starts on a clock that skips, and each file with no run of an earlier file left
 * (docs/testing.md "One Temporal server of each kind per run"). Bounded, and it never throws: a
 * failing root hook would stop every later suite. A clock still locked is said on stderr; the
 * tests that then wait in real time fail on their own timeouts if it matters.
 */
async function resetClocks(after: string, opts: { endRuns: boolean }): Promise<void> {
  for (const env of await openedTestEnvs()) {
    if (!env.supportsTimeSkipping) continue;
    try {
      // The hook's own timeout is 90 s: a reset that hangs past 70 s is abandoned, not failed.
      let timer: NodeJS.Timeout | undefined;
      const reset = await Promise.race([
        resetTimeSkipping(env, opts),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer within 70 s')), 70_000);
        }),
      ]).finally(() => clearTimeout(timer));
      if (!opts.endRuns && reset.ended.length > 0)
        console.error(
          `after ${after}: ended ${reset.ended.length} run(s) whose task no worker took: ${reset.ended.slice(0, 5).join(', ')}`,
        );
      if (!reset.skips)
        console.error(
          `after ${after}: the time-skipping clock still does not skip (${reset.released} lock(s) given back)`,
        );
    } catch (err) {
      console.error(`after ${after}: could not reset the time-skipping clock: ${String(err)}`);
    }
  }
}

// Mocha root hook plugin: the check between test files, and once after every suite of the run.
export const mochaHooks = {
  // Before the first test of each file, what the previous file left (its after hooks included).
  async beforeEach(this: Mocha.Context): Promise<void> {
    const file = this.currentTest?.file;
    if (lastFile !== undefined && file !== lastFile) {
      this.timeout(90_000);
      await releaseStuckWork(lastFile);
      await resetClocks(`${lastFile}`, { endRuns: true });
    }
    lastFile = file;
  },

  // After each test; after the last of a file the runs end too, so that the next file's own
  // before hooks find a clock that skips.
  async afterEach(this: Mocha.Context): Promise<void> {
    const test = this.currentTest;
    if (!test) return;
    this.timeout(90_000);
    await resetClocks(test.fullTitle(), { endRuns: lastOfItsFile(test) });
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
            '(docs/testing.md "One Temporal server of each kind per run"); found after these files:\n' +
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
      await teardownTestEnvs();
    }
  },
};
