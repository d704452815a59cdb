/**
 * `Authorization: Bearer <token>` where the token is a login JWT or an API key (SPEC §5). API keys
 * are recognised by their `pixflow_` prefix; everything else is tried as a JWT. Any failure is the
 * same 401 so a caller learns nothing about why its credential was refused.
 *
 * The guards below run after `authenticate` and express who may call a route:
 * `requireJwt` (API keys get 403, e.g. creating or deleting keys) and `requireAdmin`.
 */
import { forbidden, unauthenticated } from '../../lib/errors';
import { API_KEY_PREFIX } from '../../services/api-keys';
import type { AppMiddleware, Principal } from '../types';

export interface CredentialVerifier {
  /** The principal for a valid, unexpired JWT, else null. */
  verifyJwt(token: string): Principal | null;
  /** The principal for an existing API key value, else null. */
  authenticateApiKey(value: string): Promise<Principal | null>;
}

const BEARER = /^Bearer[ ]+(\S{1,4096})\s*$/i;

export function authenticate(verifier: CredentialVerifier): AppMiddleware {
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('authorization'));
    const token = match?.[1];
    if (!token) throw unauthenticated('Missing or malformed Authorization header (expected "Bearer <token>")');
    const principal = token.startsWith(API_KEY_PREFIX)
      ? await verifier.authenticateApiKey(token)
      : verifier.verifyJwt(token);
    if (!principal) throw unauthenticated('Invalid or expired credential');
    ctx.state.principal = principal;
    await next();
  };
}

export function requireJwt(): AppMiddleware {
  return async (ctx, next) => {
    if (ctx.state.principal?.kind !== 'jwt') throw forbidden('This action requires a login token (JWT), not an API key');
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
