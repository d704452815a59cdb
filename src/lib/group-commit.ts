/**
 * Group commit per key (docs/performance.md "One merchant's payouts"): work items that share a key
 * (one merchant's balance row) and arrive together run as one batch, so N of them cost one
 * transaction and one commit while the row's lock is held, instead of queueing N commits on it.
 *
 * At most one batch per key is in flight. The first item of an idle key is sent after the current
 * turn of the event loop (so items of the same turn join it); items that arrive while a batch runs
 * wait and form the next one. A lone item is sent with no added delay. `run` answers per item,
 * in order: a value, or an Error for that item alone.
 */
interface Pending<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (e: Error) => void;
}

export function keyedGroupCommit<T, R>(
  run: (key: string, items: readonly T[]) => Promise<ReadonlyArray<R | Error>>,
  maxBatchSize = 64,
): (key: string, item: T) => Promise<R> {
  const queues = new Map<string, Pending<T, R>[]>();
  const busy = new Set<string>();

  function drain(key: string): void {
    const queue = queues.get(key);
    if (!queue || queue.length === 0) {
      queues.delete(key);
      busy.delete(key);
      return;
    }
    const batch = queue.splice(0, maxBatchSize);
    run(
      key,
      batch.map((p) => p.item),
    )
      .then(
        (results) =>
          batch.forEach((p, i) => {
            const r = results[i];
            if (r instanceof Error) p.reject(r);
            else if (r === undefined && i >= results.length) p.reject(new Error('group commit: no result for an item'));
            else p.resolve(r as R);
          }),
        (err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          for (const p of batch) p.reject(e);
        },
      )
      .finally(() => drain(key));
  }

  return (key, item) =>
    new Promise<R>((resolve, reject) => {
      let queue = queues.get(key);
      if (!queue) queues.set(key, (queue = []));
      queue.push({ item, resolve, reject });
      if (!busy.has(key)) {
        busy.add(key);
        setImmediate(() => drain(key));
      }
    });
}
