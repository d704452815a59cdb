/**
 * The Koa application: cross-cutting middleware in a fixed order, then every route module.
 *
 *   trace span → request id → access log → errors → per-address rate limit → dashboard session door →
 *   JSON body → router (guards per route) → 404/405
 *
 * `createApp` mounts the account and operator routes (auth, API keys, merchants, admin) over the
 * services of src/runtime/composition.ts; the payment routes (charges, withdrawals, webhooks,
 * acquirer callbacks, sandbox) arrive through `routes`, using the same guards.
 * Nothing here starts Temporal or listens on a port: the entry points (src/cli/*) do that.
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { Knex } from 'knex';
import type { AppConfig } from '../config';
import { createLogger, type Logger } from '../lib/logger';
import { cacheInvalidation } from '../services/platform/cache-invalidation';
import { accessLog } from './middleware/access-log';
import { authenticate, requireAdmin, requireJwt } from './middleware/authenticate';
import { jsonBody } from './middleware/body';
import { requestLogContext } from './middleware/log-context';
import { httpMetrics } from './middleware/metrics';
import { errorHandler } from './middleware/errors';
import { addressRateLimit, createRequestLimiters } from './middleware/rate-limit';
import { requestId } from './middleware/request-id';
import { traceRequests } from './middleware/tracing';
import { adminRoutes } from './routes/admin';
import { adminAccessRoutes } from './routes/admin-access';
import { apiKeyRoutes } from './routes/api-keys';
import { apiKeyFingerprint } from '../services/accounts/api-keys';
import { authRoutes } from './routes/auth';
import { healthRoutes, type ReadinessCheck } from './routes/health';
import { merchantRoutes } from './routes/merchants';
import { metricsRoutes } from './routes/metrics';
import { docsRoutes } from './routes/docs';
import { dashboardRoutes } from './routes/dashboard';
import { dashboardApi } from './middleware/dashboard-api';
import type { AccountServices, AppState, RouteGuards, RouteModule } from './types';

export interface AppDeps {
  config: AppConfig;
  knex: Knex;
  /** Defaults to a JSON logger on stdout at level info. */
  logger?: Logger;
  /**
   * Readiness checks for GET /readyz besides the database (which is always checked), e.g.
   * `{ temporal: () => connection.healthService.check({}) }`. Each must settle within 2 s.
   */
  checks?: Record<string, ReadinessCheck>;
  /** The account services, built by the composition root (src/runtime/composition.ts `createAccountServices`). */
  services: AccountServices;
  /** The payment routes (charges, withdrawals, webhooks, callbacks, sandbox), registered after the account routes. */
  routes?: RouteModule[];
  /**
   * Trust X-Forwarded-For for the client address (per-address rate limits). Only behind a proxy
   * that sets it; otherwise a client could pick its own address. Defaults to config.TRUST_PROXY.
   */
  trustProxy?: boolean;
  /** METRICS_TOKEN: when set, GET /metrics wants it as a bearer token. */
  metricsToken?: string;
}

export function createApp(deps: AppDeps): Koa<AppState> {
  const { config, knex } = deps;
  const logger = deps.logger ?? createLogger();

  const { auth, dashboardSessions, apiKeys, merchants, statement, userAccess, auditLog, health } = deps.services;

  // Rate limits run before any authentication work (docs/api.md "Rate limits"): per address for every
  // request in front of the router, per credential inside `authenticate` before the lookup.
  const limiters = createRequestLimiters(knex, config);
  const authed = [
    authenticate(
      {
        decodeJwt: auth.decodeToken,
        resolveJwt: auth.resolveToken,
        fingerprintApiKey: apiKeyFingerprint,
        authenticateApiKey: apiKeys.authenticatePresented,
        settleWrites: () => cacheInvalidation(knex).barrier(),
      },
      limiters,
    ),
  ];
  const guards: RouteGuards = {
    anonymous: [],
    authenticated: authed,
    jwtOnly: [...authed, requireJwt()],
    admin: [...authed, requireAdmin()],
  };

  const router = new Router<AppState>();
  const modules: RouteModule[] = [
    healthRoutes({ database: health.database, ...deps.checks }),
    authRoutes(auth),
    apiKeyRoutes(apiKeys),
    merchantRoutes(merchants, statement),
    metricsRoutes({ token: deps.metricsToken }),
    docsRoutes(),
    dashboardRoutes(dashboardSessions, { secureCookie: config.NODE_ENV === 'production' }),
    adminRoutes({ auditLog, merchants }),
    adminAccessRoutes(userAccess),
    ...(deps.routes ?? []),
  ];
  for (const register of modules) register(router, guards);

  const app = new Koa<AppState>();
  app.proxy = deps.trustProxy ?? config.TRUST_PROXY;
  // Only the entry our own proxy appended: anything to its left was written by the client.
  app.maxIpsCount = 1;
  app.use(traceRequests());
  app.use(requestId(logger));
  app.use(requestLogContext());
  app.use(accessLog(logger));
  app.use(httpMetrics());
  app.use(errorHandler());
  app.use(addressRateLimit(limiters.address));
  // /dashboard/api/v1/… → /v1/… with the session cookie as the credential (docs/dashboard.md "How the session is kept safe").
  app.use(dashboardApi(dashboardSessions));
  app.use(jsonBody(config.BODY_LIMIT_BYTES));
  app.use(router.routes());
  app.use(router.allowedMethods());
  // Errors escaping the middleware (e.g. a client hanging up mid-response) are logged, not printed.
  app.on('error', (err: unknown) => logger.warn({ err }, 'koa error'));
  return app;
}
