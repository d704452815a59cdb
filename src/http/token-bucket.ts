/**
 * Token buckets, one per credential, held in memory (per process). A bucket starts full with
 * `burst` tokens and refills at `ratePerSecond`; a request takes one token or is refused with the
 * seconds until one is available. State is an LRU so that many distinct credentials cannot grow
 * memory without bound; an evicted bucket simply restarts full, which only ever errs on the
 * permissive side.
 *
 * Written here rather than pulled from a library: the whole algorithm is the dozen lines of
 * `take`, and the maintained libraries model fixed windows rather than a refilling bucket.
 */
import { LRUCache } from 'lru-cache';

interface Bucket {
  tokens: number;
  updatedAt: number; // ms
}

export type TakeResult = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface TokenBucketOptions {
  ratePerSecond: number;
  burst: number;
  /** Upper bound on tracked credentials. */
  maxKeys?: number;
  now?: () => number;
}

export class TokenBuckets {
  private readonly buckets: LRUCache<string, Bucket>;
  private readonly now: () => number;

  constructor(private readonly opts: TokenBucketOptions) {
    this.buckets = new LRUCache<string, Bucket>({ max: opts.maxKeys ?? 100_000 });
    this.now = opts.now ?? Date.now;
  }

  take(key: string): TakeResult {
    const { ratePerSecond, burst } = this.opts;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    const elapsedSeconds = Math.max(0, now - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(burst, bucket.tokens + elapsedSeconds * ratePerSecond);
    bucket.updatedAt = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.buckets.set(key, bucket);
      return { allowed: true };
    }
    this.buckets.set(key, bucket);
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond));
    return { allowed: false, retryAfterSeconds };
  }
}
