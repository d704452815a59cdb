/**
 * turnBatcher (docs/performance.md "Where a charge's time goes"): the calls of one event-loop turn make one
 * batch, each caller gets its own answer (or its own error), and a later turn makes a new batch.
 */
import assert from 'node:assert/strict';
import { turnBatcher } from '../../src/lib/batcher';

describe('turnBatcher', () => {
  it('sends the calls of one turn as one batch and answers each caller with its own result', async () => {
    const batches: number[][] = [];
    const double = turnBatcher<number, number>(async (keys) => {
      batches.push([...keys]);
      return keys.map((k) => k * 2);
    });
    // Calls from separate callbacks of the same turn (as requests arriving together are) join one batch.
    const fromCallbacks = await new Promise<Promise<number>[]>((resolve) => {
      const calls: Promise<number>[] = [];
      let pending = 3;
      for (const k of [1, 2, 3]) {
        setImmediate(() => {
          calls.push(double(k));
          if (--pending === 0) resolve(calls);
        });
      }
    });
    assert.deepEqual(await Promise.all(fromCallbacks), [2, 4, 6]);
    assert.equal(await double(10), 20);
    assert.deepEqual(batches, [[1, 2, 3], [10]]);
  });

  it('fails only the callers whose keys the batch answers with an error', async () => {
    const check = turnBatcher<number, number>(async (keys) =>
      keys.map((k) => (k < 0 ? new Error(`negative ${k}`) : k)),
    );
    const [a, b, c] = await Promise.allSettled([check(1), check(-2), check(3)]);
    assert.deepEqual(a, { status: 'fulfilled', value: 1 });
    assert.equal(b?.status, 'rejected');
    assert.match(String(b?.status === 'rejected' ? b.reason : ''), /negative -2/);
    assert.deepEqual(c, { status: 'fulfilled', value: 3 });
  });
});
