import assert from 'node:assert/strict';
import { keyedGroupCommit } from '../../src/lib/group-commit';

// docs/performance.md "One merchant's payouts"
describe('keyedGroupCommit: one batch in flight per key', () => {
  it('one batch in flight per key: later arrivals form the next batch; keys do not wait on each other', async () => {
    const batches: Array<{ key: string; items: number[] }> = [];
    let release: (() => void) | undefined;
    const firstBatchHeld = new Promise<void>((r) => (release = r));
    const submit = keyedGroupCommit<number, number>(async (key, items) => {
      batches.push({ key, items: [...items] });
      if (batches.length === 1) await firstBatchHeld;
      return items.map((n) => n * 10);
    });
    const first = [submit('a', 1), submit('a', 2)];
    await new Promise((r) => setImmediate(r));
    const later = [submit('a', 3), submit('a', 4), submit('b', 5)];
    assert.deepEqual(await later[2], 50); // key b ran while a's first batch was held
    release?.();
    assert.deepEqual(await Promise.all([...first, later[0], later[1]]), [10, 20, 30, 40]);
    assert.deepEqual(batches, [
      { key: 'a', items: [1, 2] },
      { key: 'b', items: [5] },
      { key: 'a', items: [3, 4] },
    ]);
  });

  it('an Error answers its own item only; a failed batch rejects its items and the next batch still runs', async () => {
    let calls = 0;
    const submit = keyedGroupCommit<number, number>(async (_key, items) => {
      calls++;
      if (calls === 2) throw new Error('commit failed');
      return items.map((n) => (n < 0 ? new Error(`refused ${n}`) : n));
    });
    const [ok, refused] = await Promise.allSettled([submit('k', 1), submit('k', -1)]);
    assert.deepEqual(ok, { status: 'fulfilled', value: 1 });
    assert.equal(refused?.status === 'rejected' && (refused.reason as Error).message, 'refused -1');
    await assert.rejects(submit('k', 2), /commit failed/);
    assert.equal(await submit('k', 3), 3);
  });
});
