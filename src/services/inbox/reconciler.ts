/**
 * Runs the callback inbox's reconciliation in the API process
 * (docs/operations.md "The callback inbox and reconciliation"): one pass at start, then one every INBOX_REDRIVE_INTERVAL_MS, never two at once
 * in this process (several processes share the work through SKIP LOCKED claims).
 */
import type { Logger } from '../../lib/logger';
import type { CallbackInbox } from './callback-inbox';

export const INBOX_REDRIVE_INTERVAL_MS = 15_000;

export function startInboxReconciler(deps: { inbox: CallbackInbox; logger: Logger; intervalMs?: number }) {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const pass = (): void => {
    if (busy) return;
    busy = true;
    running = deps.inbox
      .redriveDue()
      .catch((err: unknown) => deps.logger.error({ err }, 'callback inbox reconciliation failed'))
      .finally(() => {
        busy = false;
      });
  };
  pass();
  const timer = setInterval(pass, deps.intervalMs ?? INBOX_REDRIVE_INTERVAL_MS);
  timer.unref();
  return {
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
    },
  };
}
