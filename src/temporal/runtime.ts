/**
 * The Temporal SDK's process-wide Runtime, installed once before the worker connects
 * (docs/operations.md "Metrics and logs"): the SDK's logs go through our JSON logger at TEMPORAL_LOG_LEVEL (WARN by
 * default, so the start-up screen is ours, not the webpack report of the workflow bundle), and
 * the worker's own metrics (task latencies, poll counts, slots, sticky cache) are served by the
 * SDK's Prometheus exporter at TEMPORAL_METRICS_ADDRESS when set.
 */
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../lib/logger';

export type TemporalLogLevel = 'ERROR' | 'WARN' | 'INFO' | 'DEBUG' | 'TRACE';

export interface TemporalRuntimeOptions {
  logger: Logger;
  level: TemporalLogLevel;
  /** `host:port` for the SDK's Prometheus exporter (GET /metrics there); unset: no exporter. */
  metricsAddress?: string;
}

let installed = false;

/** Installs the Runtime unless one exists already in this process (then it is kept). */
export function installTemporalRuntime(opts: TemporalRuntimeOptions): boolean {
  if (installed) return false;
  installed = true;
  const sdkLogger = opts.logger.child({ component: 'temporal-sdk' });
  const forward = (level: LogLevel, message: string, meta: Record<string, unknown> | undefined): void => {
    const fields = meta ?? {};
    switch (level) {
      case 'TRACE':
        sdkLogger.trace(fields, message);
        break;
      case 'DEBUG':
        sdkLogger.debug(fields, message);
        break;
      case 'INFO':
        sdkLogger.info(fields, message);
        break;
      case 'WARN':
        sdkLogger.warn(fields, message);
        break;
      default:
        sdkLogger.error(fields, message);
    }
  };
  try {
    Runtime.install({
      logger: new DefaultLogger(opts.level, (entry) => forward(entry.level, entry.message, entry.meta)),
      telemetryOptions: {
        logging: { filter: { core: opts.level, other: opts.level }, forward: {} },
        ...(opts.metricsAddress ? { metrics: { prometheus: { bindAddress: opts.metricsAddress } } } : {}),
      },
    });
    return true;
  } catch {
    // Someone in this process (a test harness) installed one first: theirs stays.
    return false;
  }
}
