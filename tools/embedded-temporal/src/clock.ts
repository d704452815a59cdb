/**
 * Virtual time for the whole server, with the official test server's time-skipping rules:
 *
 * - Every event timestamp and every timer/timeout reads this clock.
 * - Work that is in flight (a workflow task scheduled or running, an activity scheduled or running)
 *   holds an internal lock. Test clients hold external locks (the SDK's time-skipping client
 *   unlocks around `result()`); the server starts with one external lock, as the Java server does
 *   when launched without `--enable-time-skipping`.
 * - While anything holds a lock, or nothing is scheduled, time follows the wall clock.
 *   When no lock is held and a timer is pending, time jumps straight to that timer.
 *
 * External unlocks may outnumber locks (several concurrent `result()` calls); the count then goes
 * below zero and simply means "unlocked" until the matching locks come back. Such surplus never
 * cancels a lock held by work in flight (the Java server keeps one shared count, so there a
 * second concurrent `result()` can let time jump past a running workflow task).
 *
 * `UnlockTimeSkippingWithSleep` (the environment's `sleep`) is different: as in the Java server,
 * its unlock counts against every lock, in flight or external, until its sleep ends. That is what
 * lets an activity call `env.sleep('2 days')` while it runs: its own lock is offset by the
 * sleep's unlock, so workflow timers due meanwhile fire (the timer-reminder test pattern).
 *
 * Node runs all server state changes on one thread, so timer callbacks run synchronously from the
 * pump; the pump itself always runs from a fresh macrotask so that a state change that releases
 * one lock and takes another in the same tick never lets time jump in between.
 */

export interface TimerHandle {
  cancel(): void;
}

/**
 * A pending timer, and its own handle: one object per timer rather than an entry plus a handle
 * closing over it (three more objects), since a parked run keeps its timer for as long as it
 * waits (docs/performance.md "Memory per idle run").
 */
class TimerEntry implements TimerHandle {
  cancelled = false;
  /** Position in the heap, -1 once out of it (fired or cancelled). */
  index = -1;

  constructor(
    private readonly clock: Clock,
    readonly at: number,
    readonly seq: number,
    readonly fn: (arg: unknown) => void,
    /** Passed to `fn`: a callback shared by many timers needs no closure per timer. */
    readonly arg: unknown,
  ) {}

  cancel(): void {
    this.clock.cancel(this);
  }
}

export interface ClockOptions {
  /** false: plain real time (standalone mode); lock/unlock calls become no-ops. */
  timeSkipping: boolean;
  /** Java semantics: started without `--enable-time-skipping`, skipping begins locked. */
  startLocked: boolean;
  onError?: (err: unknown) => void;
}

export class Clock {
  private virtualMs: number;
  private lastWall: number;
  private internalLocks = 0;
  private externalLocks: number;
  /** UnlockTimeSkippingWithSleep calls between their unlock and their wake-up. */
  private sleepUnlocks = 0;
  private seq = 0;
  /** Binary min-heap ordered by (at, seq). */
  private heap: TimerEntry[] = [];
  private live = 0;
  private pumpScheduled = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  /** Wall time the wake timer fires at. */
  private wakeAt = 0;
  private closed = false;

  constructor(private readonly opts: ClockOptions) {
    this.virtualMs = Date.now();
    this.lastWall = this.virtualMs;
    this.externalLocks = opts.startLocked ? 1 : 0;
  }

  get timeSkipping(): boolean {
    return this.opts.timeSkipping;
  }

  /** Current virtual time in ms since the epoch. */
  now(): number {
    this.sync();
    return this.virtualMs;
  }

  lock(): void {
    this.sync();
    this.internalLocks++;
  }

  unlock(): void {
    this.sync();
    if (this.internalLocks > 0) this.internalLocks--;
    this.kick();
  }

  lockExternal(): void {
    this.sync();
    this.externalLocks++;
  }

  unlockExternal(): void {
    this.sync();
    this.externalLocks--;
    this.kick();
  }

  /** The unlock half of UnlockTimeSkippingWithSleep (offsets any lock, see above). */
  unlockForSleep(): void {
    this.sync();
    this.sleepUnlocks++;
    this.kick();
  }

  /** The sleep is over: take back what `unlockForSleep` released. */
  relockAfterSleep(): void {
    this.sync();
    if (this.sleepUnlocks > 0) this.sleepUnlocks--;
  }

  /** Diagnostic view for tests and logs. */
  state(): { internalLocks: number; externalLocks: number; sleepUnlocks: number; pendingTimers: number } {
    return {
      internalLocks: this.internalLocks,
      externalLocks: this.externalLocks,
      sleepUnlocks: this.sleepUnlocks,
      pendingTimers: this.live,
    };
  }

  /** Run fn once virtual time reaches `atMs`. */
  scheduleAt(atMs: number, fn: () => void): TimerHandle {
    return this.scheduleWith(atMs, fn, undefined);
  }

