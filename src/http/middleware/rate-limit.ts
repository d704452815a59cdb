/**
 * Request rate limits (docs/api.md "Rate limits"), all counted in PostgreSQL through
 * rate-limiter-flexible so that they hold across API processes, and all checked before any
 * authentication work:
 *
 * - per client address, on every request (callbacks, health checks and login included), first
 *   thing after the error handler: RATE_LIMIT_ADDRESS_BURST requests per window of
 *   RATE_LIMIT_ADDRESS_BURST / RATE_LIMIT_ADDRESS_RPS seconds;
 * - per credential (API key, or the user behind a JWT), in `authenticate` before the credential is
 *   looked up: RATE_LIMIT_BURST requests per window of RATE_LIMIT_BURST / RATE_LIMIT_RPS seconds;
 * - failed authentications per address: after AUTH_FAILURES_PER_ADDRESS within
 *   AUTH_FAILURE_WINDOW_SECONDS, the address gets 429 without any lookup until the window ends.
 *
 * A fixed window of BURST requests lasting BURST / RPS seconds allows the same burst and the same
 * long-run rate as a token bucket with those parameters; it differs only in that a client that
 * spends its burst waits for the window to end rather than for single tokens to drip back.
 */
import type { Knex } from 'knex';
import type { Config } from '../../config';
import { tooManyRequests } from '../../services/accounts/auth';
import { createLimiter, type Limiter } from '../../services/accounts/rate-limits';
import type { AppMiddleware } from '../types';

export type RateLimitConfig = Pick<
  Config,
  | 'RATE_LIMIT_RPS'
  | 'RATE_LIMIT_BURST'
  | 'RATE_LIMIT_ADDRESS_RPS'
  | 'RATE_LIMIT_ADDRESS_BURST'
  | 'AUTH_FAILURES_PER_ADDRESS'
  | 'AUTH_FAILURE_WINDOW_SECONDS'
>;

export interface RequestLimiters {
  /** Every request, keyed by client address. */
  address: Limiter;
  /** Authenticated requests, keyed by credential. */
  credential: Limiter;
  /** Failed authentications, keyed by client address. */
  authFailures: Limiter;
}

/**
 * Points a process takes from a request limit's shared counter at a time: a twentieth of the
 * allowance, at most 50 (one upsert per chunk instead of per request; see services/accounts/rate-limits.ts for what
 * that costs a client near its limit). Failed authentications are always counted one by one.
 */
export const leaseFor = (points: number): number => Math.max(1, Math.min(50, Math.floor(points / 20)));

export function createRequestLimiters(knex: Knex, config: RateLimitConfig): RequestLimiters {
  return {
    address: createLimiter(knex, {
      name: 'address',
      points: config.RATE_LIMIT_ADDRESS_BURST,
      windowSeconds: config.RATE_LIMIT_ADDRESS_BURST / config.RATE_LIMIT_ADDRESS_RPS,
      lease: leaseFor(config.RATE_LIMIT_ADDRESS_BURST),
    }),
    credential: createLimiter(knex, {
      name: 'credential',
      points: config.RATE_LIMIT_BURST,
      windowSeconds: config.RATE_LIMIT_BURST / config.RATE_LIMIT_RPS,
      lease: leaseFor(config.RATE_LIMIT_BURST),
    }),
    authFailures: createLimiter(knex, {
      name: 'auth-failures',
      points: config.AUTH_FAILURES_PER_ADDRESS,
      windowSeconds: config.AUTH_FAILURE_WINDOW_SECONDS,
    }),
  };
}

/** The per-address limit on every request; `ctx.ip` honours TRUST_PROXY (see app.ts). */
export function addressRateLimit(limiter: Limiter): AppMiddleware {
  return async (ctx, next) => {
    // From this process's lease when it holds one (no promise), else from the shared counter.
    const outcome = limiter.consumeHeld(ctx.ip) ?? (await limiter.consume(ctx.ip));
    if (!outcome.allowed) throw tooManyRequests('Too many requests from this address', outcome.retryAfterSeconds);
    return next();
  };
}
