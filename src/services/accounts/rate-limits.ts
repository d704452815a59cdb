/**
 * Fixed-window counters shared by every API process (docs/api.md "Rate limits"), built on
 * rate-limiter-flexible's PostgreSQL store: one atomic upsert per counted event in the
 * `rate_limits` table, so N processes behind a load balancer enforce one limit, not N.
 *
 * Two things keep it cheap and available:
 * - once a key is over its limit, this process remembers that in memory until the window ends
 *   (the library's in-memory block), so a flood from one key costs no further database work here;
 * - if PostgreSQL cannot be reached, an in-memory limiter with the same numbers takes over (the
 *   library's insurance limiter): limits then hold per process instead of failing every request;
 * - with `lease`, a process takes points from the shared counter in chunks and hands them out from
 *   memory until the chunk or the window runs out (docs/performance.md "Where a charge's time goes"): one
 *   upsert per chunk instead of one per request. Every point handed out was counted in the shared
 *   table first, so N processes still admit at most `points` per window between them; what a
 *   process holds unused when the window ends is lost, so a client near its limit may be refused
 *   up to `lease − 1` requests per process early (plus a quarter lease when the next chunk was
 *   already taken ahead, see `refillAt`), never admitted late. When a chunk no longer fits,
 *   the process takes exactly what is left.
 */
import type { Knex } from 'knex';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';

export type LimitOutcome = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

export interface Limiter {
  /** Counts `points` against `key`; refused once the window's allowance is spent. */
  consume(key: string, points?: number): Promise<LimitOutcome>;
  /**
   * Counts one point against `key` from a lease this process holds, synchronously; null when only
   * `consume` can decide (no lease, or a limiter without leases). Same counting as `consume`: the
   * hot path avoids its promises (docs/performance.md "Where a read's time goes").
   */
  consumeHeld(key: string): LimitOutcome | null;
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
  /** Points taken from the shared counter at a time (default 1: every event is one upsert). */
  lease?: number;
}

/** A chunk of points this process took from the shared counter, valid until its window ends. */
interface Lease {
  left: number;
  until: number;
  /** The chunk taken ahead while this one runs low. */
  next?: Lease;
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
  return new SharedLimiter(knex, opts);
}

/** The shared counter, with its in-memory leases when `lease` > 1 (see the top of this file). */
class SharedLimiter implements Limiter {
  private readonly store: RateLimiterPostgres;
  private readonly chunk: number;
  private readonly leases = new Map<string, Lease>();
  /** One chunk request per key at a time: concurrent requests wait for it instead of each taking a chunk. */
  private readonly taking = new Map<string, Promise<void>>();
  /**
   * When a lease is down to this many points, the next chunk is taken in the background
   * (docs/performance.md "Where a read's time goes"), so that requests do not all wait on the upsert's
   * round trip each time a chunk runs out. It is kept beside the current lease, never merged
   * into it: a chunk of a later window must not be spent in an earlier one, nor the reverse.
   */
  private readonly refillAt: number;

