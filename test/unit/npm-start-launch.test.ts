/**
 * `npm start`'s launch line (package.json) carries the service's memory settings
 * (docs/performance.md "Memory"), and bench/external.ts starts the service from that same line.
 */
import assert from 'node:assert/strict';
import { npmStartLaunch } from '../../bench/external';
import { INITIAL_OLD_SPACE_MB, MAIN_SEMI_SPACE_MB, PRETENURING_FLAG, V8_POOL_SIZE } from '../../src/process/heap';

describe('npm start launch line', () => {
  it('runs node on src/cli/start.ts with the main isolate heap flags, V8 pool size, pretenuring flag of src/process/heap.ts and the malloc settings', () => {
    const launch = npmStartLaunch();
    // The main isolate's sizes are fixed when node starts.
    assert.ok(launch.nodeOptions.includes(`--max-semi-space-size=${MAIN_SEMI_SPACE_MB}`));
    assert.ok(launch.nodeOptions.includes(`--initial-old-space-size=${INITIAL_OLD_SPACE_MB}`));
    assert.ok(launch.nodeOptions.includes(`--v8-pool-size=${V8_POOL_SIZE}`));
    assert.ok(launch.nodeOptions.includes(PRETENURING_FLAG));
    assert.deepEqual(launch.nodeOptions.slice(-2), ['--require', 'tsx/cjs']);
    assert.equal(launch.env.MALLOC_ARENA_MAX, '2');
    assert.equal(launch.env.MALLOC_MMAP_THRESHOLD_, '131072');
  });
});
