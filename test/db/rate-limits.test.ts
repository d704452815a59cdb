/**
 * The shared limiter (src/services/accounts/rate-limits.ts) over the real PostgreSQL store, and its fallback
 * when the database cannot be reached.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import knexFactory from 'knex';
import { eventually } from '../support/charges';
import { getTestDb } from '../support/db';
import { createLimiter } from '../../src/services/accounts/rate-limits';

describe('rate limits (PostgreSQL store)', () => {
  const key = (): string => crypto.randomUUID();

  it('allows `points` per window, then refuses with the seconds left, remembered in memory; reset and reward give allowance back', async () => {
    const { knex } = await getTestDb();
    const limiter = createLimiter(knex, { name: 'test-window', points: 3, windowSeconds: 30 });
    const k = key();
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await limiter.consume(k));
    assert.deepEqual(outcomes.slice(0, 3), [
      { allowed: true, remaining: 2 },
      { allowed: true, remaining: 1 },
      { allowed: true, remaining: 0 },
    ]);
    const refused = outcomes[3];
    assert.ok(refused && !refused.allowed && refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 30);
    assert.ok(limiter.knownBlockedSeconds(k) >= 1);
    assert.equal(limiter.knownBlockedSeconds(key()), 0);

    await limiter.reset(k);
    assert.equal(limiter.knownBlockedSeconds(k), 0);
    assert.deepEqual(await limiter.consume(k), { allowed: true, remaining: 2 });
    await limiter.reward(k);
    assert.deepEqual(await limiter.consume(k), { allowed: true, remaining: 2 });

    // The counter lives in the shared table, under the limiter's name and allowance.
    const row = await knex('rate_limits')
      .where({ key: `test-window:3/30:${k}` })
      .first('points');
    assert.equal(row?.points, 1);
  });

  it('counts concurrent consumers exactly (one atomic upsert each)', async () => {
    const { knex } = await getTestDb();
    const limiter = createLimiter(knex, { name: 'test-concurrent', points: 10, windowSeconds: 30 });
    const k = key();
    const outcomes = await Promise.all(Array.from({ length: 40 }, () => limiter.consume(k)));
    assert.equal(outcomes.filter((o) => o.allowed).length, 10);
  });

  it('keeps limiting in memory when PostgreSQL cannot be reached', async () => {
    const unreachable = knexFactory({
      client: 'pg',
      connection: 'postgres://nobody:nothing@127.0.0.1:1/none',
      pool: { min: 0, max: 1 },
      acquireConnectionTimeout: 5000,
      // The refused connections are the point of the test; keep knex from printing each one.
      log: { warn: () => undefined, error: () => undefined, debug: () => undefined, deprecate: () => undefined },
    });
    try {
      const limiter = createLimiter(unreachable, { name: 'test-insurance', points: 2, windowSeconds: 30 });
      const k = key();
      const outcomes = [await limiter.consume(k), await limiter.consume(k), await limiter.consume(k)];
      assert.deepEqual(
        outcomes.map((o) => o.allowed),
        [true, true, false],
      );
    } finally {
      await unreachable.destroy();
    }
  });
});

describe('rate limits with leases (points taken from the shared counter in chunks)', () => {
  const key = (): string => crypto.randomUUID();

  it('two processes together never admit more than the allowance, and admit all of it', async () => {
    const { knex } = await getTestDb();
    // Two limiters with one configuration stand for two API processes sharing the table.
    const a = createLimiter(knex, { name: 'test-lease', points: 10, windowSeconds: 30, lease: 3 });
    const b = createLimiter(knex, { name: 'test-lease', points: 10, windowSeconds: 30, lease: 3 });
    const k = key();
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).consume(k)));
    assert.equal(outcomes.filter((o) => o.allowed).length, 10);
    const more = await Promise.all([a.consume(k), b.consume(k)]);
    assert.ok(more.every((o) => !o.allowed));
  });

  it('takes points from the shared counter a chunk at a time', async () => {
    const { knex } = await getTestDb();
    const limiter = createLimiter(knex, { name: 'test-lease-cost', points: 100, windowSeconds: 30, lease: 10 });
    const k = key();
    for (let i = 0; i < 25; i++) assert.equal((await limiter.consume(k)).allowed, true);
    // 25 requests, three chunks of ten counted in the table (three upserts).
    const row = await knex('rate_limits')
      .where({ key: `test-lease-cost:100/30:${k}` })
      .first('points');
    assert.equal(row?.points, 30);
  });

  it('takes the next chunk ahead when a lease runs low, so requests do not wait on it, and counts it first', async () => {
    const { knex } = await getTestDb();
    const limiter = createLimiter(knex, { name: 'test-lease-ahead', points: 100, windowSeconds: 30, lease: 8 });
    const k = key();
    const counted = async (): Promise<number | undefined> =>
      (
        (await knex('rate_limits')
          .where({ key: `test-lease-ahead:100/30:${k}` })
          .first('points')) as { points: number } | undefined
      )?.points;
    // Six of the first chunk leave two (a quarter of eight): the second chunk is taken in the background.
    for (let i = 0; i < 6; i++) assert.equal((await limiter.consume(k)).allowed, true);
    await eventually(async () => ((await counted()) === 16 ? true : undefined), 'the chunk taken ahead');
    // The rest of both chunks is handed out from memory, synchronously, without another upsert
    // until the second chunk runs low in turn.
    for (let i = 0; i < 7; i++) assert.equal(limiter.consumeHeld(k)?.allowed, true);
    assert.equal(await counted(), 16);
    assert.equal(limiter.consumeHeld(k)?.allowed, true);
    await eventually(async () => ((await counted()) === 24 ? true : undefined), 'the third chunk taken ahead');
  });
});
