/**
 * V8 heap settings of the service's processes (docs/performance.md "Memory"). V8 sizes every
 * isolate's heap for speed, and `npm start` has several isolates; these flags keep each heap close
 * to what it really holds, trading a little CPU for memory. `limitHeapGrowth` sets them for every
 * isolate created afterwards; the main isolate's young generation and the V8 pool are fixed when
 * the process starts, so `npm start` also passes them on node's command line (package.json).
 */
import v8 from 'node:v8';

/** Semi-space size, MB, of every thread's isolate without `resourceLimits` (the young generation is 2 ×). */
export const SEMI_SPACE_MB = 1;
/** Semi-space size, MB, of the main isolate: the API's requests allocate there, and 1 MB costs GETs CPU. */
export const MAIN_SEMI_SPACE_MB = 4;
/** Threads of V8's platform pool (`--v8-pool-size`, command line only): more oversubscribe two cores. */
export const V8_POOL_SIZE = 1;
/**
 * Allocation-site pretenuring off (`--no-allocation-site-pretenuring`): under load V8 pretenured the
 * sites every request goes through, and short-lived GETs then filled the old generation
 * (docs/performance.md "Memory").
 */
export const PRETENURING_FLAG = '--no-allocation-site-pretenuring';

/** Old generation limit after a full collection: live size × (1 + this / 100). */
export const HEAP_GROWING_PERCENT = 10;
/** Old generation size, MB, at which an isolate runs its first full collection. */
export const INITIAL_OLD_SPACE_MB = 32;

let applied = false;

/** Applies the flags above to this process; call before any worker thread starts. Idempotent. */
export function limitHeapGrowth(): void {
  if (applied) return;
  applied = true;
  v8.setFlagsFromString(`--max-semi-space-size=${SEMI_SPACE_MB}`);
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  v8.setFlagsFromString(`--initial-old-space-size=${INITIAL_OLD_SPACE_MB}`);
  v8.setFlagsFromString(PRETENURING_FLAG);
}
