/**
 * GET /metrics: the Prometheus exposition of src/observability/metrics.ts. Open unless
 * METRICS_TOKEN is set; then it wants `Authorization: Bearer <METRICS_TOKEN>` (compared in
 * constant time), so business volumes are not public where the API is.
 */
import { unauthenticated } from '../../lib/errors';
import { metricsTokenMatches, renderMetrics } from '../../observability/metrics';
import type { AppRouter } from '../types';

export function metricsRoutes(opts: { token?: string } = {}) {
  return (router: AppRouter): void => {
    router.get('/metrics', async (ctx) => {
      if (opts.token) {
        if (!metricsTokenMatches(ctx.get('authorization'), opts.token)) {
          throw unauthenticated('A valid metrics token is required');
        }
      }
      const { contentType, body } = await renderMetrics();
      ctx.type = contentType;
      ctx.body = body;
    });
  };
}
