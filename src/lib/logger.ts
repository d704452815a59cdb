/**
 * JSON logs (pino). Secrets must never reach a log line, so every field that can carry one is
 * redacted by path wherever it appears up to two levels deep (request headers, bodies, error
 * details). Add a name here before logging anything new that might hold a credential.
 */
import pino, { type Logger, type LoggerOptions } from 'pino';
import { currentLogContext } from './log-context';
import { activeTraceIds } from '../observability/tracing';

export type { Logger };

const SECRET_FIELDS = [
  'authorization',
  'password',
  'passwordHash',
  'password_hash',
  'token',
  'value',
  'secret',
  'key',
  'keys',
  'apiKey',
  'key_hash',
  'keyHash',
  'cookie',
  'JWT_SECRET',
  'API_KEY_PEPPER',
  'ACQUIRER_CALLBACK_SECRET',
  'ACQUIRER_CLIENT_SECRET',
  'ADMIN_PASSWORD',
];

/** `field`, `*.field` and `*.*.field` for every secret field name. */
export const REDACT_PATHS: string[] = SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);

export interface LoggerSettings {
  level?: LoggerOptions['level'];
  /** Where to write; defaults to stdout. Tests pass a stream to inspect or silence output. */
  destination?: pino.DestinationStream;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { service: 'pixflow' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
    // The request id or workflow id of the work in progress (src/lib/log-context.ts).
    // Fields a child logger already binds (the request logger's reqId) are not repeated.
    // With tracing on, the trace and span ids of the active span too (docs/operations.md "Tracing").
    mixin: (_merge, _level, logger) => {
      const context: Record<string, string | undefined> = { ...currentLogContext(), ...activeTraceIds() };
      const keys = Object.keys(context);
      if (keys.length === 0) return {};
      const bound = logger.bindings();
      return Object.fromEntries(keys.filter((k) => !(k in bound)).map((k) => [k, context[k]]));
    },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
