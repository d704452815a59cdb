/**
 * The merchant's statement (docs/api.md "Statement") over real flows: charges paid and settled
 * (with their fees), a merchant refund, a withdrawal that fails and one that completes, a MED
 * block and its refund to the payer, and an operator's adjustment — through the HTTP API, the
 * simulator's signed callbacks and the real workflows. The statement must tell each movement with
 * the balances after it, add up (opening + Σ = closing in each balance, closing = GET balance),
 * page without gaps, answer the same lines as CSV, show another merchant nothing, and refuse bad
 * ranges with a clear 400. The charge detail lists the refunds of both kinds.
 */
import assert from 'node:assert/strict';
import { infractionWorkflowId } from '../../src/temporal/workflow-ids';
import { todayInStatementZone } from '../../src/services/ledger/statement';
import { eventually } from '../support/charges';
import { medFlows, medStack, type MedStack } from '../support/med';
import { DEST, withdrawalsStack, type WithdrawalsStack } from '../support/withdrawals';
import type { MerchantFixture } from '../support/api';
import { getTestDb } from '../support/db';
import { runOps } from '../support/ops-cli';
import type { StatementEntry, StatementResponse } from '../../src/contracts/statement';

type Buckets = { available: number; pending: number; blocked: number };
const BUCKETS = ['available', 'pending', 'blocked'] as const;

/** RFC 4180: quoted fields may hold commas, CRLF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  assert.equal(field, '', 'the CSV ends with CRLF');
  assert.equal(row.length, 0);
  return rows;
}

const reais = (cents: number): string =>
  `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;

/** The CSV record the JSON entry must be. */
const csvOf = (e: StatementEntry): string[] => [
  e.id,
  e.occurredAt,
  e.type,
  e.description,
  reais(e.amount),
  String(e.amount),
  reais(e.balanceAfter.available),
  String(e.balanceAfter.available),
  reais(e.balanceAfter.pending),
  String(e.balanceAfter.pending),
  reais(e.balanceAfter.blocked),
  String(e.balanceAfter.blocked),
  e.chargeId ?? '',
  e.withdrawId ?? '',
  e.refundId ?? '',
  e.infractionId ?? '',
];

