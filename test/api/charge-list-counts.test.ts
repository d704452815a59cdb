/**
 * The list's `total` comes from `charge_counts` (kept by a trigger in the transaction of every
 * change) and its pages from the index (docs/performance.md "Where a charge's time goes"): both must say
 * exactly what a count and an OFFSET query over the charges say. Charge creation's prerequisites
 * are cached per process and dropped when they change, also by a write straight to the database.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { newId } from '../../src/lib/ids';
import { CHARGE_TYPES } from '../../src/contracts/statuses';
import { chargeTotal, listPageReader, pageOfCharges } from '../../src/services/charges/list';
import { DEEP_PAGE_OFFSET, type PageQuery } from '../../src/stores/charges';
import { chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';
import { createMerchantFixture, getTestDb } from '../support/db';

const STATUSES = ['PENDING', 'PAID', 'FAILED', 'CANCELED', 'REFUNDED'] as const;

async function naiveTotal(knex: Knex, merchantId: string, status?: string, type?: string): Promise<number> {
  const q = knex('charges').where({ merchant_id: merchantId }).count({ n: '*' }).first();
  if (status) q.where({ status });
  if (type) q.where({ type });
  return Number(((await q) as { n: string | number }).n);
}

async function naivePage(
  knex: Knex,
  merchantId: string,
  page: number,
  limit: number,
  status?: string,
  type?: string,
): Promise<string[]> {
  const q = knex('charges')
    .where({ merchant_id: merchantId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)
    .offset((page - 1) * limit)
    .pluck('id');
  if (status) q.where({ status });
  if (type) q.where({ type });
  return (await q) as string[];
}

/** Forty charges for one merchant created at once, every other one then paid: concurrent writes to its counts. */
async function createConcurrently(knex: Knex, merchantId: string, amountFrom: number): Promise<void> {
  await Promise.all(
    Array.from({ length: 40 }, async (_, i) => {
      const id = newId('ch');
      await knex('charges').insert({
        id,
        merchant_id: merchantId,
        amount: amountFrom + i,
        description: 'concurrent',
        status: 'PENDING',
        expires_in: 3600,
        expires_at: knex.raw(`now() + interval '1 hour'`),
      });
      if (i % 2 === 0) await knex('charges').where({ id }).update({ status: 'PAID' });
    }),
  );
}

describe('charge list: counts and pages', () => {
  let knex: Knex;
  let merchantId: string;

  before(async () => {
    knex = (await getTestDb()).knex;
    merchantId = (await createMerchantFixture(knex, { booksOutsideTheDomain: true })).id;
    // 300 charges, several sharing one created_at (ties are ordered by id), in one statement.
    await knex.raw(
      `insert into charges (id, merchant_id, amount, description, status, expires_in, expires_at, txid, created_at)
       select 'ch_cnt_' || lpad(g::text, 5, '0') || '_' || ?, ?, 100 + g, 'c', 'PENDING', 3600, now() + interval '1 hour',
              null, now() - make_interval(secs => (g / 3))
       from generate_series(1, 300) g`,
      [crypto.randomBytes(3).toString('hex'), merchantId],
    );
  });

  async function assertAgrees(): Promise<void> {
    for (const status of [undefined, ...STATUSES]) {
      assert.equal(
        await chargeTotal(knex, merchantId, status),
        await naiveTotal(knex, merchantId, status),
        `total for ${status ?? 'all'}`,
      );
      for (const [page, limit] of [
        [1, 20],
        [2, 20],
        [7, 7],
        [15, 20],
        [16, 20],
      ] as const) {
        const got = (await pageOfCharges(knex, merchantId, { page, limit, status })).map((r) => r.id);
        assert.deepEqual(
          got,
          await naivePage(knex, merchantId, page, limit, status),
          `page ${page}×${limit} ${status ?? 'all'}`,
        );
      }
    }
  }

  it('agree with a count and an OFFSET query after inserts', async () => {
    await assertAgrees();
    assert.equal(await chargeTotal(knex, merchantId), 300);
  });

  it('agree after status changes, in one transaction and across many rows, and after deletes', async () => {
    await knex('charges').where({ merchant_id: merchantId }).whereRaw('amount % 3 = 0').update({ status: 'PAID' });
    await knex.transaction(async (trx) => {
      await trx('charges')
        .where({ merchant_id: merchantId, status: 'PAID' })
        .whereRaw('amount % 2 = 0')
        .update({ status: 'REFUNDED' });
      await trx('charges').where({ merchant_id: merchantId }).whereRaw('amount % 7 = 0').update({ status: 'CANCELED' });
    });
    // A rolled-back change leaves the counts as they were.
    await assert.rejects(
      knex.transaction(async (trx) => {
        await trx('charges').where({ merchant_id: merchantId }).update({ status: 'FAILED' });
        throw new Error('roll back');
      }),
    );
    await knex('charges').where({ merchant_id: merchantId }).whereRaw('amount % 11 = 0').delete();
    await assertAgrees();
  });

  it('agree under concurrent inserts and status changes for one merchant', async () => {
    await createConcurrently(knex, merchantId, 500);
    await assertAgrees();
  });

  it('agree when filtered by type, with and without a status, read in one turn with unfiltered pages', async () => {
    const dueDate = { due_date: '2030-01-10', validity_after_due: 30 };
    const rules = JSON.stringify({ dueDate: '2030-01-10', validityAfterDue: 30 });
    await knex('charges')
      .where({ merchant_id: merchantId })
      .whereRaw('amount % 5 = 1')
      .update({ type: 'DUE_DATE', ...dueDate, due_rules: rules });
    // A RECURRING charge is a subscription's cycle (charges_subscription_check).
    const subscriptionId = newId('sub');
    await knex('subscriptions').insert({
      id: subscriptionId,
      merchant_id: merchantId,
      payer_name: 'Bruno Pagador',
      payer_document: '52998224725',
      periodicity: 'MONTHLY',
      amount: 1_990,
      first_date: '2030-01-10',
      retry_policy: 'NONE',
      description: 'list counts',
    });
    await knex('charges').where({ merchant_id: merchantId }).whereRaw('amount % 13 = 2').update({
      type: 'RECURRING',
      due_date: null,
      validity_after_due: null,
      due_rules: null,
      subscription_id: subscriptionId,
      subscription_cycle: 1,
    });
    const read = listPageReader(knex);
    const asked: PageQuery[] = [];
    for (const type of [undefined, ...CHARGE_TYPES]) {
      for (const status of [undefined, 'PAID', 'CANCELED'] as const) {
        for (const [page, limit] of [
          [1, 20],
          [2, 7],
          [4, 20],
          [40, 20],
        ] as const) {
          asked.push({ merchantId, status, type, page, limit });
        }
      }
    }
    const answers = await Promise.all(asked.map((q) => read(q)));
    for (const [i, q] of asked.entries()) {
      const label = `page ${q.page}×${q.limit} ${q.type ?? 'any type'} ${q.status ?? 'all'}`;
      assert.deepEqual(
        answers[i]?.rows.map((r) => r.id),
        await naivePage(knex, merchantId, q.page, q.limit, q.status, q.type),
        label,
      );
      assert.equal(answers[i]?.total, await naiveTotal(knex, merchantId, q.status, q.type), `total of ${label}`);
      for (const r of answers[i]?.rows ?? []) if (q.type) assert.equal(r.type, q.type, label);
    }
    assert.ok((await naiveTotal(knex, merchantId, undefined, 'DUE_DATE')) > 20, 'the due-date filter spans pages');
  });
});