  /**
   * Run `fn(arg)` once virtual time reaches `atMs`. With one `fn` for many timers (a parked run's
   * wake-up), a timer costs no closure and context of its own (docs/performance.md "Memory per idle run").
   */
  scheduleWith<T>(atMs: number, fn: (arg: T) => void, arg: T): TimerHandle {
    this.sync();
    const entry = new TimerEntry(this, atMs, this.seq++, fn as (arg: unknown) => void, arg);
    this.push(entry);
    this.live++;
    this.kick();
    return entry;
  }

  /** TimerEntry.cancel. */
  cancel(entry: TimerEntry): void {
    if (entry.cancelled) return;
    this.sync();
    entry.cancelled = true;
    // Out of the heap at once, not when its time comes: most timers are cancelled (a workflow
    // task's 10 s timeout, an activity's start-to-close...), and left in place each would keep
    // its entry and callback (and the run they close over) alive for that long, to be
    // promoted by the garbage collector, and keep the heap thousands of entries deep
    // (docs/performance.md "Server CPU per workflow: encode once").
    this.remove(entry);
    this.live--;
    this.kick();
  }

  schedule(delayMs: number, fn: () => void): TimerHandle {
    return this.scheduleAt(this.now() + Math.max(0, delayMs), fn);
  }

  /** Move time forward (never backward); used by tests of the clock itself. */
  skipTo(atMs: number): void {
    this.sync();
    if (atMs > this.virtualMs) this.virtualMs = atMs;
    this.kick();
  }

  close(): void {
    this.closed = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.heap = [];
    this.live = 0;
  }

  private locked(): boolean {
    if (!this.opts.timeSkipping) return true;
    return this.internalLocks + Math.max(0, this.externalLocks) - this.sleepUnlocks > 0;
  }

  /** Follow the wall clock unless we are in a skipping window (unlocked with timers pending). */
  private sync(): void {
    const wall = Date.now();
    if (this.locked() || this.live === 0) {
      if (wall > this.lastWall) this.virtualMs += wall - this.lastWall;
    }
    this.lastWall = wall;
  }

  private kick(): void {
    if (this.pumpScheduled || this.closed) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.closed) return;
    for (;;) {
      this.sync();
      const next = this.peekLive();
      if (!next) return;
      if (next.at <= this.virtualMs) {
        this.pop();
        this.live--;
        next.cancelled = true;
        try {
          next.fn(next.arg);
        } catch (err) {
          this.opts.onError?.(err);
        }
        continue;
      }
      if (!this.locked()) {
        // Nothing in flight: jump to the next timer.
        this.virtualMs = next.at;
        continue;
      }
      // Locked: time runs at wall speed; wake up when the next timer is due (re-checked then).
      // A wake-up already set for that time or earlier is kept (an early one just pumps again):
      // pumps follow every unlock, and a new timer object each time costs more than the check.
      const wait = Math.max(1, Math.min(next.at - this.virtualMs, 2 ** 31 - 1));
      const wakeAt = Date.now() + wait;
      if (this.wakeTimer && this.wakeAt <= wakeAt) return;
      if (this.wakeTimer) clearTimeout(this.wakeTimer);
      this.wakeAt = wakeAt;
      this.wakeTimer = setTimeout(() => {
        this.wakeTimer = undefined;
        this.pump();
      }, wait);
      this.wakeTimer.unref();
      return;
    }
  }

  private peekLive(): TimerEntry | undefined {
    // Cancelled entries leave the heap when cancelled (see `scheduleAt`); the check is a safeguard.
    while (this.heap.length > 0 && this.heap[0].cancelled) this.pop();
    return this.heap[0];
  }

  private less(a: TimerEntry, b: TimerEntry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: TimerEntry): void {
    e.index = this.heap.length;
    this.heap.push(e);
    this.siftUp(e.index);
  }

  private pop(): TimerEntry | undefined {
    const top = this.heap[0];
    if (top) this.remove(top);
    return top;
  }

  /** Takes `e` out of the heap wherever it is (O(log n)); a no-op if it is not in it. */
  private remove(e: TimerEntry): void {
    const h = this.heap;
    const i = e.index;
    if (i < 0 || h[i] !== e) return;
    e.index = -1;
    const last = h.pop();
    if (last === undefined || last === e) return;
    h[i] = last;
    last.index = i;
    this.siftUp(i);
    this.siftDown(last.index);
  }

  private place(e: TimerEntry, i: number): void {
    this.heap[i] = e;
    e.index = i;
  }

  private siftUp(i: number): void {
    const h = this.heap;
    const e = h[i];
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(e, h[p])) break;
      this.place(h[p], i);
      i = p;
    }
    this.place(e, i);
  }

  private siftDown(i: number): void {
    const h = this.heap;
    const e = h[i];
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const m = r < h.length && this.less(h[r], h[l]) ? r : l;
      if (!this.less(h[m], e)) break;
      this.place(h[m], i);
      i = m;
    }
    this.place(e, i);
  }
}
