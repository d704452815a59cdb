/**
 * Dashboard sign-in (docs/dashboard.md "How the session is kept safe"): the login of docs/api.md
 * "Authentication" — the same service, the same brute-force limits — for merchant users only, and
 * the CSRF token bound to the session's token.
 *
 * The CSRF token is an HMAC of the session token under a key derived from JWT_SECRET (a signed
 * double-submit token): it is worthless without the session it belongs to and needs no storage.
 */
import crypto from 'node:crypto';
import type { Config } from '../../config';
import { forbidden } from '../../lib/errors';
import type { AuthService, Principal } from './auth';

export const OPERATOR_REFUSED = 'Operators (ADMIN) cannot sign in to the dashboard: use the ops CLI';

export interface DashboardSignIn {
  token: string;
  csrfToken: string;
  maxAgeSeconds: number;
  user: { id: string; email: string; role: 'USER' };
}

export interface DashboardSession {
  principal: Principal;
  csrfToken: string;
}

export function createDashboardSessions(deps: { auth: AuthService; config: Pick<Config, 'JWT_SECRET' | 'JWT_TTL'> }) {
  const { auth, config } = deps;
  const csrfKey = crypto.createHmac('sha256', config.JWT_SECRET).update('pixflow dashboard csrf v1').digest();
  const csrfFor = (token: string): string => crypto.createHmac('sha256', csrfKey).update(token).digest('base64url');

  /** The existing login (its limits count here too); an operator's correct login is still refused. */
  async function signIn(email: string, password: string, address: string): Promise<DashboardSignIn> {
    const result = await auth.login(email, password, address);
    if (result.user.role !== 'USER') throw forbidden(OPERATOR_REFUSED);
    return {
      token: result.token,
      csrfToken: csrfFor(result.token),
      maxAgeSeconds: config.JWT_TTL,
      user: { id: result.user.id, email: result.user.email, role: 'USER' },
    };
  }

  /** The merchant user behind a session token, or null when it is invalid, expired, revoked or not a USER's. */
  async function resume(token: string): Promise<DashboardSession | null> {
    const claims = auth.decodeToken(token);
    if (!claims || claims.role !== 'USER') return null;
    const principal = await auth.resolveToken(claims);
    if (!principal) return null;
    return { principal, csrfToken: csrfFor(token) };
  }

  /** Whether `presented` is the CSRF token of the session `token` (constant time). */
  function csrfMatches(token: string, presented: string | undefined): boolean {
    if (!presented) return false;
    const expected = Buffer.from(csrfFor(token));
    const given = Buffer.from(presented);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  }

  /** Cheap shape check before any database work: signature and expiry, USER role. */
  function looksValid(token: string): boolean {
    return auth.decodeToken(token)?.role === 'USER';
  }

  return { signIn, resume, csrfMatches, looksValid };
}

export type DashboardSessions = ReturnType<typeof createDashboardSessions>;
