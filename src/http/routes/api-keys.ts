/**
 * API keys (docs/api.md "Authentication"): create and delete need a JWT (an API key gets 403);
 * (ext) the list accepts either credential and shows masked values, newest first.
 */
import type { ApiKeysService } from '../../services/accounts/api-keys';
import { merchantIdOf, principalOf } from '../principal';
import { createApiKeyBody } from '../../contracts/auth';
import type { RouteModule } from '../types';
import { idParam } from '../../contracts/validation';
import { parseBody, parseParams } from '../validation';
import { z } from 'zod';

export const apiKeyIdParams = z.object({ id: idParam });

export function apiKeyRoutes(apiKeys: ApiKeysService): RouteModule {
  return (router, guards) => {
    router.post('/v1/api-keys', ...guards.jwtOnly, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const input = parseBody(ctx, createApiKeyBody);
      const p = principalOf(ctx);
      ctx.status = 201;
      ctx.body = { apiKey: await apiKeys.create(merchantId, p.kind === 'jwt' ? p.userId : null, input) };
    });

    router.get('/v1/api-keys', ...guards.authenticated, async (ctx) => {
      ctx.body = { apiKeys: await apiKeys.list(merchantIdOf(ctx)) };
    });

    router.delete('/v1/api-keys/:id', ...guards.jwtOnly, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id } = parseParams(ctx, apiKeyIdParams);
      await apiKeys.remove(merchantId, id);
      ctx.body = { message: 'API key deleted' };
    });
  };
}