describe('merchant statement', function () {
  this.timeout(240_000);
  let s: MedStack;
  let w: WithdrawalsStack;
  const flows = medFlows(() => s);
  let m: MerchantFixture;
  let other: MerchantFixture;
  const ids = {} as Record<'c1' | 'c2' | 'refund' | 'failedW' | 'doneW' | 'infraction' | 'medRefund', string>;
  const reason = 'Goodwill, "promo" credit';

  const statement = (token: string, query = '') =>
    s.api.request<StatementResponse>('GET', `/v1/merchants/me/statement${query}`, { token });

  async function withdraw(amount: number, outcome: 'fail' | 'complete'): Promise<string> {
    const res = await w.api.request<{ withdraw: { id: string } }>('POST', '/v1/merchants/me/withdrawals', {
      token: m.token,
      body: { amount, ...DEST },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const id = res.body.withdraw.id;
    await eventually(async () => {
      const row = await w.knex('withdrawals').where({ id }).first('transfer_id');
      return (row?.transfer_id as string | null) ?? undefined;
    }, `the transfer of ${id}`);
    const told = await w.api.request('POST', `/v1/sandbox/withdrawals/${id}/${outcome}`, { token: m.token, body: {} });
    assert.equal(told.status, 202, JSON.stringify(told.body));
    const want = outcome === 'fail' ? 'FAILED' : 'COMPLETED';
    await eventually(async () => {
      const row = await w.knex('withdrawals').where({ id }).first('status');
      return row?.status === want ? true : undefined;
    }, `withdrawal ${id} ${want}`);
    return id;
  }

  before(async () => {
    s = await medStack();
    w = await withdrawalsStack();
    m = await flows.readyMerchant({ feeBps: 100 });
    other = await flows.readyMerchant({ feeBps: 100 });
    // The other merchant has movements of its own: none may show in m's statement.
    await flows.paidCharge(other, { settle: true, amount: 7_000 });

    ids.c1 = (await flows.paidCharge(m, { settle: true, amount: 10_000 })).id; // fee 100, net 9,900
    ids.c2 = (await flows.paidCharge(m, { settle: true, amount: 5_000 })).id; // fee 50, net 4,950
    const refund = await s.api.request<{ refund: { id: string } }>('POST', `/v1/charges/${ids.c1}/refund`, {
      token: m.token,
      body: { amount: 3_000, reason: 'Pedido devolvido' },
    });
    assert.equal(refund.status, 202, JSON.stringify(refund.body));
    ids.refund = refund.body.refund.id;
    await eventually(async () => {
      const r = await s.api.knex('charge_refunds').where({ id: ids.refund }).first('status');
      return r?.status === 'CONFIRMED' ? true : undefined;
    }, 'the merchant refund CONFIRMED');
    ids.failedW = await withdraw(1_000, 'fail');
    ids.doneW = await withdraw(2_000, 'complete');

    const inf = await flows.raise(m, ids.c2);
    ids.infraction = inf.id;
    await flows.untilBalance(m, { available: 4_850, pending: 0, blocked: 5_000, total: 9_850 }, 'the MED block');
    const accepted = await s.api.request('POST', `/v1/sandbox/infractions/${inf.id}/accept`, { token: m.token });
    assert.equal(accepted.status, 202);
    // The acquirer's decision comes by HTTP: awaiting the result before it has arrived would let the
    // test server skip time with nothing due but the run's own far timers (docs/testing.md "One
    // Temporal server of each kind per run").
    await eventually(async () => {
      const row = await flows.infractionRow(inf.id);
      return row?.status === 'ACCEPTED' || row?.status === 'REFUNDED' ? true : undefined;
    }, 'the decision to reach the infraction');
    assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result(), {
      status: 'REFUNDED',
    });
    ids.medRefund = String((await flows.infractionRow(inf.id)).refund_id);

    const admin = await s.api.adminToken();
    const adjusted = await s.api.request('POST', `/v1/admin/merchants/${m.merchantId}/adjustments`, {
      token: admin,
      body: { amount: 1_234, reason },
    });
    assert.equal(adjusted.status, 201, JSON.stringify(adjusted.body));
  });

  it('tells every movement in order, with its ids and the balances after it', async () => {
    const res = await statement(m.token, '?limit=100');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const today = todayInStatementZone();
    assert.equal(res.body.to, today);
    assert.equal(res.body.total, res.body.entries.length);
    const lines = res.body.entries.map((e) => [e.type, e.amount, e.balanceAfter]);
    assert.deepEqual(lines, [
      ['CHARGE_PAID', 10_000, { available: 0, pending: 10_000, blocked: 0 }],
      ['FEE', -100, { available: 0, pending: 9_900, blocked: 0 }],
      ['SETTLEMENT', 9_900, { available: 9_900, pending: 0, blocked: 0 }],
      ['CHARGE_PAID', 5_000, { available: 9_900, pending: 5_000, blocked: 0 }],
      ['FEE', -50, { available: 9_900, pending: 4_950, blocked: 0 }],
      ['SETTLEMENT', 4_950, { available: 14_850, pending: 0, blocked: 0 }],
      ['REFUND', -3_000, { available: 11_850, pending: 0, blocked: 0 }],
      ['WITHDRAWAL', -1_000, { available: 10_850, pending: 0, blocked: 0 }],
      ['WITHDRAWAL_RESTORED', 1_000, { available: 11_850, pending: 0, blocked: 0 }],
      ['WITHDRAWAL', -2_000, { available: 9_850, pending: 0, blocked: 0 }],
      ['MED_BLOCK', -5_000, { available: 4_850, pending: 0, blocked: 5_000 }],
      ['MED_REFUND', -5_000, { available: 4_850, pending: 0, blocked: 0 }],
      ['ADJUSTMENT', 1_234, { available: 6_084, pending: 0, blocked: 0 }],
    ]);
    const e = res.body.entries;
    const idsOf = (x: StatementEntry) => [x.chargeId, x.withdrawId, x.refundId, x.infractionId];
    assert.deepEqual(idsOf(e[0]!), [ids.c1, null, null, null]);
    assert.equal(e[1]!.id, `${e[0]!.id}:fee`);
    assert.deepEqual(idsOf(e[6]!), [ids.c1, null, ids.refund, null]);
    assert.deepEqual(idsOf(e[8]!), [null, ids.failedW, null, null]);
    assert.deepEqual(idsOf(e[9]!), [null, ids.doneW, null, null]);
    assert.deepEqual(idsOf(e[10]!), [ids.c2, null, null, ids.infraction]);
    assert.deepEqual(idsOf(e[11]!), [ids.c2, null, ids.medRefund, ids.infraction]);
    assert.deepEqual(idsOf(e[12]!), [null, null, null, null]);
    assert.equal(e[12]!.description, reason);
    for (const x of e) assert.ok(x.occurredAt.startsWith(new Date().toISOString().slice(0, 4)));
  });

  it('adds up: opening + Σ = closing in each balance, and closing is the balance', async () => {
    const res = await statement(m.token, '?limit=100');
    const body = res.body;
    assert.deepEqual(body.opening, { available: 0, pending: 0, blocked: 0 });
    let running: Buckets = { ...body.opening };
    for (const e of body.entries) {
      const moved = BUCKETS.map((b) => e.balanceAfter[b] - running[b]);
      const total = moved.reduce((x, y) => x + y, 0);
      assert.equal(e.amount, total !== 0 ? total : moved[0], `${e.type} ${e.id}`);
      running = e.balanceAfter;
    }
    assert.deepEqual(running, body.closing);
    const balance = await flows.balance(m);
    assert.deepEqual(body.closing, {
      available: balance.available,
      pending: balance.pending,
      blocked: balance.blocked,
    });
    // A range of yesterday and before: nothing, and its closing is today's opening.
    const yesterday = new Date(Date.parse(`${body.to}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const before = await statement(m.token, `?to=${yesterday}`);
    assert.equal(before.status, 200);
    assert.deepEqual([before.body.total, before.body.entries], [0, []]);
    assert.deepEqual(before.body.closing, body.opening);
    const fromToday = await statement(m.token, `?from=${body.to}&to=${body.to}`);
    assert.deepEqual(fromToday.body.closing, body.closing);
    assert.equal(fromToday.body.total, body.total);
  });

  it('pages without gaps or overlaps, with the range totals on every page', async () => {
    const all = (await statement(m.token, '?limit=100')).body;
    const pages: StatementEntry[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await statement(m.token, `?limit=5&page=${page}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.total, 13);
      assert.deepEqual([res.body.opening, res.body.closing], [all.opening, all.closing]);
      assert.equal(res.body.entries.length, page < 3 ? 5 : 3);
      pages.push(...res.body.entries);
    }
    assert.deepEqual(pages, all.entries);
    const past = await statement(m.token, '?limit=5&page=4');
    assert.equal(past.status, 200);
    assert.deepEqual([past.body.total, past.body.entries, past.body.closing], [13, [], all.closing]);
  });

  it('the CSV holds the same lines as the JSON pages, quoted per RFC 4180', async () => {
    const all = (await statement(m.token, '?limit=100')).body;
    const res = await fetch(`${s.api.baseUrl}/v1/merchants/me/statement.csv`, {
      headers: { authorization: `Bearer ${m.token}` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    assert.equal(res.headers.get('content-disposition'), `attachment; filename="statement-${all.from}-${all.to}.csv"`);
    const text = await res.text();
    assert.ok(text.includes('"Goodwill, ""promo"" credit"'), 'a description with a comma and quotes is quoted');
    const [header, ...records] = parseCsv(text);
    assert.deepEqual(header, [
      'id',
      'occurredAt',
      'type',
      'description',
      'amount',
      'amountCents',
      'availableAfter',
      'availableAfterCents',
      'pendingAfter',
      'pendingAfterCents',
      'blockedAfter',
      'blockedAfterCents',
      'chargeId',
      'withdrawId',
      'refundId',
      'infractionId',
    ]);
    assert.deepEqual(records, all.entries.map(csvOf));
  });

  it('another merchant sees none of it', async () => {
    const res = await statement(other.token, '?limit=100');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.entries.map((e) => e.type),
      ['CHARGE_PAID', 'FEE', 'SETTLEMENT'],
    );
    assert.ok(res.body.entries.every((e) => e.chargeId !== ids.c1 && e.chargeId !== ids.c2));
    const csv = await fetch(`${s.api.baseUrl}/v1/merchants/me/statement.csv`, {
      headers: { authorization: `Bearer ${other.token}` },
    });
    const records = parseCsv(await csv.text());
    assert.equal(records.length, 4, 'the header and its three lines');
    assert.ok(!records.some((r) => r.includes(ids.c1) || r.includes(ids.refund) || r.includes(ids.infraction)));
  });

  it('refuses a bad range with a 400 naming it', async () => {
    const cases: Array<[string, RegExp, string]> = [
      ['?from=2026-02-30', /from must be a date that exists/, 'from'],
      ['?to=2026-13-01', /to must be a date that exists/, 'to'],
      ['?from=01/12/2026', /from must be a date YYYY-MM-DD/, 'from'],
      ['?from=2026-06-02&to=2026-06-01', /from must not be after to/, 'from'],
      ['?from=2025-01-01&to=2026-01-02', /spans 367 days: at most 366/, 'from'],
      ['?limit=101', /limit must be <= 100/, 'limit'],
    ];
    for (const [query, message, param] of cases) {
      for (const path of ['/v1/merchants/me/statement', '/v1/merchants/me/statement.csv']) {
        if (path.endsWith('.csv') && query.startsWith('?limit')) continue;
        const res = await s.api.request<{ message: string; code: string; param?: string }>('GET', `${path}${query}`, {
          token: m.token,
        });
        assert.equal(res.status, 400, `${path}${query}`);
        assert.match(res.body.message, message);
        assert.equal(res.body.code, 'validation_error');
        assert.equal(res.body.param, param);
      }
    }
    const ok = await statement(m.token, '?from=2025-01-02&to=2026-01-02');
    assert.equal(ok.status, 200, '366 days is allowed');
  });

  it('ops statement shows operators the same page and the same CSV', async () => {
    const { url } = await getTestDb();
    const api = (await statement(m.token, '?limit=5&page=2')).body;
    const page = await runOps(url, 'statement', m.merchantId, '--limit', '5', '--page', '2');
    assert.equal(page.code, 0, page.stderr);
    assert.deepEqual(JSON.parse(page.stdout), api);
    const csv = await runOps(url, 'statement', m.merchantId, '--csv', '--from', api.from, '--to', api.to);
    assert.equal(csv.code, 0, csv.stderr);
    const viaApi = await fetch(`${s.api.baseUrl}/v1/merchants/me/statement.csv?from=${api.from}&to=${api.to}`, {
      headers: { authorization: `Bearer ${m.token}` },
    });
    assert.equal(csv.stdout, await viaApi.text());
    const bad = await runOps(url, 'statement', m.merchantId, '--from', '2026-02-30');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /from must be a date that exists/);
    const unknown = await runOps(url, 'statement', 'mer_unknown');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Merchant not found/);
  });

  it('the charge shows its payment (payer, end-to-end id, fee) and its refunds of both kinds', async () => {
    type Detail = {
      charge: {
        payer: { name: string; document: string } | null;
        endToEndId: string | null;
        fee: number | null;
        refundedAmount: number;
        refunds: Array<{ id: string; kind: string; amount: number; status: string; completedAt: string | null }>;
      };
    };
    const c1 = await s.api.request<Detail>('GET', `/v1/charges/${ids.c1}`, { token: m.token });
    assert.equal(c1.status, 200);
    assert.equal(c1.body.charge.refundedAmount, 3_000);
    // The sandbox's default payer, and the fee of 10,000 at the default rate (see the set-up above).
    assert.deepEqual(c1.body.charge.payer, { name: 'Pagador Sandbox', document: '12345678909' });
    assert.match(c1.body.charge.endToEndId ?? '', /^E\d{8}/);
    assert.equal(c1.body.charge.fee, 100);
    assert.deepEqual(
      c1.body.charge.refunds.map((r) => [r.id, r.kind, r.amount, r.status, r.completedAt !== null]),
      [[ids.refund, 'MERCHANT', 3_000, 'CONFIRMED', true]],
    );
    const c2 = await s.api.request<Detail>('GET', `/v1/charges/${ids.c2}`, { token: m.token });
    assert.equal(c2.body.charge.refundedAmount, 5_000);
    assert.deepEqual(
      c2.body.charge.refunds.map((r) => [r.id, r.kind, r.amount, r.status]),
      [[ids.medRefund, 'MED', 5_000, 'CONFIRMED']],
    );
    assert.equal((await s.api.request('GET', `/v1/charges/${ids.c1}`, { token: other.token })).status, 404);
  });
});
