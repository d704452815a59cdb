/**
 * GET /healthz — the process is up and serving (no dependencies checked, so an orchestrator does
 * not restart us for a database blip). GET /readyz — every readiness check (database, Temporal, …)
 * answers within a deadline; 503 otherwise, naming which checks failed but never why.
 */
import { errorAnswer } from '../middleware/errors';
import type { AppRouter } from '../types';

export type ReadinessCheck = () => Promise<unknown>;

async function withDeadline(check: ReadinessCheck, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`readiness check timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(checks: Record<string, ReadinessCheck>, timeoutMs = 2000) {
  return (router: AppRouter): void => {
    router.get('/healthz', (ctx) => {
      ctx.body = { status: 'ok' };
    });

    router.get('/readyz', async (ctx) => {
      const names = Object.keys(checks);
      const outcomes = await Promise.allSettled(names.map((n) => withDeadline(checks[n] as ReadinessCheck, timeoutMs)));
      const results: Record<string, 'ok' | 'failed'> = {};
      outcomes.forEach((o, i) => {
        const name = names[i] as string;
        results[name] = o.status === 'fulfilled' ? 'ok' : 'failed';
        if (o.status === 'rejected') ctx.state.log.warn({ check: name, err: o.reason }, 'readiness check failed');
      });
      const failed = names.filter((n) => results[n] === 'failed');
      if (failed.length > 0) {
        ctx.status = 503;
        ctx.body = { ...errorAnswer(ctx, 'service_unavailable', `Not ready: ${failed.join(', ')}`), checks: results };
        return;
      }
      ctx.body = { status: 'ok', checks: results };
    });
  };
}
