/**
 * PostgreSQL restarted under load. A separate embedded PostgreSQL (never the run's shared one) with
 * an API and a worker process on it; clients keep creating withdrawals and charges and reading
 * balances while the database is stopped and started again. While it is down every answer is a
 * clean 503 `{message}` (never a 500, never a hang past the bound); after it is back requests
 * succeed again, every accepted withdrawal completes, and nothing is half-written: the ledger
 * invariant holds on that database and no withdrawal lacks its debit.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded-postgres';
import { createKnex } from '../../src/db/knex';
import { migrateLatest } from '../../src/db/migrate';
import { postingsTo } from '../support/ledger-postings';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { startStack, waitUntil, type ApiProc, type Stack } from '../../tools/harness/src/stack';
import { call, readyMerchant, withdrawalBody, type ReadyMerchant } from '../../tools/harness/src/client';
import { assertErrorBody } from '../support/errors';

/** No request may take longer than this, database down or not. */
const BOUND_MS = 20_000;
const DOWN_MS = 3_000;

interface Outcome {
  phase: 'before' | 'down' | 'after';
  what: string;
  status: number;
  ms: number;
  body: string;
  retryAfter: string | null;
  id?: string;
}

describe('reliability: PostgreSQL restarted under load', function () {
  this.timeout(300_000);
  let dir: string;
  let pg: EmbeddedDatabase;
  let knex: Knex;
  let stack: Stack;
  let api: ApiProc;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-pg-restart-'));
    // As root the server runs as the `postgres` OS user, which must reach the folder.
    fs.chmodSync(dir, 0o755);
    pg = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'data'),
      persistent: true,
      database: 'pixflow_restart',
    });
    // Migrated as the owner role; the stack and this suite's own queries run as the service's.
    const owner = createKnex(pg.ownerUrl, 1);
    try {
      await migrateLatest(owner);
    } finally {
      await owner.destroy();
    }
    knex = createKnex(pg.url, 4);
    stack = await startStack({ databaseUrl: pg.url, simulator: { transferDelayMs: 200 } });
    [api] = await Promise.all([stack.startApi(), stack.startWorker()]);
  });

  after(async () => {
    await stack?.stop();
    await knex?.destroy();
    await pg?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 {message} while down, recovers, and leaves nothing half-written', async () => {
    const m: ReadyMerchant = await readyMerchant(api.url, { fund: 1_000_000 });
    let phase: Outcome['phase'] = 'before';
    let running = true;
    const outcomes: Outcome[] = [];
    const one = async (what: string, method: string, p: string, body?: unknown): Promise<void> => {
      const started = Date.now();
      const at = phase;
      try {
        const res = await call<Record<string, { id?: string }>>(api.url, method, p, {
          token: m.apiKey,
          body,
          timeoutMs: BOUND_MS + 5_000,
        });
        const id =
          res.body && typeof res.body === 'object' ? (res.body.withdraw?.id ?? res.body.charge?.id) : undefined;
        outcomes.push({
          phase: at,
          what,
          status: res.status,
          ms: Date.now() - started,
          body: res.text.slice(0, 200),
          retryAfter: res.headers.get('retry-after'),
          id,
        });
      } catch (err) {
        outcomes.push({ phase: at, what, status: 0, ms: Date.now() - started, body: String(err), retryAfter: null });
      }
    };
    const client = async (n: number): Promise<void> => {
      while (running) {
        if (n % 3 === 0) await one('withdrawal', 'POST', '/v1/merchants/me/withdrawals', withdrawalBody(100));
        else if (n % 3 === 1)
          await one('charge', 'POST', '/v1/charges', { amount: 1_000, description: 'restart load' });
        else await one('balance', 'GET', '/v1/merchants/me/balance');
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const clients = Array.from({ length: 6 }, (_, n) => client(n));

    await waitUntil(() => outcomes.filter((o) => o.status === 201).length >= 10, 60_000, 'load under way');
    phase = 'down';
    await pg.stop();
    const downSince = Date.now();
    await waitUntil(() => outcomes.some((o) => o.phase === 'down' && o.status === 503), BOUND_MS, 'a 503 while down');
    await new Promise((r) => setTimeout(r, Math.max(0, DOWN_MS - (Date.now() - downSince))));
    pg = await startEmbeddedPostgres({
      dataDir: pg.dataDir,
      port: pg.port,
      persistent: true,
      database: 'pixflow_restart',
    });
    phase = 'after';
    await waitUntil(
      () => outcomes.filter((o) => o.phase === 'after' && (o.status === 200 || o.status === 201)).length >= 10,
      60_000,
      'successful requests after the restart',
    );
    running = false;
    await Promise.all(clients);

    // Never a 500 or 502, never a transport failure, never past the bound: while the database is
    // down the only 5xx is exactly what docs/production.md "Database outages" promises, 503 {message} with
    // Retry-After: 5.
    if (process.env.RELIABILITY_DUMP) fs.writeFileSync(process.env.RELIABILITY_DUMP, api.output.join(''));
    const bad = outcomes.filter((o) => o.status === 0 || (o.status >= 500 && o.status !== 503));
    assert.deepEqual(
      bad,
      [],
      `no 500 or hang; API errors:\n${api.output
        .join('')
        .split('\n')
        .filter((l) => /"level":("error"|50)/.test(l))
        .join('\n')
        .slice(0, 6000)}`,
    );
    assert.ok(
      outcomes.every((o) => o.ms < BOUND_MS),
      `slowest answer ${Math.max(...outcomes.map((o) => o.ms))} ms`,
    );
    const unavailable = outcomes.filter((o) => o.status === 503);
    assert.ok(unavailable.length > 0);
    for (const o of unavailable) {
      const body = assertErrorBody(JSON.parse(o.body) as object, o.body, { code: 'service_unavailable' });
      assert.equal(body.message, 'Service temporarily unavailable; retry shortly', o.body);
      assert.equal(o.retryAfter, '5', `${o.what}: 503 without Retry-After: 5`);
    }
    for (const o of outcomes.filter((x) => x.status >= 400 && x.status !== 503))
      assert.ok(/^\{"message":/.test(o.body), o.body);

    // Every withdrawal the API accepted completes; every withdrawal in the database was debited.
    const accepted = outcomes.filter((o) => o.what === 'withdrawal' && o.status === 201).map((o) => o.id as string);
    await waitUntil(
      async () =>
        (await knex('withdrawals').where({ merchant_id: m.merchantId }).whereNot({ status: 'COMPLETED' })).length === 0,
      120_000,
      'every withdrawal COMPLETED',
      250,
    );
    const rows: Array<{ id: string }> = await knex('withdrawals').where({ merchant_id: m.merchantId }).select('id');
    const inDb = new Set(rows.map((r) => r.id));
    for (const id of accepted) assert.ok(inDb.has(id), `accepted withdrawal ${id} is stored`);
    // Counted by what left `available` for a withdrawal, not by reference (unique in the database, so a
    // second debit under another reference would not show): one debit of 100 per stored withdrawal.
    const intoTransit = await postingsTo(knex, m.merchantId, 'in_transit', 'in');
    assert.deepEqual(
      intoTransit,
      rows.map(() => 100),
      'one debit per stored withdrawal',
    );
    // Charges the API created have their BR Code; none is left PENDING without one.
    const accepted201Charges = outcomes
      .filter((o) => o.what === 'charge' && o.status === 201)
      .map((o) => o.id as string);
    const charges: Array<{ id: string; status: string; txid: string | null }> = await knex('charges')
      .whereIn('id', accepted201Charges)
      .select('id', 'status', 'txid');
    assert.equal(charges.length, accepted201Charges.length);
    for (const c of charges) assert.ok(c.txid, `charge ${c.id} has its txid`);

    const report = await checkLedgerInvariant(knex, { merchantIds: [m.merchantId] });
    assert.ok(report.ok, JSON.stringify(report.violations));
    // The run's ledger check covers the shared database only; this one is checked whole here.
    const whole = await checkLedgerInvariant(knex);
    assert.ok(whole.ok, JSON.stringify(whole.violations));
  });
});
