/**
 * Histories recorded by earlier workflow code replay on the current bundle (docs/testing.md
 * "Workflow branches with stubbed activities"): a refactor that changes the order of commands, or
 * a wait that no longer wakes, fails here with a nondeterminism error instead of in production.
 * The fixtures are the proto3 JSON the branch suites' replay step saw, one file per run.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJson } from '../../src/services/platform/workflow-inspection';
import { workflowBundle } from '../support/temporal';

const DIR = path.join(__dirname, 'fixtures', 'histories');

/** The recorded histories of `files` that fail to replay on the workflows of `workflowsPath`, with why. */
async function replayFailures(workflowsPath: string, files: string[]): Promise<string[]> {
  const bundle = await workflowBundle(workflowsPath);
  const histories = files.map((f) => ({
    workflowId: f.replace(/\.json$/, ''),
    history: historyFromJson(JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8'))),
  }));
  const failed: string[] = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: bundle }, histories))
    if (r.error) failed.push(`${r.workflowId}: ${r.error.name}: ${r.error.message}`);
  return failed;
}

describe('recorded histories replay on the current workflow code', function () {
  this.timeout(300_000);
  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json'));

  it('has recorded histories of the charge, withdrawal and infraction workflows', () => {
    for (const kind of ['charge-', 'withdrawal-', 'infraction-'])
      assert.ok(
        files.some((f) => f.startsWith(kind)),
        `no ${kind}* fixture in ${DIR}`,
      );
  });

  it('replays every recorded history without a nondeterminism error', async () => {
    assert.deepEqual(await replayFailures(require.resolve('../../workflows'), files), []);
  });

  it("fails on a planted change: a timer before the charge workflow's first step", async () => {
    const charges = files.filter((f) => f.startsWith('charge-'));
    const failed = await replayFailures(require.resolve('./fixtures/planted-charge-timer'), charges);
    assert.equal(failed.length, charges.length, failed.join('\n'));
    for (const f of failed) assert.match(f, /DeterminismViolationError/);
  });
});
