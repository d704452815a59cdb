/**
 * Shapes the HTTP layer hangs on a Koa context. Route modules type their handlers with these so
 * that `ctx.state.principal` is known to exist after the auth middleware ran.
 */
import type { ParameterizedContext, Middleware } from 'koa';
import type Router from '@koa/router';
import type { Logger } from '../lib/logger';

export type Role = 'USER' | 'ADMIN';

/** Who is calling: a logged-in user (JWT) or a merchant's API key. */
export type Principal =
  | { kind: 'jwt'; userId: string; email?: string; merchantId: string | null; role: Role }
  | { kind: 'apiKey'; apiKeyId: string; merchantId: string; role: 'USER' };

export interface AppState {
  requestId: string;
  log: Logger;
  /** Set by the authenticate middleware; absent on public routes. */
  principal?: Principal;
}

export type AppContext = ParameterizedContext<AppState>;
export type AppMiddleware = Middleware<AppState>;
export type AppRouter = Router<AppState>;
