/**
 * Fixed-window counters shared by every API process (README "Rate limits"), built on
 * rate-limiter-flexible's PostgreSQL store: one atomic upsert per counted event in the
 * `rate_limits` table, so N processes behind a load balancer enforce one limit, not N.
 *
 * Two things keep it cheap and available:
 * - once a key is over its limit, this process remembers that in memory until the window ends
 *   (the library's in-memory block), so a flood from one key costs no further database work here;
 * - if PostgreSQL cannot be reached, an in-memory limiter with the same numbers takes over (the
 *   library's insurance limiter): limits then hold per process instead of failing every request.
 */
import type { Knex } from 'knex';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';

export type LimitOutcome = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

export interface Limiter {
  /** Counts `points` against `key`; refused once the window's allowance is spent. */
  consume(key: string, points?: number): Promise<LimitOutcome>;
  /** Gives points back (e.g. a login that turned out to be right). */
  reward(key: string, points?: number): Promise<void>;
  /** Forgets the key's window. */
  reset(key: string): Promise<void>;
  /** Seconds this process already knows `key` stays refused, without asking the database; 0 if none. */
  knownBlockedSeconds(key: string): number;
}

export interface LimiterOptions {
  /** Distinguishes the limiters sharing the table (the key prefix). */
  name: string;
  /** Allowance per window. */
  points: number;
  /** Window length in seconds (may be fractional); the window starts at a key's first event. */
  windowSeconds: number;
}

export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * The store's own record of keys it refuses from memory (what `consume` checks first). Public in
 * the library's JavaScript, missing from its type declarations.
 */
interface InMemoryBlocks {
  getInMemoryBlockMsBeforeExpire(rlKey: string): number;
}

const secondsUntil = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

export function createLimiter(knex: Knex, opts: LimiterOptions): Limiter {
  // The allowance is part of the key: processes configured alike share counts, while a limiter
  // with other numbers (a rolling configuration change, a test) does not read them as its own.
  const keyPrefix = `${opts.name}:${opts.points}/${opts.windowSeconds}`;
  const common = { keyPrefix, points: opts.points, duration: opts.windowSeconds };
  const store = new RateLimiterPostgres({
    ...common,
    storeClient: knex,
    storeType: 'knex',
    tableName: RATE_LIMIT_TABLE,
    // Created by the migrations, not by the library at run time.
    tableCreated: true,
    // Remember a spent key in memory for the rest of its window (no further upserts for it).
    inMemoryBlockOnConsumed: opts.points,
    insuranceLimiter: new RateLimiterMemory(common),
  });

  return {
    async consume(key, points = 1) {
      try {
        const res = await store.consume(key, points);
        return { allowed: true, remaining: res.remainingPoints };
      } catch (err) {
        // The library rejects with a RateLimiterRes when refused; anything else is a real failure
        // that even the insurance limiter could not absorb.
        if (err instanceof RateLimiterRes) return { allowed: false, retryAfterSeconds: secondsUntil(err.msBeforeNext) };
        throw err;
      }
    },
    async reward(key, points = 1) {
      await store.reward(key, points);
    },
    async reset(key) {
      await store.delete(key);
    },
    knownBlockedSeconds(key) {
      const ms = (store as unknown as InMemoryBlocks).getInMemoryBlockMsBeforeExpire(store.getKey(key));
      return ms > 0 ? secondsUntil(ms) : 0;
    },
  };
}
