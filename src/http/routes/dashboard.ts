/**
 * The merchants' dashboard (docs/dashboard.md): its page and files under /dashboard, and its session.
 *
 *   POST   /dashboard/session  {email, password} → HttpOnly cookie + {user, csrfToken, sandbox}
 *   GET    /dashboard/session  → {user, csrfToken, sandbox} for the cookie's session, else 401
 *   DELETE /dashboard/session  → the cookie cleared (with the CSRF token when a session exists)
 *
 * The API calls of the pages go through src/http/middleware/dashboard-api.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loginBody } from '../../contracts/auth';
import { forbidden, notFound, unauthenticated } from '../../lib/errors';
import type { DashboardSessions } from '../../services/accounts/dashboard-sessions';
import { DASHBOARD_FILES, dashboardBuildDir } from '../dashboard/assets';
import { CSRF_HEADER, fromOwnOrigin, sessionCookie, sessionTokenOf, setDashboardHeaders } from '../dashboard/security';
import { BAD_CSRF, CROSS_SITE, NO_SESSION } from '../middleware/dashboard-api';
import type { AppContext, AppRouter, RouteModule } from '../types';
import { parseBody } from '../validation';

const NOT_BUILT = 'The dashboard is not built: run `npm run dashboard:build`';

export function dashboardRoutes(sessions: DashboardSessions, opts: { secureCookie: boolean }): RouteModule {
  return (router, guards) => {
    // The sandbox is on when its routes are mounted (the embedded acquirer simulator).
    const sandboxOn = (r: AppRouter): boolean => r.stack.some((layer) => String(layer.path).startsWith('/v1/sandbox/'));

    const serve = (file: string) => async (ctx: AppContext) => {
      setDashboardHeaders(ctx);
      const dir = dashboardBuildDir();
      if (!dir) throw notFound(NOT_BUILT);
      ctx.type = DASHBOARD_FILES[file] ?? 'application/octet-stream';
      ctx.set('Cache-Control', 'no-cache');
      ctx.vary('Accept-Encoding');
      // The build's gzip form when the browser takes it (tools/dashboard/src/build.ts); else the file.
      const gzipped = path.join(dir, `${file}.gz`);
      if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip' && fs.existsSync(gzipped)) {
        ctx.set('Content-Encoding', 'gzip');
        ctx.body = fs.createReadStream(gzipped);
        ctx.length = fs.statSync(gzipped).size;
        return;
      }
      ctx.body = fs.createReadStream(path.join(dir, file));
    };
    router.get('/dashboard', serve('index.html'));
    for (const file of Object.keys(DASHBOARD_FILES)) {
      if (file !== 'index.html') router.get(`/dashboard/assets/${file}`, serve(file));
    }

    router.post('/dashboard/session', ...guards.anonymous, async (ctx) => {
      setDashboardHeaders(ctx);
      ctx.set('Cache-Control', 'no-store');
      if (!fromOwnOrigin(ctx)) throw forbidden(CROSS_SITE);
      const { email, password } = parseBody(ctx, loginBody);
      const signedIn = await sessions.signIn(email, password, ctx.ip);
      ctx.set('Set-Cookie', sessionCookie(signedIn.token, signedIn.maxAgeSeconds, opts.secureCookie));
      ctx.body = { user: signedIn.user, csrfToken: signedIn.csrfToken, sandbox: sandboxOn(router) };
    });

    router.get('/dashboard/session', async (ctx) => {
      setDashboardHeaders(ctx);
      ctx.set('Cache-Control', 'no-store');
      const token = sessionTokenOf(ctx);
      const session = token ? await sessions.resume(token) : null;
      if (!session) throw unauthenticated(NO_SESSION);
      const { principal } = session;
      ctx.body = {
        user: { id: principal.kind === 'jwt' ? principal.userId : '', role: principal.role },
        csrfToken: session.csrfToken,
        sandbox: sandboxOn(router),
      };
    });

    router.delete('/dashboard/session', async (ctx) => {
      setDashboardHeaders(ctx);
      ctx.set('Cache-Control', 'no-store');
      const token = sessionTokenOf(ctx);
      if (token) {
        if (!fromOwnOrigin(ctx)) throw forbidden(CROSS_SITE);
        if (!sessions.csrfMatches(token, ctx.get(CSRF_HEADER) || undefined)) throw forbidden(BAD_CSRF);
      }
      ctx.set('Set-Cookie', sessionCookie('', 0, opts.secureCookie));
      ctx.status = 204;
    });
  };
}
