/**
 * The callback inbox as the durable source of truth
 * (docs/operations.md "The callback inbox and reconciliation"), end to end on the real worker: a payment that arrives while Temporal is
 * unreachable is credited once by the reconciler; a cob paid without its callback is found paid at
 * expiry; a payment the workflow cannot apply is parked, alerted and re-driven by the ops CLI after
 * the fix; refund polling is bounded and continues as new; a creation the reconciler failed stays
 * FAILED. The ledger invariant is checked after each.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { createLogger } from '../../src/lib/logger';
import { CLI_ACTOR } from '../../src/services/platform/audit';
import { createAcquirerCallbacks } from '../../src/services/inbox/acquirer-callbacks';
import { reconcileChargeWorkflows } from '../../src/services/charges/reconciler';
import { createChargesService } from '../../src/services/charges/charges';
import * as ledger from '../../src/services/ledger/ledger';
import { chargeWorkflowClient } from '../../src/temporal/clients/charge';
import { chargeWorkflowId } from '../../src/temporal/workflow-ids';
import { startApi } from '../support/api';
import { paymentCredits } from '../support/ledger-postings';
import { CALLBACK_SECRET, eventually, ownChargesStack, readyMerchant, type ChargesStack } from '../support/charges';
import { newTxid } from '../../src/pix';
import { AcquirerCallback } from '../../src/models/acquirer-callback';
import { assertLedgerInvariant } from '../support/ledger-invariant';
import { terminateRunning } from '../support/temporal';

const ROOT = path.resolve(__dirname, '../..');
const silent = createLogger({ level: 'silent' });

interface Charge {
  id: string;
  txid: string;
  status: string;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const e2eId = (): string => `E${Array.from({ length: 31 }, () => ALNUM[crypto.randomInt(ALNUM.length)]).join('')}`;

describe('callback inbox and reconciliation', function () {
  this.timeout(180_000);
  let s: ChargesStack;

  before(async () => {
    // Its reconciler passes see only this file's charges (test/support/charges.ts `ownChargesStack`).
    s = await ownChargesStack('callback_inbox');
  });
  afterEach(async () => {
    await assertLedgerInvariant(s.api.knex);
    // The reconciler starts a workflow for every open charge of this file's database: ended after
    // each test, so that their timers never wake during a later suite's time skipping.
    await terminateRunning(s.client, s.taskQueue);
  });

  async function newCharge(token: string, body: Record<string, unknown> = {}): Promise<Charge> {
    const res = await s.api.request<{ charge: Charge }>('POST', '/v1/charges', {
      token,
      body: { amount: 10_000, description: 'Pedido', ...body },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.charge;
  }
  const chargeRow = (id: string) => s.api.knex('charges').where({ id }).first();
  const inboxRow = (kind: string, externalId: string) =>
    s.api.knex('acquirer_callbacks').where({ kind, external_id: externalId }).first();
  // By what reached the merchant's pending account, not by reference (unique in the database, so a
  // second credit under another reference would not show): one merchant, one charge per test.
  const credits = (merchantId: string) => paymentCredits(s.api.knex, merchantId);

  it('Temporal unreachable while a payment callback arrives, then back: credited exactly once, by the reconciler', async () => {
    const m = await readyMerchant(s.api);
    const charge = await newCharge(m.token);

    // An API whose Temporal cannot be reached (nothing listens there; no gRPC retries, so it fails at once).
    const connection = Connection.lazy({
      address: '127.0.0.1:9',
      interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 1 }))],
    });
    const deadWorkflows = chargeWorkflowClient(new Client({ connection }), s.taskQueue);
    const offline = createAcquirerCallbacks({
      knex: s.api.knex,
      workflows: deadWorkflows,
      logger: silent,
      acquirer: s.acquirer,
    });
    const api = await startApi({
      db: s.db,
      deps: { routes: [acquirerCallbackRoutes({ secret: CALLBACK_SECRET, callbacks: offline })] },
    });
    try {
      const e2e = e2eId();
      const body = JSON.stringify({
        pix: [{ endToEndId: e2e, txid: charge.txid, valor: '100.00', horario: new Date().toISOString() }],
      });
      const res = await fetch(`${api.baseUrl}/v1/acquirer/pix`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [CALLBACK_SIGNATURE_HEADER]: signCallback(CALLBACK_SECRET, body),
        },
        body,
      });
      // Kept for good: the acquirer gets its 2xx although nothing could be handed on.
      assert.equal(res.status, 200);
      const waiting = await eventually(async () => {
        const row = await inboxRow('pix', e2e);
        return row?.attempts >= 1 ? row : undefined;
      }, 'the failed hand-off to be recorded');
      assert.equal(waiting.status, 'RECEIVED');
      assert.match(waiting.last_error, /signalWithStart|UNAVAILABLE|connect/i);
      assert.equal((await chargeRow(charge.id)).status, 'PENDING');
      assert.equal((await credits(m.merchantId)).length, 0);

      // Temporal is back: the API's reconciler (the stack's live client) re-drives the callback once it is due.
      const applied = await eventually(async () => {
        await s.callbacks.inbox.redriveDue();
        const row = await inboxRow('pix', e2e);
        return row?.status === 'APPLIED' ? row : undefined;
      }, 'the reconciler to apply the payment');
      assert.equal(applied.resolution, 'paid');
      const paid = await chargeRow(charge.id);
      assert.equal(paid.status, 'PAID');
      assert.equal(paid.e2e_id, e2e);
      // Further passes and a late duplicate change nothing.
      await s.callbacks.inbox.redriveDue();
      const again = await fetch(`${s.api.baseUrl}/v1/acquirer/pix`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [CALLBACK_SIGNATURE_HEADER]: signCallback(CALLBACK_SECRET, body),
        },
        body,
      });
      assert.equal(again.status, 200);
      assert.equal((await credits(m.merchantId)).length, 1);
      assert.equal((await ledger.getBalance(s.api.knex, m.merchantId)).pending, 9_901);
    } finally {
      await api.close();
      await connection.close().catch(() => undefined);
    }
  });

  it('a cob paid at the acquirer whose callback never arrives: expiry asks GET /cob, finds it paid and credits it', async () => {
    const m = await readyMerchant(s.api);
    const charge = await newCharge(m.token, { expiresIn: 60 });
    // The acquirer's callbacks go nowhere (nothing listens on the discard port).
    s.simulator.control.setCallbackBaseUrl('http://127.0.0.1:9');
    let endToEndId: string;
    try {
      ({ endToEndId } = await s.simulator.control.payCob(charge.txid));
      await s.simulator.control.callbacks.idle();
    } finally {
      s.simulator.control.setCallbackBaseUrl(s.api.baseUrl);
    }
    assert.equal((await chargeRow(charge.id)).status, 'PENDING');
    assert.equal(await inboxRow('pix', endToEndId), undefined, 'no callback ever reached us');

    // Time skips to the expiry (and on through settlement): the workflow asks before it cancels.
    await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).result();
    const row = await chargeRow(charge.id);
    assert.equal(row.status, 'PAID');
    assert.equal(row.e2e_id, endToEndId);
    assert.equal((await credits(m.merchantId)).length, 1);
    assert.equal((await inboxRow('pix', endToEndId)).status, 'APPLIED');
    assert.equal(s.simulator.control.getCob(charge.txid)?.status, 'CONCLUIDA');
    assert.equal((await ledger.getBalance(s.api.knex, m.merchantId)).total, 9_901);
  });

  it('recordPayment failing non-retryably: the payment is parked and alerted, then re-driven by the ops CLI after the fix', async () => {
    const m = await readyMerchant(s.api);
    const charge = await newCharge(m.token);
    const fn = `test_refuse_${crypto.randomBytes(4).toString('hex')}`;
    // The fault: the database refuses this charge's update with a CHECK violation, something no retry can cure.
    // Planted as the owner role: the service's may create no function or trigger.
    const { ownerKnex } = s.db;
    await ownerKnex.raw(`
      create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.id = '${charge.id}' then raise exception 'refused for the test' using errcode = '23514'; end if;
        return new;
      end $$`);
    await ownerKnex.raw(`create trigger ${fn} before update on charges for each row execute function ${fn}()`);
    let e2e: string;
    try {
      const pay = await s.api.request<{ endToEndId: string }>('POST', `/v1/sandbox/charges/${charge.id}/pay`, {
        token: m.token,
        body: {},
      });
      assert.equal(pay.status, 202);
      e2e = pay.body.endToEndId;
      const parked = await eventually(async () => {
        const row = await inboxRow('pix', e2e);
        return row?.status === 'PARKED' ? row : undefined;
      }, 'the payment to be parked');
      assert.match(parked.last_error, /23514|refused for the test/);
      const alert = await s.api.knex('audit_log').where({ action: 'callback.parked', target_id: parked.id }).first();
      assert.ok(alert, 'an operator alert was recorded');
      assert.equal(alert.details.merchantId, m.merchantId);
      assert.equal((await chargeRow(charge.id)).status, 'PENDING');
      assert.equal((await credits(m.merchantId)).length, 0);
      // Paid at the acquirer, so never canceled: the charge outlives its expiry while its payment is parked.
      await s.env.sleep('2 days');
      await s.client.workflow.getHandle(chargeWorkflowId(charge.id)).query('state');
      assert.equal((await chargeRow(charge.id)).status, 'PENDING');
    } finally {
      // The fix.
      await ownerKnex.raw(`drop trigger if exists ${fn} on charges`);
      await ownerKnex.raw(`drop function if exists ${fn}()`);
    }

    const { url } = s.db;
    const ops = async (...args: string[]) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'src/cli/ops.ts'), ...args],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            DATABASE_URL: url,
            NODE_ENV: 'test',
            LOG_LEVEL: 'warn',
            ADMIN_EMAIL: '',
            ADMIN_PASSWORD: '',
            DATA_DIR: path.join(os.tmpdir(), 'pixflow-ops-cli-test'),
            TEMPORAL_ADDRESS: s.env.address,
            TEMPORAL_TASK_QUEUE: s.taskQueue,
            ACQUIRER_URL: s.simulator.url,
            ACQUIRER_CLIENT_ID: 'pixflow-test',
            ACQUIRER_CLIENT_SECRET: 'pixflow-test-secret',
          },
        },
      );
      return JSON.parse(stdout) as Record<string, unknown>;
    };
    const listed = (await ops('callbacks', 'list', '--status', 'PARKED', '--kind', 'pix')) as {
      callbacks: Array<{ id: string; externalId: string }>;
    };
    const mine = listed.callbacks.find((c) => c.externalId === e2e);
    assert.ok(mine, 'the ops CLI lists the parked payment');
    const redriven = (await ops('callbacks', 'redrive', mine.id)) as {
      redriven: Array<{ id: string }>;
      reconciledNow: boolean;
    };
    assert.deepEqual(
      redriven.redriven.map((r) => r.id),
      [mine.id],
    );
    assert.equal(redriven.reconciledNow, true);

    const row = await eventually(async () => {
      const r = await chargeRow(charge.id);
      return r.status === 'PAID' ? r : undefined;
    }, 'the re-driven payment to be applied');
    assert.equal(row.e2e_id, e2e);
    assert.equal((await inboxRow('pix', e2e)).status, 'APPLIED');
    assert.equal((await credits(m.merchantId)).length, 1);
    assert.ok(
      await s.api
        .knex('audit_log')
        .where({ action: 'callback.redrive', target_id: mine.id, actor_email: 'cli' })
        .first(),
    );
  });

  it('refund polling is bounded and continues as new: no outcome ever → parked with an alert, nothing lost', async () => {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    const charge = await newCharge(m.token);
    await s.api.request('POST', `/v1/sandbox/charges/${charge.id}/pay`, { token: m.token, body: {} });
    await eventually(async () => ((await chargeRow(charge.id)).status === 'PAID' ? true : undefined), 'PAID');
    const handle = s.client.workflow.getHandle(chargeWorkflowId(charge.id));
    const firstRunId = (await handle.describe()).runId;
    s.simulator.control.setAutoSettleRefunds(false);
    try {
      const res = await s.api.request<{ refund: { id: string } }>('POST', `/v1/charges/${charge.id}/refund`, {
        token: m.token,
        body: { amount: 4_000 },
      });
      assert.equal(res.status, 202);
      const refundId = res.body.refund.id;
      // Time skips through every poll; the chain of runs ends once the refund is parked and the charge settled.
      await handle.result();
      const parked = await eventually(
        async () =>
          (await s.api
            .knex('acquirer_callbacks')
            .where({ kind: 'refund', status: 'PARKED' })
            .whereLike('external_id', `${refundId.replace('_', '')}:%`)
            .first()) ?? undefined,
        'the refund to be parked',
      );
      assert.match(parked.last_error, /no outcome from the acquirer after 60 polls/);
      assert.ok(await s.api.knex('audit_log').where({ action: 'callback.parked', target_id: parked.id }).first());
      // Still REQUESTED, its money still in transit: nothing was dropped.
      assert.equal((await s.api.knex('charge_refunds').where({ id: refundId }).first()).status, 'REQUESTED');
      assert.equal((await ledger.getAccounts(s.api.knex, m.merchantId)).in_transit, 4_000);
      // The first run continued as new (bounded history) rather than polling forever in one history.
      const first = await s.client.workflow.getHandle(chargeWorkflowId(charge.id), firstRunId).describe();
      assert.equal(first.status.name, 'CONTINUED_AS_NEW');
      // The reconciler leaves a parked refund alone (no restart loop).
      await reconcileChargeWorkflows({ knex: s.api.knex, workflows: s.workflows, logger: silent });
      assert.equal((await handle.describe()).status.name, 'COMPLETED');

      // An operator re-drives it: the charge's workflow takes the refund up again, and the
      // acquirer's outcome, when it finally comes, is applied.
      await s.callbacks.inbox.redrive(CLI_ACTOR, [parked.id]);
      await s.callbacks.inbox.dispatch(await AcquirerCallback.query(s.api.knex).findById(parked.id).throwIfNotFound());
      assert.equal((await s.api.knex('acquirer_callbacks').where({ id: parked.id }).first()).status, 'APPLIED');
      await eventually(
        async () => ((await handle.describe()).status.name === 'RUNNING' ? true : undefined),
        'the workflow to run again',
      );
      s.simulator.control.settleRefund(refundId.replace('_', ''), 'DEVOLVIDO');
      await eventually(
        async () =>
          (await s.api.knex('charge_refunds').where({ id: refundId }).first()).status === 'CONFIRMED'
            ? true
            : undefined,
        'the re-driven refund to be confirmed',
      );
      assert.equal((await ledger.getAccounts(s.api.knex, m.merchantId)).in_transit, 0);
    } finally {
      s.simulator.control.setAutoSettleRefunds(true);
    }
  });

  it('a creation the reconciler took for interrupted stays FAILED: 502, never a 201 for a FAILED charge; its cob is removed', async () => {
    const m = await readyMerchant(s.api);
    const slow = createChargesService({
      knex: s.api.knex,
      config: { CHARGE_LIST_CACHE_MS: 3000 },
      logger: silent,
      acquirer: s.acquirer,
      workflows: s.workflows,
    });
    s.simulator.control.setFaults({ latencyMs: 800 });
    try {
      const creating = slow.create(m.merchantId, { amount: 700, description: 'lenta', expiresIn: 3600 }).then(
        () => 'created',
        (err: unknown) => err,
      );
      // While the acquirer is slow, the charge looks interrupted (older than the threshold, no BR Code).
      const row = await eventually(
        async () => (await s.api.knex('charges').where({ merchant_id: m.merchantId }).first()) ?? undefined,
        'the row',
      );
      await s.api
        .knex('charges')
        .where({ id: row.id })
        .update({ created_at: s.api.knex.raw(`now() - interval '5 minutes'`) });
      await reconcileChargeWorkflows({ knex: s.api.knex, workflows: s.workflows, logger: silent });
      assert.equal((await chargeRow(row.id)).status, 'FAILED');
      const outcome = await creating;
      assert.ok(outcome instanceof Error && /FAILED/.test(outcome.message), String(outcome));
      const after = await chargeRow(row.id);
      assert.equal(after.status, 'FAILED');
      assert.equal(after.qr_code, null);
      s.simulator.control.setFaults({});
      await eventually(
        async () =>
          s.simulator.control.getCob(row.txid)?.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR' ? true : undefined,
        'the cob to be removed',
      );
    } finally {
      s.simulator.control.setFaults({});
    }
  });

  it("a payment for an unknown txid waits for its charge, then is returned to the payer (never a merchant's money)", async () => {
    const txid = newTxid();
    await s.acquirer.createCob({ txid, amount: 1_234, expiresIn: 600, key: 'loja@example.com' });
    const { endToEndId } = await s.simulator.control.payCob(txid);
    await s.simulator.control.callbacks.idle();
    // Within the grace period it waits (the charge might not be visible yet).
    const waiting = await inboxRow('pix', endToEndId);
    assert.equal(waiting.status, 'RECEIVED');
    assert.match(waiting.last_error, /no charge with txid/);

    // A reconciler past the grace period returns it to the payer by a devolução of the full amount.
    const pastGrace = createAcquirerCallbacks({
      knex: s.api.knex,
      workflows: s.workflows,
      logger: silent,
      acquirer: s.acquirer,
      unmatchedGraceMs: 0,
    });
    // One pass of its reconciler over this row (a sweep would also take other suites' test payments).
    await pastGrace.inbox.dispatch(await AcquirerCallback.query(s.api.knex).findById(waiting.id).throwIfNotFound());
    const applied = await eventually(async () => {
      const row = await inboxRow('pix', endToEndId);
      return row.status === 'APPLIED' ? row : undefined;
    }, 'the unmatched payment to be returned');
    assert.equal(applied.resolution, 'returned_to_payer');
    const returned = s.simulator.control.getRefund(`U${endToEndId}`);
    assert.equal(returned?.status, 'DEVOLVIDO');
    assert.equal(returned?.amount, 1_234);
  });

  it('a payment whose charge is not there yet is matched once the charge exists', async () => {
    const m = await readyMerchant(s.api);
    const txid = newTxid();
    const e2e = e2eId();
    const body = JSON.stringify({ pix: [{ endToEndId: e2e, txid, valor: '3.00', horario: new Date().toISOString() }] });
    const res = await fetch(`${s.api.baseUrl}/v1/acquirer/pix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CALLBACK_SIGNATURE_HEADER]: signCallback(CALLBACK_SECRET, body) },
      body,
    });
    assert.equal(res.status, 200);
    assert.equal((await inboxRow('pix', e2e)).status, 'RECEIVED');
    // The charge appears (as a creation committed by another process would).
    const id = `ch_late_${Date.now()}`;
    await s.api.knex('charges').insert({
      id,
      merchant_id: m.merchantId,
      amount: 300,
      description: 'late',
      expires_in: 3600,
      txid,
      qr_code: 'brcode',
      expires_at: s.api.knex.raw(`now() + interval '1 hour'`),
    });
    const row = await eventually(async () => {
      await s.api
        .knex('acquirer_callbacks')
        .where({ kind: 'pix', external_id: e2e })
        .update({ next_attempt_at: s.api.knex.fn.now() });
      await s.callbacks.inbox.redriveDue();
      const c = await chargeRow(id);
      return c.status === 'PAID' ? c : undefined;
    }, 'the payment to be matched');
    assert.equal(row.e2e_id, e2e);
    assert.equal((await credits(m.merchantId)).length, 1);
    await eventually(async () => ((await inboxRow('pix', e2e)).status === 'APPLIED' ? true : undefined), 'APPLIED');
  });
});
