/**
 * Public ids: `<prefix>_<26-char ULID>`. ULIDs sort by creation time, so ids double as a stable
 * tie-breaker for "newest first" lists, and the prefix tells an operator what an id names.
 *
 * The random part comes from the OS's CSPRNG as ulid's default does, but read 4 KiB at a time:
 * the default asks the OS once per character (16 calls per id), which showed in the profile of
 * charge creation (docs/performance.md "Where a charge's time goes").
 */
import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

const pool = new Uint32Array(1024);
let next = pool.length;

/** A uniform number in [0, 1) from the pooled random words. */
function pooledRandom(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 0x1_0000_0000;
}

const nextUlid = monotonicFactory(pooledRandom);

export function newId(prefix: string): string {
  return `${prefix}_${nextUlid()}`;
}
