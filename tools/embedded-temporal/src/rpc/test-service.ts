/**
 * temporal.api.testservice.v1.TestService: the time-skipping controls @temporalio/testing uses.
 * Semantics follow the official test server (see clock.ts).
 */
import { msTimestamp, temporal, durationMs, timestampMs } from '../proto';
import type { Clock } from '../clock';
import { handler, type Handler } from './grpc';

import ts = temporal.api.testservice.v1;

export function testService(clock: Clock): Record<string, Handler> {
  /** `onWake` runs synchronously inside the clock's pump, before time can move any further. */
  const sleepUntil = (atMs: number, onCancel: (cb: () => void) => void, onWake: () => void = () => {}): Promise<void> =>
    new Promise<void>((resolve) => {
      let settled = false;
      const wake = (): void => {
        if (settled) return;
        settled = true;
        onWake();
        resolve();
      };
      const h = clock.scheduleAt(atMs, wake);
      onCancel(() => {
        h.cancel();
        wake();
      });
    });

  return {
    LockTimeSkipping: handler<ts.ILockTimeSkippingRequest>(() => {
      clock.lockExternal();
      return {};
    }),
    UnlockTimeSkipping: handler<ts.IUnlockTimeSkippingRequest>(() => {
      clock.unlockExternal();
      return {};
    }),
    Sleep: handler<ts.ISleepRequest>(async (req, ctx) => {
      await sleepUntil(clock.now() + durationMs(req.duration), ctx.onCancel);
      return {};
    }),
    SleepUntil: handler<ts.ISleepUntilRequest>(async (req, ctx) => {
      await sleepUntil(timestampMs(req.timestamp), ctx.onCancel);
      return {};
    }),
    // Unlock, let (virtual) time pass, lock again: the environment's `sleep`. The unlock offsets
    // locks of work in flight too (an activity calling env.sleep), as in the Java server.
    UnlockTimeSkippingWithSleep: handler<ts.ISleepRequest>(async (req, ctx) => {
      const done = sleepUntil(clock.now() + durationMs(req.duration), ctx.onCancel, () => clock.relockAfterSleep());
      clock.unlockForSleep();
      await done;
      return {};
    }),
    GetCurrentTime: handler<object>(() => ({ time: msTimestamp(clock.now()) })),
  };
}
