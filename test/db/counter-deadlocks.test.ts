/**
 * The list counts (`charge_counts`, `charge_hour_counts`, `list_counts`) are kept by statement
 * triggers that upsert one row per shard a statement touched. Two multi-row inserts of one owner
 * that upsert shared shards in different orders deadlock; PostgreSQL then holds both for
 * `deadlock_timeout` (1 s) before it aborts one, and every request waiting behind them stalls
 * (the second-long stall in docs/performance.md "Where a charge's time goes"). The triggers upsert
 * in key order, so concurrent batches never deadlock. Here each session detects deadlocks after
 * 10 ms, so a deadlock would show up as a 40P01 error quickly.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { newId } from '../../src/lib/ids';
import { createMerchantFixture, getTestDb } from '../support/db';

const ROUNDS = 20;
const CONCURRENCY = 8;
/**
 * Batch sizes vary, as the API's per-turn batches do: PostgreSQL's hash aggregate lists the same
 * shards in another order when it sizes its table for another number of rows, and that is what
 * deadlocked before the triggers sorted their upserts.
 */
const sizeOf = (round: number, slot: number): number => 1 + ((round * 7 + slot * 5) % 16);
const TOTAL = Array.from({ length: ROUNDS }, (_, r) =>
  Array.from({ length: CONCURRENCY }, (__, c) => sizeOf(r, c)).reduce((a, b) => a + b, 0),
).reduce((a, b) => a + b, 0);

/** Runs `statement` in CONCURRENCY transactions at once, ROUNDS times; returns the deadlock errors. */
async function concurrently(
  knex: Knex,
  statement: (trx: Knex.Transaction, rows: number) => Promise<unknown>,
): Promise<number> {
  let deadlocks = 0;
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, slot) =>
        knex
          .transaction(async (trx) => {
            await trx.raw(`set local deadlock_timeout = '10ms'`);
            await statement(trx, sizeOf(round, slot));
          })
          .catch((err: unknown) => {
            if ((err as { code?: string }).code === '40P01') deadlocks++;
            else throw err;
          }),
      ),
    );
  }
  return deadlocks;
}

describe('list count triggers under concurrent multi-row inserts', () => {
  let knex: Knex;
  before(async () => {
    knex = (await getTestDb()).knex;
  });

  it('charges of one merchant inserted in batches at once: no deadlock, counts exact', async () => {
    const merchantId = (await createMerchantFixture(knex, { booksOutsideTheDomain: true })).id;
    const deadlocks = await concurrently(knex, (trx, rows) =>
      trx('charges').insert(
        Array.from({ length: rows }, (_, i) => ({
          id: newId('ch'),
          merchant_id: merchantId,
          amount: 100 + i,
          description: 'batch',
          status: 'PENDING',
          expires_in: 3600,
          expires_at: trx.raw(`now() + interval '1 hour'`),
        })),
      ),
    );
    assert.equal(deadlocks, 0);
    const counted = await knex('charge_counts').where({ merchant_id: merchantId }).sum({ n: 'n' }).first();
    const hours = await knex('charge_hour_counts').where({ merchant_id: merchantId }).sum({ n: 'n' }).first();
    assert.equal(Number(counted?.n), TOTAL);
    assert.equal(Number(hours?.n), TOTAL);
  });

  it('deliveries of one webhook inserted in batches at once: no deadlock, count exact', async () => {
    const merchantId = (await createMerchantFixture(knex, { booksOutsideTheDomain: true })).id;
    // No foreign key to webhooks (a deleted webhook's history stays readable): an id is enough.
    const webhookId = newId('wh');
    // One event per delivery (a webhook gets one delivery per event), all made first.
    const tag = crypto.randomBytes(4).toString('hex');
    const events = (await knex.raw(
      `insert into events (id, merchant_id, type, data, reference)
       select 'evt_dl_' || ? || '_' || g, ?, 'charge.paid', '{}', 'dl_' || ? || '_' || g
       from generate_series(1, ?) g returning id`,
      [tag, merchantId, tag, TOTAL],
    )) as { rows: Array<{ id: string }> };
    const eventIds = events.rows.map((r) => r.id);
    const deadlocks = await concurrently(knex, (trx, rows) =>
      trx('webhook_deliveries').insert(
        eventIds
          .splice(0, rows)
          .map((eventId) => ({ id: newId('whd'), webhook_id: webhookId, merchant_id: merchantId, event_id: eventId })),
      ),
    );
    assert.equal(deadlocks, 0);
    const counted = await knex('list_counts')
      .where({ list: 'webhook_deliveries', owner_id: webhookId })
      .sum({ n: 'n' });
    assert.equal(Number(counted[0]?.n), TOTAL);
  });
});
