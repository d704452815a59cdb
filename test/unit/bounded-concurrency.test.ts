import assert from 'node:assert/strict';
import { BoundedConcurrency, QueueFullError } from '../../src/lib/bounded-concurrency';

/** A task that finishes when the test says so. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('BoundedConcurrency', () => {
  it('runs at most `limit` tasks at once, queues up to `maxQueued`, refuses the rest at once', async () => {
    const pool = new BoundedConcurrency(2, 1);
    let running = 0;
    let peak = 0;
    const gates = [gate(), gate(), gate()];
    const task = (g: { promise: Promise<void> }) => async () => {
      running += 1;
      peak = Math.max(peak, running);
      await g.promise;
      running -= 1;
      return 'done';
    };
    const results = gates.map((g) => pool.run(task(g)));
    await assert.rejects(
      pool.run(async () => 'never'),
      QueueFullError,
    );
    await new Promise((r) => setImmediate(r));
    assert.equal(running, 2, 'the third waits');
    gates.forEach((g) => g.open());
    assert.deepEqual(await Promise.all(results), ['done', 'done', 'done']);
    assert.equal(peak, 2);
    // Slots are released, also after a failing task.
    await assert.rejects(
      pool.run(async () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await pool.run(async () => 'again'), 'again');
  });
});
