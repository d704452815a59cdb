/**
 * Calls made during one turn of the event loop, run as one batch
 * (docs/performance.md "Where a charge's time goes"): under load many requests reach the same statement in the same turn, and one statement for
 * all of them costs one round trip and one commit instead of one each. Built on DataLoader, with its
 * cache off (these are writes) and the batch sent from setImmediate, i.e. after every I/O callback of
 * the turn has had its say. A turn with one call sends a batch of one, with no delay.
 */
import DataLoader from 'dataloader';

export function turnBatcher<K, V>(
  run: (keys: readonly K[]) => Promise<ReadonlyArray<V | Error>>,
  maxBatchSize = 64,
): (key: K) => Promise<V> {
  const loader = new DataLoader<K, V>(run, {
    cache: false,
    maxBatchSize,
    batchScheduleFn: (send) => setImmediate(send),
  });
  return (key) => loader.load(key);
}

/** The error of a rejected promise as an Error, for a batch that answers per key. */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
