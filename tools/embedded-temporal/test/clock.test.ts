import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Clock } from '../src/clock';
import { silentLogger } from '../src/logger';
import { Journal } from '../src/persistence/journal';
import { Store } from '../src/store';
import { waitFor } from './support';

describe('embedded-temporal: clock', () => {
  it('follows the wall clock while locked, and jumps to the next timer once unlocked', async () => {
    const clock = new Clock({ timeSkipping: true, startLocked: true });
    try {
      const start = clock.now();
      let fired = 0;
      clock.schedule(3_600_000, () => fired++);
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(fired, 0, 'locked: no jump');
      assert.ok(clock.now() - start < 1000);
      clock.unlockExternal();
      await waitFor(() => fired === 1, 2000, 'timer fired');
      assert.ok(clock.now() - start >= 3_600_000);
    } finally {
      clock.close();
    }
  });

  it('does not jump while an internal lock is held (work in flight), even when externally unlocked', async () => {
    const clock = new Clock({ timeSkipping: true, startLocked: false });
    try {
      clock.lock();
      let fired = false;
      clock.schedule(60_000, () => (fired = true));
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(fired, false);
      clock.unlock();
      await waitFor(() => fired, 2000, 'timer fired after unlock');
    } finally {
      clock.close();
    }
  });

  it('fires timers in (time, schedule) order when many are cancelled at random, and keeps none pending', async () => {
    const clock = new Clock({ timeSkipping: true, startLocked: true });
    try {
      // A fixed pseudo-random sequence (no Math.random): times in 0..99 s with ties, half cancelled.
      let x = 12345;
      const rand = (n: number): number => {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        return x % n;
      };
      const fired: number[] = [];
      const expected: { at: number; i: number }[] = [];
      const handles = [];
      for (let i = 0; i < 500; i++) {
        const at = rand(100) * 1000;
        handles.push({ i, at, h: clock.schedule(at, () => fired.push(i)) });
      }
      for (const t of handles) {
        if (rand(2) === 0) t.h.cancel();
        else expected.push({ at: t.at, i: t.i });
      }
      handles[0].h.cancel(); // cancelling twice is harmless
      expected.sort((a, b) => a.at - b.at || a.i - b.i);
      assert.equal(clock.state().pendingTimers, expected.length);
      clock.unlockExternal();
      await waitFor(
        () => fired.length === expected.length && clock.state().pendingTimers === 0,
        5000,
        'all live timers fired',
      );
      assert.deepEqual(
        fired,
        expected.map((e) => e.i),
      );
      for (const t of handles) t.h.cancel(); // cancelling fired timers is harmless too
      assert.equal(clock.state().pendingTimers, 0);
    } finally {
      clock.close();
    }
  });

  it('treats more unlocks than locks as unlocked, and a cancelled timer never fires', async () => {
    const clock = new Clock({ timeSkipping: true, startLocked: true });
    try {
      clock.unlockExternal();
      clock.unlockExternal();
      let a = false;
      let b = false;
      const h = clock.schedule(1000, () => (a = true));
      clock.schedule(2000, () => (b = true));
      h.cancel();
      await waitFor(() => b, 2000, 'second timer');
      assert.equal(a, false);
      assert.deepEqual(clock.state().internalLocks, 0);
    } finally {
      clock.close();
    }
  });

  it('a sleep unlock (UnlockTimeSkippingWithSleep) offsets a lock of work in flight; surplus plain unlocks do not', async () => {
    const clock = new Clock({ timeSkipping: true, startLocked: true });
    try {
      clock.unlockExternal(); // result() in progress
      clock.unlockExternal(); // a second concurrent result(): surplus
      clock.lock(); // an activity runs
      let fired = false;
      clock.schedule(86_400_000, () => (fired = true));
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(fired, false, 'surplus external unlocks never cancel a lock in flight');
      clock.unlockForSleep(); // the activity calls env.sleep
      await waitFor(() => fired, 2000, 'timer fired while the activity sleeps');
      clock.relockAfterSleep();
      let later = false;
      clock.schedule(86_400_000, () => (later = true));
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(later, false, 'locked again once the sleep ended');
      assert.deepEqual(clock.state().sleepUnlocks, 0);
    } finally {
      clock.close();
    }
  });

  it('in real-time mode never skips', async () => {
    const clock = new Clock({ timeSkipping: false, startLocked: false });
    try {
      let fired = false;
      clock.schedule(60_000, () => (fired = true));
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(fired, false);
      assert.ok(Math.abs(clock.now() - Date.now()) < 50);
    } finally {
      clock.close();
    }
  });
});

