/**
 * `Authorization: Bearer <token>` where the token is a login JWT or an API key (docs/api.md "Authentication"). API keys
 * are recognised by their `pixflow_` prefix; everything else is tried as a JWT. Any failure is the
 * same 401 so a caller learns nothing about why its credential was refused; a disabled user or a
 * suspended merchant is 403 (docs/api.md "Auth hardening").
 *
 * Order matters (docs/api.md "Rate limits"): an address that has failed too often is refused from memory
 * first; then the credential's own rate limit is counted (an API key by its fingerprint, a JWT
 * by its user once the signature checks out, which needs no database); only then is the credential
 * looked up. A failure counts against the address.
 *
 * The guards below run after `authenticate` and express who may call a route:
 * `requireJwt` (API keys get 403, e.g. creating or deleting keys) and `requireAdmin`.
 */
import { forbidden, unauthenticated } from '../../lib/errors';
import { API_KEY_PREFIX } from '../../services/accounts/api-keys';
import { tooManyRequests, type JwtClaims } from '../../services/accounts/auth';
import type { AppContext, AppMiddleware, Principal } from '../types';
import type { RequestLimiters } from './rate-limit';

export interface CredentialVerifier {
  /** Signature, expiry and shape of a JWT, without the database; null when invalid. */
  decodeJwt(token: string): JwtClaims | null;
  /** The principal behind valid claims, null when revoked; throws 403 for a disabled or suspended account. */
  resolveJwt(claims: JwtClaims): Promise<Principal | null>;
  /** An API key value's fingerprint (`apiKeyFingerprint`): its rate-limit and cache key, taken once per request. */
  fingerprintApiKey(value: string): string;
  /** The principal for an existing API key value and its fingerprint, else null; throws 403 for a suspended merchant. */
  authenticateApiKey(value: string, fingerprint: string): Promise<Principal | null>;
  /**
   * Waits until changes this request committed have reached every process's credential cache
   * (docs/performance.md "Where a charge's time goes"); run after a successful write made with a login token.
   */
  settleWrites?(): Promise<unknown>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const BEARER = /^Bearer[ ]+(\S{1,4096})\s*$/i;
const INVALID_CREDENTIAL = 'Invalid or expired credential';

export function authenticate(
  verifier: CredentialVerifier,
  limiters: Pick<RequestLimiters, 'credential' | 'authFailures'>,
): AppMiddleware {
  /** Counts the failure against the caller's address, then refuses. */
  async function fail(ctx: AppContext): Promise<never> {
    const outcome = await limiters.authFailures.consume(ctx.ip);
    if (!outcome.allowed)
      throw tooManyRequests('Too many failed authentication attempts from this address', outcome.retryAfterSeconds);
    throw unauthenticated(INVALID_CREDENTIAL);
  }

  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('authorization'));
    const token = match?.[1];
    if (!token) throw unauthenticated('Missing or malformed Authorization header (expected "Bearer <token>")');

    const blockedFor = limiters.authFailures.knownBlockedSeconds(ctx.ip);
    if (blockedFor > 0) throw tooManyRequests('Too many failed authentication attempts from this address', blockedFor);

    // An API key is known by its fingerprint, a JWT by its user once the signature checks out;
    // one hash per request serves the rate limit and the cache (docs/performance.md "Where a read's time goes").
    let fingerprint: string | undefined;
    let claims: JwtClaims | null = null;
    if (token.startsWith(API_KEY_PREFIX)) {
      fingerprint = verifier.fingerprintApiKey(token);
    } else {
      claims = verifier.decodeJwt(token);
      if (!claims) return fail(ctx);
    }
    const rateKey = fingerprint !== undefined ? `ak:${fingerprint}` : `usr:${(claims as JwtClaims).sub}`;

    const outcome = limiters.credential.consumeHeld(rateKey) ?? (await limiters.credential.consume(rateKey));
    if (!outcome.allowed) throw tooManyRequests('Too many requests', outcome.retryAfterSeconds);

    const principal =
      fingerprint !== undefined
        ? await verifier.authenticateApiKey(token, fingerprint)
        : await verifier.resolveJwt(claims as JwtClaims);
    if (!principal) return fail(ctx);
    ctx.state.principal = principal;
    await next();
    // Login tokens are what revokes keys, suspends merchants and bumps token versions: such a
    // write answers only once every cache has been told, so the very next request, to any
    // process, sees it. API-key traffic (charges) never pays for this.
    if (principal.kind === 'jwt' && verifier.settleWrites && !SAFE_METHODS.has(ctx.method) && ctx.status < 400) {
      await verifier.settleWrites();
    }
  };
}

export function requireJwt(): AppMiddleware {
  return async (ctx, next) => {
    if (ctx.state.principal?.kind !== 'jwt')
      throw forbidden('This action requires a login token (JWT), not an API key');
    await next();
  };
}

export function requireAdmin(): AppMiddleware {
  return async (ctx, next) => {
    const p = ctx.state.principal;
    if (p?.kind !== 'jwt' || p.role !== 'ADMIN') throw forbidden('Operator (ADMIN) access required');
    await next();
  };
}
