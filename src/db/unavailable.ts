/**
 * Whether an error means "the database cannot be reached right now" rather than "this request is
 * wrong" or "our code is wrong": a refused or reset connection, a connection the server closed
 * (restart, failover, admin shutdown), a server still starting or shutting down, or no pooled
 * connection within knex's acquire timeout. The HTTP layer answers these with 503 and
 * `Retry-After` (docs/production.md "Database outages") instead of a 500: the request may well succeed once
 * PostgreSQL is back, and nothing of it was half-written because every write is one transaction.
 */

/** Socket-level failures of node-postgres reaching the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of an unavailable server: class 08 (connection exception), 57P01 admin_shutdown,
 * 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up / recovering).
 */
function unavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03';
}

/**
 * Messages node-postgres and tarn use when a connection dies or never comes (no code attached);
 * knex prefixes the failed statement (e.g. "ROLLBACK - Client has encountered …"), so unanchored.
 */
const MESSAGES = [
  /Connection terminated/,
  /Client has encountered a connection error/,
  /Timeout acquiring a connection/,
  /timeout exceeded when trying to connect/,
];

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const e = err as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
    nativeError?: unknown;
  };
  if (e.name === 'KnexTimeoutError') return true;
  if (
    typeof e.code === 'string' &&
    (NETWORK_CODES.has(e.code) || (/^[0-9A-Z]{5}$/.test(e.code) && unavailableSqlState(e.code)))
  )
    return true;
  if (typeof e.message === 'string' && MESSAGES.some((re) => re.test(e.message as string))) return true;
  // objection wraps the driver's error (DBError.nativeError); AggregateError (connect to several
  // addresses) and errors with a cause wrap theirs too.
  if (e.nativeError !== undefined && isDatabaseUnavailable(e.nativeError, depth + 1)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return e.cause !== undefined && isDatabaseUnavailable(e.cause, depth + 1);
}