  constructor(
    knex: Knex,
    private readonly opts: LimiterOptions,
  ) {
    // The allowance is part of the key: processes configured alike share counts, while a limiter
    // with other numbers (a rolling configuration change, a test) does not read them as its own.
    const keyPrefix = `${opts.name}:${opts.points}/${opts.windowSeconds}`;
    const common = { keyPrefix, points: opts.points, duration: opts.windowSeconds };
    this.store = new RateLimiterPostgres({
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
    this.chunk = Math.max(1, Math.min(opts.lease ?? 1, opts.points));
    this.refillAt = Math.floor(this.chunk / 4);
    // Leases of past windows are dropped as the map is used; this bounds it in between.
    setInterval(() => this.sweep(), 10_000).unref();
  }

  async consume(key: string, points = 1): Promise<LimitOutcome> {
    return this.chunk > 1 ? this.leased(key, points) : this.direct(key, points);
  }

  consumeHeld(key: string): LimitOutcome | null {
    return this.chunk > 1 ? this.fromLease(key) : null;
  }

  async reward(key: string, points = 1): Promise<void> {
    await this.store.reward(key, points);
  }

  async reset(key: string): Promise<void> {
    this.leases.delete(key);
    await this.store.delete(key);
  }

  knownBlockedSeconds(key: string): number {
    const ms = (this.store as unknown as InMemoryBlocks).getInMemoryBlockMsBeforeExpire(this.store.getKey(key));
    return ms > 0 ? secondsUntil(ms) : 0;
  }

  private async direct(key: string, points: number): Promise<LimitOutcome> {
    try {
      const res = await this.store.consume(key, points);
      return { allowed: true, remaining: res.remainingPoints };
    } catch (err) {
      // The library rejects with a RateLimiterRes when refused; anything else is a real failure
      // that even the insurance limiter could not absorb.
      if (err instanceof RateLimiterRes) return { allowed: false, retryAfterSeconds: secondsUntil(err.msBeforeNext) };
      throw err;
    }
  }

  /** A chunk just counted in the shared table: the current lease if none is live, else the next one. */
  private hold(key: string, lease: Lease): void {
    const current = live(this.leases.get(key), Date.now());
    if (current && current.left > 0) current.next = lease;
    else this.leases.set(key, lease);
  }

  private async takeChunk(key: string): Promise<LimitOutcome | null> {
    const chunk = this.chunk;
    try {
      const res = await this.store.consume(key, chunk);
      this.hold(key, { left: chunk, until: Date.now() + res.msBeforeNext });
      return null;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      // Refused as a whole chunk: take what was left before it (counted, since the store added
      // the chunk), if anything.
      const left = Math.min(chunk, this.opts.points - (err.consumedPoints - chunk));
      // (A refusal from the in-memory block reports no consumed points: nothing was counted, nothing is left.)
      if (left > 0 && err.consumedPoints > 0) {
        this.hold(key, { left, until: Date.now() + err.msBeforeNext });
        return null;
      }
      return { allowed: false, retryAfterSeconds: secondsUntil(err.msBeforeNext) };
    }
  }

  /** One chunk request per key at a time; whoever needs points meanwhile waits for it. */
  private take(key: string): Promise<LimitOutcome | null> {
    const p = this.takeChunk(key);
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    this.taking.set(key, settled);
    void settled.then(() => {
      if (this.taking.get(key) === settled) this.taking.delete(key);
    });
    return p;
  }

  private fromLease(key: string): LimitOutcome | null {
    const first = this.leases.get(key);
    if (!first) return null;
    const lease = live(first, Date.now());
    if (lease !== first) {
      if (lease) this.leases.set(key, lease);
      else this.leases.delete(key);
    }
    if (!lease) return null;
    lease.left--;
    if (lease.left <= this.refillAt && !lease.next && !this.taking.has(key)) {
      // A failure here is met again, and reported, by the request that needs the points.
      this.take(key).catch(() => undefined);
    }
    return { allowed: true, remaining: lease.left };
  }

  private async leased(key: string, points: number): Promise<LimitOutcome> {
    if (points !== 1) return this.direct(key, points);
    for (;;) {
      const held = this.fromLease(key);
      if (held) return held;
      const pending = this.taking.get(key);
      if (pending) {
        await pending;
        continue;
      }
      const refused = await this.take(key);
      if (refused) return refused;
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, l] of this.leases) {
      const current = live(l, now);
      if (!current) this.leases.delete(k);
      else if (current !== l) this.leases.set(k, current);
    }
  }
}

/** The first lease of the chain that is in its window and has points left. */
function live(lease: Lease | undefined, now: number): Lease | undefined {
  let l = lease;
  while (l && (l.left <= 0 || now >= l.until)) l = l.next;
  return l;
}
