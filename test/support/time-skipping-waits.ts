/**
 * Waits on the time-skipping clock that may overlap (docs/testing.md "One Temporal server of each
 * kind per run"). sdk-java's test server skips time only while its lock count is zero, and an idle
 * server holds one lock. The SDK's time-skipping client gives that one lock back for as long as a
 * `result()` is awaited, and `env.sleep()` does the same for its sleep. Two such waits at once
 * (`Promise.all` of two results, a sleep while a result is awaited) give back two locks: the
 * second takes one a running workflow task holds, and when that task ends the server's count
 * goes below zero. From then on time runs free, and every later wait's unlock is refused.
 *
 * So the waits share the one lock: the first wait to begin gives it back, the last to end takes
 * it again; a sleep alone is the server's own call (its lock comes back exactly at the sleep's
 * end), and a sleep beside another wait waits on a virtual timer (`sleep`, no lock change). A
 * count already at zero (a terminate's lock given back twice, test/support/temporal-open-workflows.ts
 * `endRun`) is mended the same way: that wait's unlock is refused, its end takes the lock (for a
 * lone sleep, the refused call's own relock at the sleep's end). The
 * clock checks of test/support/temporal-open-workflows.ts keep using the server's own calls
 * (`rawTestService`).
 */
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { InternalConnectionOptionsSymbol } from '@temporalio/client/lib/connection';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { onRunEnd } from './lifecycle';

/** The part of sdk-java's test service used here. */
export interface TestService {
  unlockTimeSkipping(req: object): Promise<unknown>;
  lockTimeSkipping(req: object): Promise<unknown>;
  unlockTimeSkippingWithSleep(req: { duration: object }): Promise<unknown>;
  /** The same, failing with DEADLINE_EXCEEDED past `ms` (only on the calls of `rawTestService`). */
  unlockTimeSkippingWithSleepWithin?(ms: number, req: { duration: object }): Promise<unknown>;
  sleep(req: { duration: object }): Promise<unknown>;
  getCurrentTime(req: object): Promise<{ time?: { seconds?: unknown } | null }>;
}

/**
 * How long a call that may be refused is waited for. The server refuses an unlock when no lock
 * is held, with an error that carries its whole lock history, which grows with the run; past
 * 16 KB the error no longer fits the response's headers, the server drops it (its log: `Header
 * size exceeded max allowed size (16384)`), and the call never ends. A granted plain unlock
 * answers within milliseconds, and one granted later is still read right: each caller takes a
 * lock back after a refusal, which a late grant needs too.
 */
const REFUSAL_WAIT_MS = 1_000;
/** A sleep alone is waited for this long before it is taken for refused (see its use). */
const SLEEP_REFUSAL_WAIT_MS = 10_000;

const raw = new WeakMap<object, TestService>();

/** The test service's own calls, not shared (for the clock checks), or undefined off the test server. */
export function rawTestService(connection: object): TestService | undefined {
  return raw.get(connection);
}

/**
 * The test service on a connection of its own without the SDK's retries: the SDK retries an
 * UNKNOWN answer (a refusal) for tens of seconds, and each retry of a refused
 * `unlockTimeSkippingWithSleep` schedules one more relock, a lock nobody owns.
 */
async function testServiceWithoutRetries(env: TestWorkflowEnvironment): Promise<TestService> {
  // The SDK's own way to a test service (what createTimeSkipping passes), not a public option.
  const internal = { [InternalConnectionOptionsSymbol]: { supportsTestService: true } };
  const connection = await Connection.connect({
    address: env.address,
    interceptors: [],
    ...(internal as ConnectionOptions),
  });
  onRunEnd(() => connection.close());
  const service = (connection as unknown as { testService: TestService }).testService;
  const within =
    <R>(ms: number, call: (req: R) => Promise<unknown>) =>
    (req: R) =>
      connection.withDeadline(Date.now() + ms, () => call(req));
  const sleepUnlock = service.unlockTimeSkippingWithSleep.bind(service);
  return {
    unlockTimeSkipping: within(REFUSAL_WAIT_MS, service.unlockTimeSkipping.bind(service)),
    lockTimeSkipping: service.lockTimeSkipping.bind(service),
    unlockTimeSkippingWithSleep: sleepUnlock,
    unlockTimeSkippingWithSleepWithin: (ms, req) => within(ms, sleepUnlock)(req),
    sleep: service.sleep.bind(service),
    getCurrentTime: service.getCurrentTime.bind(service),
  };
}

/** Makes the waits of `env`'s client and `env.sleep()` share the one lock (see above). */
export async function shareTimeSkippingWaits(env: TestWorkflowEnvironment): Promise<void> {
  const service = (env.connection as unknown as { testService: TestService }).testService;
  const own = await testServiceWithoutRetries(env);
  raw.set(env.connection, own);

  let waits = 0;
  // Lock changes run one after another, so that a wait that ends never overtakes one that begins.
  let changes: Promise<unknown> = Promise.resolve();
  const change = (fn: () => Promise<unknown>): Promise<unknown> => {
    const next = changes.then(fn);
    changes = next.catch(() => undefined);
    return next;
  };
  const begin = () =>
    change(async () => {
      // Refused only when no lock is held (one given back too many): time already runs free,
      // and `end` takes back the idle server's lock, so the count is right again.
      if (waits === 0) await own.unlockTimeSkipping({}).catch(() => undefined);
      waits++;
    });
  const end = () =>
    change(async () => {
      waits = Math.max(0, waits - 1);
      if (waits === 0) await own.lockTimeSkipping({});
    });

  service.unlockTimeSkipping = begin;
  service.lockTimeSkipping = end;
  service.unlockTimeSkippingWithSleep = async (req) => {
    const alone = await change(async () => waits++ === 0);
    if (!alone) {
      // Time already skips for the other wait: a virtual timer, and the last wait to end locks.
      try {
        return await own.sleep(req);
      } finally {
        await end();
      }
    }
    try {
      // Alone: the server's own call, which takes the lock back in the same step as its timer
      // fires, so that time stops exactly there (a lock taken by a call after it would come late,
      // after time had skipped past the next timers). Refused (no lock held, time running free),
      // it still takes that lock at the sleep's end: sdk-java schedules the relock before it
      // unlocks. So after a refusal (or an answer that never comes) only the sleep is waited
      // out, and the server's own relock mends the count.
      return await own.unlockTimeSkippingWithSleepWithin?.(SLEEP_REFUSAL_WAIT_MS, req);
    } catch {
      return await own.sleep(req);
    } finally {
      // The server holds its lock again: a wait begun meanwhile still needs it given back.
      await change(async () => {
        waits = Math.max(0, waits - 1);
        if (waits > 0) await own.unlockTimeSkipping({});
      });
    }
  };
}
