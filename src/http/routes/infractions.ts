/**
 * MED infractions for merchants (docs/api.md "Infractions"): list, read, defend, and download a
 * defense's file. The upload is read only after the caller is authenticated and the infraction is
 * found to take a defense (src/http/multipart.ts).
 */
import { z } from 'zod';
import type { InfractionDefenses } from '../../services/med/defenses';
import { merchantIdOf } from '../principal';
import type { RouteModule } from '../types';
import { idParam } from '../../contracts/validation';
import {
  DEFENSE_MAX_FILES,
  DEFENSE_MAX_TOTAL_BYTES,
  defenseFileParams,
  listInfractionsQuery,
} from '../../contracts/infractions';
import { parseParams, parseQuery } from '../validation';
import { readMultipart } from '../multipart';

const infractionParams = z.object({ id: idParam });

export function infractionRoutes(infractions: InfractionDefenses): RouteModule {
  return (router, guards) => {
    router.get('/v1/infractions', ...guards.authenticated, async (ctx) => {
      ctx.body = await infractions.list(merchantIdOf(ctx), parseQuery(ctx, listInfractionsQuery));
    });

    router.get('/v1/infractions/:id', ...guards.authenticated, async (ctx) => {
      const { id } = parseParams(ctx, infractionParams);
      ctx.body = { infraction: await infractions.get(merchantIdOf(ctx), id) };
    });

    router.post('/v1/infractions/:id/defenses', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id } = parseParams(ctx, infractionParams);
      await infractions.checkDefensible(merchantId, id);
      const form = await readMultipart(ctx, {
        maxFiles: DEFENSE_MAX_FILES,
        maxTotalFileBytes: DEFENSE_MAX_TOTAL_BYTES,
        maxFieldBytes: 16 * 1024,
        filesParam: 'files',
      });
      ctx.status = 201;
      ctx.body = { defense: await infractions.submit(merchantId, id, form) };
    });

    router.get('/v1/infractions/:id/defenses/:defenseId/files/:fileId', ...guards.authenticated, async (ctx) => {
      const { id, defenseId, fileId } = parseParams(ctx, defenseFileParams);
      const file = await infractions.file(merchantIdOf(ctx), { infractionId: id, defenseId, fileId });
      ctx.set('Content-Type', file.mime_type);
      const ascii = file.name.replace(/[^\x20-\x7e]/g, '_');
      ctx.set(
        'Content-Disposition',
        `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.name)}`,
      );
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = file.content;
    });
  };
}
