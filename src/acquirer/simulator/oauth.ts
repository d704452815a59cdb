/**
 * The simulator's OAuth2 token endpoint: RFC 6749 client credentials, with its own error format
 * (not problem details). Tokens are checked by `bearerAuth` (protocol.ts). Registered by server.ts.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { SimRoute } from './control';
import { randomAlnum } from './psp';

export interface OAuthDeps {
  route: (name: SimRoute) => Koa.Middleware;
  tokens: Map<string, number>;
  clientId: string;
  clientSecret: string;
  tokenTtlSeconds: number;
}

/** Whether the Basic credentials of the request are the configured client's. */
function knownClient(ctx: Koa.Context, d: OAuthDeps): boolean {
  const basic = /^Basic (\S+)$/.exec(ctx.get('authorization'))?.[1];
  const decoded = Buffer.from(basic ?? '', 'base64').toString();
  const sep = decoded.indexOf(':');
  return sep >= 0 && decoded.slice(0, sep) === d.clientId && decoded.slice(sep + 1) === d.clientSecret;
}

export function oauthRoutes(router: Router, d: OAuthDeps): void {
  router.post('/oauth/token', d.route('token'), (ctx) => {
    if (!knownClient(ctx, d)) {
      ctx.status = 401;
      ctx.set('www-authenticate', 'Basic');
      ctx.body = { error: 'invalid_client' };
      return;
    }
    if ((ctx.request.body as { grant_type?: unknown } | undefined)?.grant_type !== 'client_credentials') {
      ctx.status = 400;
      ctx.body = { error: 'unsupported_grant_type' };
      return;
    }
    const token = randomAlnum(40);
    d.tokens.set(token, Date.now() + d.tokenTtlSeconds * 1000);
    ctx.set('cache-control', 'no-store');
    ctx.body = {
      access_token: token,
      token_type: 'Bearer',
      expires_in: d.tokenTtlSeconds,
      scope: 'cob.write cob.read pix.write pix.read',
    };
  });
}
