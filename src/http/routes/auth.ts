/** POST /v1/auth/login (docs/api.md "Authentication"; limits: docs/api.md "Auth hardening"). */
import type { AuthService } from '../../services/accounts/auth';
import { loginBody } from '../../contracts/auth';
import type { RouteModule } from '../types';
import { parseBody } from '../validation';

export function authRoutes(auth: AuthService): RouteModule {
  return (router, guards) => {
    router.post('/v1/auth/login', ...guards.anonymous, async (ctx) => {
      const { email, password } = parseBody(ctx, loginBody);
      ctx.body = await auth.login(email, password, ctx.ip);
    });
  };
}
