/**
 * Task queues: tasks waiting for a poller and pollers waiting for a task (long poll).
 *
 * A queued task is only a reference; the owner decides at hand-over time whether it is still
 * valid (`take` returns null for a stale task: run closed, task re-homed, activity cancelled...)
 * and builds the poll response then, so history is always current when a worker receives it.
 *
 * Hand-over never happens inside the state change that queued the task: it runs from a microtask,
 * after that change (e.g. a whole workflow-task completion) has finished.
 */

export interface QueuedTask<R> {
  /** Build the poll response and mark the task started, or null if the task is stale. */
  take(pollerIdentity: string): R | null;
}

interface Waiter<R> {
  identity: string;
  resolve(r: R | null): void;
  timer: NodeJS.Timeout;
}

class Queue<R> {
  tasks: QueuedTask<R>[] = [];
  waiters: Waiter<R>[] = [];
  drainQueued = false;
}

/** How long a poller stays listed by `pollers` after its last poll (the real matching service's poller history TTL). */
const POLLER_TTL_MS = 5 * 60_000;

export class Matching<R> {
  private queues = new Map<string, Queue<R>>();
  /** Per queue: poller identity → wall time of its last poll (DescribeTaskQueue). */
  private seen = new Map<string, Map<string, number>>();
  private lastSweep = 0;

  constructor(private readonly onError: (err: unknown) => void) {}

  private queue(key: string): Queue<R> {
    let q = this.queues.get(key);
    if (!q) {
      q = new Queue<R>();
      this.queues.set(key, q);
    }
    return q;
  }

  add(key: string, task: QueuedTask<R>): void {
    const q = this.queue(key);
    q.tasks.push(task);
    this.scheduleDrain(key, q);
  }

  /** Remove and return every queued task (used to re-home a sticky queue whose worker left). */
  takeAll(key: string): QueuedTask<R>[] {
    const q = this.queues.get(key);
    if (!q) return [];
    const tasks = q.tasks;
    q.tasks = [];
    return tasks;
  }

  /**
   * Long poll: resolves with a response, or null when `timeoutMs` of wall time pass.
   * `onCancel` registers a callback for a poller that went away; its place in line is dropped
   * so that no task is handed to a dead caller.
   */
  poll(key: string, identity: string, timeoutMs: number, onCancel: (cb: () => void) => void): Promise<R | null> {
    this.recordPoller(key, identity);
    const q = this.queue(key);
    const immediate = this.takeFirst(q, identity);
    if (immediate !== null) return Promise.resolve(immediate);
    return new Promise<R | null>((resolve) => {
      const waiter: Waiter<R> = {
        identity,
        resolve,
        timer: setTimeout(() => {
          remove();
          resolve(null);
        }, timeoutMs),
      };
      const remove = (): void => {
        clearTimeout(waiter.timer);
        const i = q.waiters.indexOf(waiter);
        if (i >= 0) q.waiters.splice(i, 1);
      };
      q.waiters.push(waiter);
      onCancel(() => {
        remove();
        resolve(null);
      });
    });
  }

  /** Pollers seen on the queue in the last five minutes, most recent first. */
  pollers(key: string): { identity: string; lastAccessMs: number }[] {
    const now = Date.now();
    const out: { identity: string; lastAccessMs: number }[] = [];
    for (const [identity, at] of this.seen.get(key) ?? [])
      if (now - at <= POLLER_TTL_MS) out.push({ identity, lastAccessMs: at });
    return out.sort((a, b) => b.lastAccessMs - a.lastAccessMs);
  }

  private recordPoller(key: string, identity: string): void {
    const now = Date.now();
    let ids = this.seen.get(key);
    if (!ids) {
      ids = new Map();
      this.seen.set(key, ids);
    }
    ids.set(identity, now);
    // Sticky queues come and go with workers: forget queues not polled for a while.
    if (now - this.lastSweep < POLLER_TTL_MS) return;
    this.lastSweep = now;
    for (const [k, m] of this.seen) {
      for (const [id, at] of m) if (now - at > POLLER_TTL_MS) m.delete(id);
      if (m.size === 0) this.seen.delete(k);
    }
  }

  /** Wake every waiter with an empty response (shutdown). */
  close(): void {
    for (const q of this.queues.values()) {
      for (const w of q.waiters.splice(0)) {
        clearTimeout(w.timer);
        w.resolve(null);
      }
    }
  }

  private takeFirst(q: Queue<R>, identity: string): R | null {
    while (q.tasks.length > 0) {
      const task = q.tasks.shift();
      if (!task) break;
      try {
        const r = task.take(identity);
        if (r !== null) return r;
      } catch (err) {
        this.onError(err);
      }
    }
    return null;
  }

  private scheduleDrain(key: string, q: Queue<R>): void {
    if (q.drainQueued) return;
    q.drainQueued = true;
    queueMicrotask(() => {
      q.drainQueued = false;
      while (q.waiters.length > 0 && q.tasks.length > 0) {
        const w = q.waiters[0];
        const r = this.takeFirst(q, w.identity);
        if (r === null) break;
        q.waiters.shift();
        clearTimeout(w.timer);
        w.resolve(r);
      }
      if (q.tasks.length === 0 && q.waiters.length === 0) this.queues.delete(key);
    });
  }
}
