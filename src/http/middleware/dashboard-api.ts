/**
 * The dashboard's door to the REST API (docs/dashboard.md "How the session is kept safe"):
 * `/dashboard/api/v1/…` is `/v1/…` with the session cookie as the credential. The cookie becomes
 * the `Authorization: Bearer` header the usual `authenticate` guard checks, so every rule of the
 * API (limits, roles, scoping, messages) applies unchanged; `/v1/…` itself never reads a cookie,
 * so API keys and Bearer tokens are not exposed to cross-site requests.
 *
 * Here, before that: only the merchant's own resources are reachable, and every state-changing
 * call must come from our origin and carry the session's CSRF token.
 */
import { forbidden, notFound, unauthenticated } from '../../lib/errors';
import type { DashboardSessions } from '../../services/accounts/dashboard-sessions';
import { CSRF_HEADER, fromOwnOrigin, sessionTokenOf, setDashboardHeaders } from '../dashboard/security';
import type { AppMiddleware } from '../types';

export const DASHBOARD_API_PREFIX = '/dashboard/api';

/** What the pages use; operator, login and acquirer routes are not among them. */
const REACHABLE = [
  '/v1/merchants/me',
  '/v1/charges',
  '/v1/api-keys',
  '/v1/webhooks/merchant',
  '/v1/infractions',
  '/v1/sandbox/charges',
  '/v1/sandbox/infractions',
];

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const NO_SESSION = 'Sign in to the dashboard: no session, or it has expired';
export const CROSS_SITE = 'Cross-site request refused';
export const BAD_CSRF = `Missing or invalid CSRF token (${CSRF_HEADER} header)`;

function reachable(target: string): boolean {
  // Plain segments only: no dot segments or escapes the router might read differently.
  if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(target) || target.split('/').some((s) => s === '.' || s === '..')) return false;
  const lower = target.toLowerCase();
  return REACHABLE.some((p) => lower === p || lower.startsWith(`${p}/`) || lower.startsWith(`${p}.`));
}

export function dashboardApi(sessions: Pick<DashboardSessions, 'csrfMatches'>): AppMiddleware {
  return async (ctx, next) => {
    const path = ctx.path;
    if (!path.toLowerCase().startsWith(`${DASHBOARD_API_PREFIX}/`)) return next();
    setDashboardHeaders(ctx);
    ctx.set('Cache-Control', 'no-store');
    const target = path.slice(DASHBOARD_API_PREFIX.length);
    if (!reachable(target)) throw notFound('Not found');
    const token = sessionTokenOf(ctx);
    if (!token) throw unauthenticated(NO_SESSION);
    if (!SAFE_METHODS.has(ctx.method)) {
      if (!fromOwnOrigin(ctx)) throw forbidden(CROSS_SITE);
      if (!sessions.csrfMatches(token, ctx.get(CSRF_HEADER) || undefined)) throw forbidden(BAD_CSRF);
    }
    ctx.path = target;
    ctx.req.headers.authorization = `Bearer ${token}`;
    return next();
  };
}
