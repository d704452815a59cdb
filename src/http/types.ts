/**
 * Shapes the HTTP layer hangs on a Koa context. Route modules type their handlers with these so
 * that `ctx.state.principal` is known to exist after the auth middleware ran.
 */
import type { ParameterizedContext, Middleware } from 'koa';
import type Router from '@koa/router';
import type { Logger } from '../lib/logger';

import type { AuthService, Principal } from '../services/accounts/auth';
import type { DashboardSessions } from '../services/accounts/dashboard-sessions';
import type { ApiKeysService } from '../services/accounts/api-keys';
import type { MerchantsService } from '../services/accounts/merchants';
import type { StatementService } from '../services/ledger/statement';
import type { UserAccessService } from '../services/accounts/user-access';
import type { AuditLogService } from '../services/platform/audit';

export type { Principal, Role } from '../services/accounts/auth';

export interface AppState {
  requestId: string;
  log: Logger;
  /** Set by the authenticate middleware; absent on public routes. */
  principal?: Principal;
}

export type AppContext = ParameterizedContext<AppState>;
export type AppMiddleware = Middleware<AppState>;
export type AppRouter = Router<AppState>;

/** Middleware chains a route module puts in front of its handlers. */
export interface RouteGuards {
  /** No credential (login); the per-address limit in front of the router already applies. */
  anonymous: AppMiddleware[];
  /** The per-credential rate limit, then a JWT or an API key (403 if suspended or disabled). */
  authenticated: AppMiddleware[];
  /** As `authenticated`, but an API key gets 403 (creating and deleting API keys). */
  jwtOnly: AppMiddleware[];
  /** As `authenticated`, but only an ADMIN's JWT; anyone else gets 403. */
  admin: AppMiddleware[];
}

/** A group of endpoints: adds its routes to the app's router. Later features plug in the same way. */
export type RouteModule = (router: AppRouter, guards: RouteGuards) => void;

/** The account services the app's own routes use (built by src/runtime/composition.ts `createAccountServices`). */
export interface AccountServices {
  auth: AuthService;
  /** Dashboard sign-in and CSRF tokens over `auth` (docs/dashboard.md "How the session is kept safe"). */
  dashboardSessions: DashboardSessions;
  apiKeys: ApiKeysService;
  merchants: MerchantsService;
  /** The merchant's statement (docs/api.md "Statement"). */
  statement: StatementService;
  userAccess: UserAccessService;
  auditLog: AuditLogService;
  /** Readiness of the database (GET /readyz). */
  health: { database: () => Promise<void> };
}
