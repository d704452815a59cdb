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
 * `endRun`) is mended the same way: that wait's unlock is refused, its end takes the lock. The
 * clock checks of test/support/temporal-open-workflows.ts keep using the server's own calls
 * (`rawTestService`).
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';

/** The part of sdk-java's test service used here. */
export interface TestService {
  unlockTimeSkipping(req: object): Promise<unknown>;
  lockTimeSkipping(req: object): Promise<unknown>;
  unlockTimeSkippingWithSleep(req: { duration: object }): Promise<unknown>;
  sleep(req: { duration: object }): Promise<unknown>;
  getCurrentTime(req: object): Promise<{ time?: { seconds?: unknown } | null }>;
}

/**
 * Whether the server holds a lock, asked so that a refusal changes nothing: a plain unlock, taken
 * back at once when granted. Never by a refused `unlockTimeSkippingWithSleep`: sdk-java schedules
 * that call's relock before it unlocks, so a refused one still takes a lock when its sleep ends, a
 * lock nobody owns (docs/testing.md "One Temporal server of each kind per run").
 */
export async function lockIsHeld(service: TestService): Promise<boolean> {
  const held = await service.unlockTimeSkipping({}).then(
    () => true,
    () => false,
  );
  if (held) await service.lockTimeSkipping({});
  return held;
}

/**
 * How long a plain unlock may take before it is taken for refused. The server refuses an unlock
 * when no lock is held, with an error that carries its whole lock history, which grows with the
 * run; past 16 KB the error no longer fits the response's headers, the server drops it (its log:
 * `Header size exceeded max allowed size (16384)`), and the call never ends. A granted unlock
 * answers within milliseconds.
 */
const REFUSAL_WAIT_MS = 5_000;

const raw = new WeakMap<object, TestService>();

/** The test service's own calls, not shared (for the clock checks), or undefined off the test server. */
export function rawTestService(connection: object): TestService | undefined {
  return raw.get(connection);
}

/** Makes the waits of `env`'s client and `env.sleep()` share the one lock (see above). */
export function shareTimeSkippingWaits(env: TestWorkflowEnvironment): void {
  const service = (env.connection as unknown as { testService: TestService }).testService;
  const unlock = service.unlockTimeSkipping.bind(service);
  const own: TestService = {
    // A refusal late in a run never answers (see REFUSAL_WAIT_MS): waited for that long, then
    // taken for the refusal it is. A refused plain unlock changes nothing on the server.
    unlockTimeSkipping: (req) => env.connection.withDeadline(Date.now() + REFUSAL_WAIT_MS, () => unlock(req)),
    lockTimeSkipping: service.lockTimeSkipping.bind(service),
    unlockTimeSkippingWithSleep: service.unlockTimeSkippingWithSleep.bind(service),
    sleep: service.sleep.bind(service),
    getCurrentTime: service.getCurrentTime.bind(service),
  };
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
      // after time had skipped past the next timers). Only with a lock held: a refused one would
      // still take a lock at its end (`lockIsHeld`).
      if (await lockIsHeld(own)) return await own.unlockTimeSkippingWithSleep(req);
      // No lock held (one given back too many): time runs free; the idle lock is taken back after.
      const slept = await own.sleep(req);
      await own.lockTimeSkipping({});
      return slept;
    } finally {
      // The server holds its lock again: a wait begun meanwhile still needs it given back.
      await change(async () => {
        waits = Math.max(0, waits - 1);
        if (waits > 0) await own.unlockTimeSkipping({});
      });
    }
  };
}
