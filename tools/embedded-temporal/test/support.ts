/** Shared bits of the conformance suite: workflows path, activity implementations with counters. */
import net from 'node:net';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ConformanceActivities } from './workflows/activities';

export const workflowsPath = path.join(__dirname, 'workflows');

/** Resolves when `pred()` holds; polls with a short real interval (a condition, not a sleep). */
export async function waitFor(
  pred: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function makeActivities(): ConformanceActivities & {
  greet(name: string): Promise<string>;
  calls: Record<string, number>;
  attemptTimes: number[];
  cancelSeen: boolean;
} {
  const calls: Record<string, number> = {};
  const count = (name: string): void => {
    calls[name] = (calls[name] ?? 0) + 1;
  };
  const acts = {
    calls,
    attemptTimes: [] as number[],
    cancelSeen: false,
    async greet(name: string) {
      count('greet');
      return `hello ${name}`;
    },
    async alwaysFails(kind: string): Promise<string> {
      count('alwaysFails');
      acts.attemptTimes.push(Context.current().info.currentAttemptScheduledTimestampMs);
      throw ApplicationFailure.create({ message: `failure #${Context.current().info.attempt}`, type: kind });
    },
    async failsNonRetryable(): Promise<string> {
      count('failsNonRetryable');
      throw ApplicationFailure.nonRetryable('do not retry me', 'Whatever');
    },
    async heartbeatsOnceThenStalls(): Promise<string> {
      count('heartbeatsOnceThenStalls');
      const ctx = Context.current();
      ctx.heartbeat('first');
      // Stall until the server times the attempt out and the worker cancels us.
      await ctx.cancelled.catch(() => undefined);
      return 'stalled';
    },
    async heartbeatsUntilCancelled(): Promise<string> {
      count('heartbeatsUntilCancelled');
      const ctx = Context.current();
      for (;;) {
        ctx.heartbeat();
        try {
          await Promise.race([ctx.cancelled, new Promise((r) => setTimeout(r, 100))]);
        } catch (err) {
          if (err instanceof CancelledFailure) {
            acts.cancelSeen = true;
            throw err;
          }
          throw err;
        }
      }
    },
    async double(n: number): Promise<number> {
      count('double');
      return n * 2;
    },
  };
  return acts;
}

/** A port free on 127.0.0.1 at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
