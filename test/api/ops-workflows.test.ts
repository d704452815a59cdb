/**
 * `npm run ops -- workflows list|show` (docs/operations.md "Watching workflows"): the CLI as an
 * operator runs it, a fresh process, pointed by TEMPORAL_ADDRESS at the run's official dev server
 * (visibility by query, as on a cluster), where the charges stack runs real charge workflows: one paid and settled (a signal, activities, a
 * timer), one left running, then canceled with the acquirer failing once (a retried activity).
 */
import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import { chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';
import { getTestDb } from '../support/db';
import { runOpsWithEnv, type CliResult } from '../support/ops-cli';
import { localAddressFile } from '../../src/temporal/local-server';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { workflowBundle } from '../support/temporal';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { chargeWorkflowId } from '../../src/temporal/workflow-ids';
import { historyFromJson, type WorkflowSummary } from '../../src/services/platform/workflow-inspection';

interface ListOutput {
  query: string;
  workflows: WorkflowSummary[];
}

describe('ops CLI: workflows list and show', function () {
  // Each command is a fresh tsx process: allow for its start-up on a busy machine.
  this.timeout(180_000);
  let s: ChargesStack;
  let databaseUrl: string;
  let merchantId: string;
  let paid: { chargeId: string; workflowId: string; runId: string };
  let open: { chargeId: string; workflowId: string };
  let token: string;

  const ops = (...args: string[]): Promise<CliResult> =>
    runOpsWithEnv(
      databaseUrl,
      { TEMPORAL_ADDRESS: s.env.address, TEMPORAL_NAMESPACE: s.env.namespace ?? 'default' },
      ...args,
    );
  const json = <T>(r: CliResult): T => {
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as T;
  };
  const errorOf = (r: CliResult): string => {
    assert.equal(r.code, 1, r.stdout);
    return (JSON.parse(r.stderr.trim().split('\n').pop() ?? '{}') as { message: string }).message;
  };
  const createCharge = async (): Promise<string> => {
    const res = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token,
      body: { amount: 2_990, description: 'Pedido CLI' },
    });
    assert.equal(res.status, 201);
    return res.body.charge.id;
  };

  before(async () => {
    s = await chargesStack('dev');
    databaseUrl = (await getTestDb()).url;
    const m = await readyMerchant(s.api);
    merchantId = m.merchantId;
    token = m.token;
    // Real time on the dev server: a settlement delay of a second instead of skipped days.
    const settles = await s.api.request('PATCH', `/v1/admin/merchants/${merchantId}`, {
      token: await s.api.adminToken(),
      body: { settlementDelaySeconds: 1 },
    });
    assert.equal(settles.status, 200, JSON.stringify(settles.body));

    // Paid, then settled after the merchant's settlement delay.
    const paidId = await createCharge();
    assert.equal((await s.api.request('POST', `/v1/sandbox/charges/${paidId}/pay`, { token, body: {} })).status, 202);
    await eventually(
      async () => ((await s.api.knex('charges').where({ id: paidId }).first()).status === 'PAID' ? true : undefined),
      'PAID',
    );
    const handle = s.client.workflow.getHandle(chargeWorkflowId(paidId));
    await handle.result();
    paid = { chargeId: paidId, workflowId: chargeWorkflowId(paidId), runId: (await handle.describe()).runId };

    // Waiting for its payer (its first workflow task deferred to the expiry): Running.
    const openId = await createCharge();
    open = { chargeId: openId, workflowId: chargeWorkflowId(openId) };
  });
  after(async () => {
    if (s) await assertLedgerInvariant(s.api.knex);
  });

  it('lists by type and status: the settled charge as Completed, the open one as Running, with merchant and times', async () => {
    const completed = json<ListOutput>(
      await ops('workflows', 'list', '--type', 'charge', '--status', 'Completed', '--limit', '1000'),
    );
    assert.equal(completed.query, "ExecutionStatus = 'Completed' AND WorkflowType = 'chargeWorkflow'");
    assert.ok(completed.workflows.length > 0);
    assert.ok(
      completed.workflows.every(
        (w) => w.type === 'chargeWorkflow' && w.kind === 'charge' && w.status === 'Completed' && w.closeTime !== null,
      ),
    );
    const mine = completed.workflows.find((w) => w.workflowId === paid.workflowId);
    assert.ok(mine, `${paid.workflowId} not in the Completed list`);
    assert.equal(mine.runId, paid.runId);
    assert.equal(mine.merchantId, merchantId);
    assert.ok(Date.parse(mine.startTime) <= Date.parse(mine.closeTime ?? ''));
    assert.ok(!completed.workflows.some((w) => w.workflowId === open.workflowId));
    // Newest start first.
    const starts = completed.workflows.map((w) => Date.parse(w.startTime));
    assert.deepEqual(
      starts,
      [...starts].sort((a, b) => b - a),
    );

    const running = json<ListOutput>(
      await ops('workflows', 'list', '--type', 'charge', '--status', 'Running', '--limit', '1000'),
    );
    assert.ok(
      running.workflows.every((w) => w.type === 'chargeWorkflow' && w.status === 'Running' && w.closeTime === null),
    );
    const openRun = running.workflows.find((w) => w.workflowId === open.workflowId);
    assert.ok(openRun, `${open.workflowId} not in the Running list`);
    assert.equal(openRun.merchantId, merchantId);
    assert.ok(!running.workflows.some((w) => w.workflowId === paid.workflowId));

    // Another type: none of the charges; --limit caps the list.
    const withdrawals = json<ListOutput>(await ops('workflows', 'list', '--type', 'withdrawal'));
    assert.equal(withdrawals.query, "WorkflowType = 'withdrawalWorkflow'");
    assert.ok(withdrawals.workflows.every((w) => w.type === 'withdrawalWorkflow'));
    assert.equal(json<ListOutput>(await ops('workflows', 'list', '--limit', '1')).workflows.length, 1);
  });

  it("shows a settled charge's history as a table: the paid signal, its activities, the settlement timer", async () => {
    const r = await ops('workflows', 'show', paid.workflowId);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^TIME\s+ID\s+EVENT\s+DETAIL\s+ATTEMPT\s+FAILURE$/);
    const rows = lines.slice(1);
    const has = (re: RegExp): void =>
      assert.ok(
        rows.some((l) => re.test(l)),
        `no line matching ${re}:\n${r.stdout}`,
      );
    assert.match(rows[0] ?? '', /^\d{4}-\d\d-\d\dT\S+Z\s+1\s+WorkflowExecutionStarted\s+chargeWorkflow\s+1$/);
    has(/\s\d+\s+WorkflowExecutionSignaled\s+signal paid$/);
    has(/\s\d+\s+ActivityTaskScheduled\s+recordPayment$/);
    has(/\s\d+\s+ActivityTaskStarted\s+recordPayment\s+1$/);
    has(/\s\d+\s+ActivityTaskCompleted\s+recordPayment\s+1$/);
    has(/\s\d+\s+TimerStarted\s+timer \d+ \((\d+(ms|[dhms]))+\)$/);
    has(/\s\d+\s+TimerFired\s+timer \d+$/);
    has(/\s\d+\s+ActivityTaskCompleted\s+settleCharge\s+1$/);
    assert.match(rows.at(-1) ?? '', /\s\d+\s+WorkflowExecutionCompleted$/);
    // One line per event, numbered 1..n.
    assert.deepEqual(
      rows.map((l) => Number(l.split(/\s+/)[1])),
      rows.map((_, i) => i + 1),
    );

    // --json: the raw history, which the SDK reads back and the workflow code replays.
    const raw = await ops('workflows', 'show', paid.workflowId, '--run', paid.runId, '--json');
    assert.equal(raw.code, 0, raw.stderr);
    const history = historyFromJson(JSON.parse(raw.stdout));
    assert.equal(history.events?.length, rows.length);
    await Worker.runReplayHistory(
      { workflowBundle: await workflowBundle(require.resolve('../../workflows')) },
      history,
      paid.workflowId,
    );
  });

  it("shows a retried activity's attempt and the failure of the attempt before", async () => {
    // The acquirer refuses the first removal of the cob: removeCob is retried and succeeds.
    s.simulator.control.setFaults({ failNext: { route: 'removeCob', times: 1, status: 503 } });
    try {
      assert.equal(
        (await s.api.request('POST', `/v1/charges/${open.chargeId}/cancel`, { token, body: {} })).status,
        200,
      );
      await s.client.workflow.getHandle(open.workflowId).result();
    } finally {
      s.simulator.control.setFaults({});
    }
    const r = await ops('workflows', 'show', open.workflowId);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.trimEnd().split('\n').slice(1);
    assert.ok(
      rows.some((l) => /\s\d+\s+WorkflowExecutionSignaled\s+signal cancel$/.test(l)),
      r.stdout,
    );
    assert.ok(
      rows.some((l) => /\s\d+\s+ActivityTaskStarted\s+removeCob\s+2\s+\S.*503/.test(l)),
      r.stdout,
    );
    assert.ok(
      rows.some((l) => /\s\d+\s+ActivityTaskCompleted\s+removeCob\s+2$/.test(l)),
      r.stdout,
    );
  });

  it('filters by merchant (MerchantId search attribute, indexed by the dev server)', async () => {
    const mine = json<ListOutput>(await ops('workflows', 'list', '--merchant', merchantId));
    assert.equal(mine.query, `MerchantId = '${merchantId}'`);
    assert.deepEqual(mine.workflows.map((w) => w.workflowId).sort(), [paid.workflowId, open.workflowId].sort());
    assert.ok(mine.workflows.every((w) => w.merchantId === merchantId));
    const none = json<ListOutput>(await ops('workflows', 'list', '--merchant', 'mch_nobody', '--type', 'charge'));
    assert.equal(none.query, "MerchantId = 'mch_nobody' AND WorkflowType = 'chargeWorkflow'");
    assert.deepEqual(none.workflows, []);
  });

  it('answers bad options, unknown workflows and a missing TEMPORAL_ADDRESS with {message} and exit 1', async () => {
    assert.equal(
      errorOf(await ops('workflows', 'list', '--status', 'Bogus')),
      'status must be one of Running, Completed, Failed, Canceled, Terminated, ContinuedAsNew, TimedOut',
    );
    assert.match(
      errorOf(await ops('workflows', 'list', '--type', 'refund')),
      /^type must be one of charge, withdrawal/,
    );
    assert.match(errorOf(await ops('workflows', 'list', '--merchant', "x' OR WorkflowId != '")), /^merchantId must be/);
    assert.match(errorOf(await ops('workflows', 'list', '--limit', '0')), /^limit must be >= 1/);
    assert.equal(errorOf(await ops('workflows', 'show', 'charge-chg_nope')), 'Workflow charge-chg_nope not found');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-ops-workflows-'));
    const noAddress = await runOpsWithEnv(
      databaseUrl,
      { TEMPORAL_ADDRESS: '', DATA_DIR: dataDir },
      'workflows',
      'list',
    );
    assert.match(
      errorOf(noAddress),
      /^No Temporal to ask: TEMPORAL_ADDRESS is not set and no `npm start` is running on this DATA_DIR/,
    );
  });

  it('beside `npm start`, finds its dev server by the address it writes under DATA_DIR', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-ops-workflows-'));
    fs.mkdirSync(path.dirname(localAddressFile(dataDir)), { recursive: true });
    fs.writeFileSync(localAddressFile(dataDir), `${s.env.address}\n`);
    try {
      const listed = await runOpsWithEnv(
        databaseUrl,
        { TEMPORAL_ADDRESS: '', DATA_DIR: dataDir, TEMPORAL_NAMESPACE: s.env.namespace ?? 'default' },
        'workflows',
        'list',
        '--limit',
        '1',
      );
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(Array.isArray((JSON.parse(listed.stdout) as { workflows: unknown[] }).workflows));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