describe('charge list: deep pages start at the hour of their first charge', () => {
  let knex: Knex;
  let merchantId: string;
  const N = 2_500;

  before(async () => {
    knex = (await getTestDb()).knex;
    merchantId = (await createMerchantFixture(knex, { booksOutsideTheDomain: true })).id;
    // Ten seconds apart over seven hours, pairs sharing one created_at, and every 360th exactly on
    // an hour's boundary (the boundary belongs to the hour it starts). The paid ones are settled:
    // a paid charge owing its settlement would have the charge reconcilers of later suites start
    // a workflow for it, on a charge this suite made by hand.
    await knex.raw(
      `insert into charges (id, merchant_id, amount, description, status, expires_in, expires_at, txid, created_at, settled_at)
       select id, merchant_id, amount, description, status, expires_in, expires_at, txid, created_at,
              case when status = 'PAID' then created_at end
       from (select 'ch_deep_' || lpad(g::text, 5, '0') || '_' || ? as id, ?::text as merchant_id, 100 + g as amount,
              'c' as description, case when g % 3 = 0 then 'PAID' else 'CANCELED' end as status, 3600 as expires_in,
              now() + interval '1 hour' as expires_at, null as txid,
              date_trunc('hour', now(), 'UTC') - make_interval(secs => (g / 2) * 20) as created_at
             from generate_series(1, ?::int) g) c`,
      [crypto.randomBytes(3).toString('hex'), merchantId, N],
    );
  });

  async function assertDeepAgrees(): Promise<void> {
    const total = await naiveTotal(knex, merchantId);
    const pages: Array<[number, number]> = [
      [DEEP_PAGE_OFFSET / 20, 20], // the last shallow page
      [DEEP_PAGE_OFFSET / 20 + 1, 20], // the first deep one
      [DEEP_PAGE_OFFSET / 20 + 2, 20],
      [Math.floor(DEEP_PAGE_OFFSET / 7) + 1, 7],
      [60, 20],
      [93, 20],
      [Math.ceil(total / 20), 20], // the last page, partial
      [Math.ceil(total / 20) + 1, 20], // past the end
      [Math.ceil(total / 100), 100],
      [1_000, 20],
    ];
    for (const status of [undefined, 'PAID', 'CANCELED', 'REFUNDED'] as const) {
      assert.equal(
        await chargeTotal(knex, merchantId, status),
        await naiveTotal(knex, merchantId, status),
        `total for ${status ?? 'all'}`,
      );
      for (const [page, limit] of pages) {
        const got = (await pageOfCharges(knex, merchantId, { page, limit, status })).map((r) => r.id);
        assert.deepEqual(
          got,
          await naivePage(knex, merchantId, page, limit, status),
          `page ${page}×${limit} ${status ?? 'all'}`,
        );
      }
    }
  }

  it('agree with an OFFSET query, across hour boundaries, ties and the end of the list', async () => {
    await assertDeepAgrees();
    assert.ok((await pageOfCharges(knex, merchantId, { page: DEEP_PAGE_OFFSET / 20 + 1, limit: 20 })).length === 20);
  });

  it('agree after old charges change status, move in time, are deleted, or arrive back-dated', async () => {
    await knex('charges').where({ merchant_id: merchantId }).whereRaw('amount % 5 = 0').update({ status: 'REFUNDED' });
    await knex('charges')
      .where({ merchant_id: merchantId })
      .whereRaw('amount % 13 = 0')
      .update({ created_at: knex.raw(`created_at - interval '3 hours'`) });
    await knex('charges').where({ merchant_id: merchantId }).whereRaw('amount % 17 = 0').delete();
    await knex('charges').insert(
      Array.from({ length: 30 }, (_, i) => ({
        id: newId('ch'),
        merchant_id: merchantId,
        amount: 7_000 + i,
        description: 'back-dated',
        status: 'PAID',
        expires_in: 3600,
        expires_at: knex.raw(`now() + interval '1 hour'`),
        created_at: knex.raw(`now() - make_interval(secs => ?)`, [3_600 * 2 + i * 97]),
      })),
    );
    // A rolled-back change leaves the hour counts as they were.
    await assert.rejects(
      knex.transaction(async (trx) => {
        await trx('charges').where({ merchant_id: merchantId }).update({ status: 'FAILED' });
        throw new Error('roll back');
      }),
    );
    await assertDeepAgrees();
  });

  it('agree under concurrent inserts and status changes', async () => {
    await createConcurrently(knex, merchantId, 9_000);
    await assertDeepAgrees();
  });

  it('agree when pages of two merchants, every kind and some twice, are read in one turn (shared statements)', async () => {
    const other = (await createMerchantFixture(knex, { booksOutsideTheDomain: true })).id;
    await knex.raw(
      `insert into charges (id, merchant_id, amount, description, status, expires_in, expires_at, txid, created_at)
       select 'ch_two_' || lpad(g::text, 5, '0') || '_' || ?, ?, 100 + g, 'c',
              case when g % 4 = 0 then 'PAID' else 'CANCELED' end, 3600, now() + interval '1 hour',
              null, now() - make_interval(secs => g * 7)
       from generate_series(1, 1300) g`,
      [crypto.randomBytes(3).toString('hex'), other],
    );
    const read = listPageReader(knex);
    const asked: PageQuery[] = [];
    for (const m of [merchantId, other]) {
      for (const status of [undefined, 'PAID', 'CANCELED', 'REFUNDED'] as const) {
        for (const [page, limit] of [
          [1, 20],
          [3, 7],
          [DEEP_PAGE_OFFSET / 20 + 1, 20],
          [62, 20],
          [200, 20],
        ] as const) {
          asked.push({ merchantId: m, status, page, limit });
        }
      }
    }
    asked.push(...asked.slice(0, 6), ...asked.slice(-6));
    // Asked in one turn: each kind of page shares a statement across merchants and statuses.
    const answers = await Promise.all(asked.map((q) => read(q)));
    for (const [i, q] of asked.entries()) {
      const label = `${q.merchantId === other ? 'other' : 'first'} page ${q.page}×${q.limit} ${q.status ?? 'all'}`;
      const got = answers[i];
      assert.ok(got, label);
      assert.deepEqual(
        got.rows.map((r) => r.id),
        await naivePage(knex, q.merchantId, q.page, q.limit, q.status),
        label,
      );
      assert.equal(got.total, await naiveTotal(knex, q.merchantId, q.status), `total of ${label}`);
    }
  });
});

describe('charge prerequisites cache', function () {
  this.timeout(120_000);
  let s: ChargesStack;

  before(async () => {
    s = await chargesStack();
  });

  it('a PIX key deactivated straight in the database refuses the next creations, and reactivated allows them', async () => {
    const m = await readyMerchant(s.api);
    const body = { amount: 1000, description: 'cached prerequisites' };
    const create = () => s.api.request('POST', '/v1/charges', { token: m.token, body });
    assert.equal((await create()).status, 201);
    assert.equal((await create()).status, 201);

    await s.api.knex('pix_keys').where({ merchant_id: m.merchantId }).update({ status: 'INACTIVE' });
    // No request waited for the notification: poll, bounded, for the refusal.
    const refused = await eventually(async () => {
      const res = await create();
      return res.status === 201 ? undefined : res;
    }, 'creation refused after the PIX key was deactivated');
    assert.equal(refused.status, 403);
    assert.match((refused.body as { message: string }).message, /no active PIX key/);

    await s.api.knex('pix_keys').where({ merchant_id: m.merchantId }).update({ status: 'ACTIVE' });
    await eventually(async () => ((await create()).status === 201 ? true : undefined), 'creation allowed again');
  });
});
