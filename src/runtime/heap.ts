/**
 * V8 heap settings of the service's processes (docs/performance.md "Memory").
 *
 * Every isolate of `npm start` (the API's main thread, the embedded Temporal server's thread, the
 * SDK's workflow thread, the charge workflow client, the simulator, the QR renderer) has a heap
 * of its own, and under load V8 sizes each of them for speed, not for memory: the young generation
 * grows to 2 × 16 MB semi-spaces (34 MB per isolate in the census), and after each full collection the old generation may grow up to
 * four times its live size before the next one. Most of what an isolate held at the peak was
 * garbage (the main thread's 300 MB heap was 63 MB live after a full GC). These flags keep each heap
 * close to what it really holds:
 *
 *   - `--max-semi-space-size=1`: a young generation of 2 × 1 MB per thread's isolate; the cost is
 *     more scavenges, each shorter (CPU per charge did not move measurably against 2 MB or 16 MB).
 *     The main isolate keeps 2 × 4 MB (MAIN_SEMI_SPACE_MB).
 *   - `--heap-growing-percent=10`: the old generation's next limit is 1.1 × its live size (V8
 *     otherwise picks 1.1–4 × from its own speed heuristics, up to 4 × under allocation
 *     pressure), with V8's own minimum step of a few MB above that.
 *
 * `v8.setFlagsFromString` takes effect at once for the heap growth of every isolate (V8 reads it
 * at each full collection), and for the young generation of every isolate created afterwards (the
 * threads that have no `resourceLimits` of their own: the embedded Temporal server's and the
 * SDK's workflow thread). The main isolate's young generation is sized when the process starts, so
 * `npm start` also passes `--max-semi-space-size` on node's command line (package.json): 4 MB for
 * the main isolate (MAIN_SEMI_SPACE_MB), 1 MB for every thread created after `limitHeapGrowth`.
 */
import v8 from 'node:v8';

/** Semi-space size, MB, of every thread's isolate without `resourceLimits` (the young generation is 2 ×). */
export const SEMI_SPACE_MB = 1;
/**
 * Semi-space size, MB, of the main isolate (package.json's `start` passes it to node): the API's
 * requests allocate there at thousands per second, and with 1 MB semi-spaces the GETs cost twice
 * the CPU per request (in-flight request objects promoted, more scavenges and full collections);
 * 4 MB measured as cheap per GET as V8's default 16 MB.
 */
export const MAIN_SEMI_SPACE_MB = 4;
/**
 * Threads of V8's platform pool (package.json's `start` passes `--v8-pool-size`): every isolate's
 * background GC work (parallel scavenges, concurrent marking and sweeping) runs there. Node's
 * default of 4 on this 2-core machine oversubscribes the cores: in alternated POST runs
 * (2026-11-25, quiet) that background CPU was 0.53–0.76 ms per charge with 1 thread against
 * 1.01–1.03 ms with 4, and the whole process 1.6–2.1 against 2.2 ms
 * (docs/performance.md "Memory"). Node's option, so it can only be set on the command line.
 */
export const V8_POOL_SIZE = 1;
/**
 * V8's allocation-site pretenuring is off in every isolate (`--no-allocation-site-pretenuring`,
 * on `npm start`'s command line and by `limitHeapGrowth`). V8 watches each allocation site and,
 * when most of what one allocates survives scavenges, allocates there straight into the old
 * generation from then on; it does not go back. Under the charge load a request lives ≈ 50 ms,
 * several scavenges, so the sites every request goes through (Koa's context, the HTTP objects,
 * promises, pg's results) were pretenured, and every later GET, which lives a few ms, allocated
 * its garbage in the old generation: four full collections a second instead of one, scavenges
 * twice as long, and V8's helper thread five times busier (docs/performance.md "Where a charge's time goes",
 * Pretenuring).
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