describe('embedded-temporal: retention', () => {
  /** Starts a run of workflow id `workflowId` straight on the store (no worker: it stays open until terminated). */
  const starter = (store: Store) => (workflowId: string) =>
    store.startWorkflow({
      params: {
        namespace: 'default',
        workflowId,
        workflowType: 't',
        taskQueue: 'q',
        executionTimeoutMs: 0,
        runTimeoutMs: 0,
        taskTimeoutMs: 10_000,
        identity: '',
        requestId: '',
        backoffMs: 0,
      },
      reusePolicy: 0,
      conflictPolicy: 0,
    }).run;

  it('purges closed runs older than the namespace retention, keeps open ones, also within a chain of runs', async () => {
    const clock = new Clock({ timeSkipping: true, startLocked: true });
    try {
      const store = new Store(clock, silentLogger);
      const start = starter(store);
      const closed = start('a');
      const open = start('b');
      closed.terminate('done', null, '');
      // A chain of two runs of one workflow id (a chain of one is kept as the run itself).
      const firstC = start('c');
      firstC.terminate('done', null, '');
      const secondC = start('c');
      assert.equal(store.findRun('default', 'c', ''), secondC);
      assert.equal(store.findRun('default', 'c', firstC.runId), firstC);
      assert.equal(store.purgeClosed(), 0);
      clock.skipTo(clock.now() + 4 * 24 * 3600 * 1000);
      assert.equal(store.purgeClosed(), 2);
      assert.equal(store.findRun('default', 'a', ''), undefined);
      assert.equal(store.findRun('default', 'b', ''), open);
      assert.equal(store.findRun('default', 'c', ''), secondC);
      assert.equal(store.findRun('default', 'c', firstC.runId), undefined);
      open.terminate('done', null, '');
      secondC.terminate('done', null, '');
      clock.skipTo(clock.now() + 4 * 24 * 3600 * 1000);
      assert.equal(store.purgeClosed(), 2);
      assert.equal(store.findRun('default', 'c', ''), undefined);
      // The id is free again: a new chain starts.
      const thirdC = start('c');
      assert.equal(store.findRun('default', 'c', ''), thirdC);
      thirdC.terminate('done', null, '');
    } finally {
      clock.close();
    }
  });

  it('durable: a closed run parked for its retention is purged at its end like a live one', async () => {
    const clock = new Clock({ timeSkipping: true, startLocked: true });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsrv-retention-'));
    const { journal } = Journal.open(path.join(dir, 'j.db'), silentLogger);
    try {
      const store = new Store(clock, silentLogger);
      store.journal = journal;
      store.parkIdleAfterMs = 1;
      const start = starter(store);
      const closed = start('a');
      const open = start('b');
      closed.terminate('done', null, '');
      await journal.barrier();
      await new Promise((r) => setImmediate(r)); // the commit's positions are recorded after it
      store.parkIdle();
      store.parkIdle();
      assert.equal(store.isParked(closed.runId), true);
      assert.equal(store.parkedIn(closed.runId), 'journal');
      assert.equal(store.parkedClosedCount, 1);
      // Visibility sees it closed without waking it.
      assert.deepEqual(
        store.list('default', "ExecutionStatus = 'Terminated'").map((r) => r.runId),
        [closed.runId],
      );
      assert.equal(store.isParked(closed.runId), true);
      assert.equal(store.purgeClosed(), 0);
      clock.skipTo(clock.now() + 4 * 24 * 3600 * 1000);
      assert.equal(store.purgeClosed(), 1);
      assert.equal(store.findRun('default', 'a', ''), undefined);
      assert.equal(store.findRun('default', 'b', ''), open);
      open.terminate('done', null, '');
    } finally {
      await journal.close();
      clock.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
