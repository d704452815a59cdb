/**
 * Per-credential rate limit (DECISIONS "Auth": RATE_LIMIT_RPS with a burst of RATE_LIMIT_BURST).
 * Authenticated requests are counted per API key or per user; anonymous ones (login) per client
 * address, which also slows password guessing.
 */
import { AppError } from '../../lib/errors';
import { TokenBuckets } from '../token-bucket';
import type { AppContext, AppMiddleware } from '../types';

export function credentialKey(ctx: AppContext): string {
  const p = ctx.state.principal;
  if (p?.kind === 'apiKey') return `ak:${p.apiKeyId}`;
  if (p?.kind === 'jwt') return `usr:${p.userId}`;
  return `ip:${ctx.ip}`;
}

export function rateLimit(buckets: TokenBuckets): AppMiddleware {
  return async (ctx, next) => {
    const result = buckets.take(credentialKey(ctx));
    if (!result.allowed) {
      throw new AppError('rate_limited', 'Too many requests', { 'Retry-After': String(result.retryAfterSeconds) });
    }
    await next();
  };
}
