/**
 * Sandbox MED endpoints (docs/operations.md "MED infractions"; only mounted while the acquirer is the
 * simulator), with the merchant's own credentials and scoped to its own charges and infractions.
 */
import { z } from 'zod';
import type { InfractionSandbox } from '../../../services/med/sandbox';
import { merchantIdOf } from '../../principal';
import type { RouteModule } from '../../types';
import { idParam, validate } from '../../../contracts/validation';
import { sandboxRaiseInfractionBody } from '../../../contracts/infractions';
import { parseParams } from '../../validation';

const infractionParams = z.object({ id: idParam });

export function infractionSandboxRoutes(sandbox: InfractionSandbox): RouteModule {
  return (router, guards) => {
    router.post('/v1/sandbox/infractions', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const input = validate(sandboxRaiseInfractionBody, ctx.request.body ?? {}, 'Request body');
      ctx.status = 202;
      ctx.body = {
        message: 'Infraction raised by the sandbox acquirer',
        infraction: await sandbox.raise(merchantId, input),
      };
    });
    for (const decision of ['accept', 'reject'] as const) {
      router.post(`/v1/sandbox/infractions/:id/${decision}`, ...guards.authenticated, async (ctx) => {
        const merchantId = merchantIdOf(ctx);
        const { id } = parseParams(ctx, infractionParams);
        ctx.status = 202;
        ctx.body = {
          message:
            decision === 'accept'
              ? 'Infraction accepted by the sandbox acquirer'
              : 'Infraction rejected by the sandbox acquirer',
          infraction: await sandbox.decide(merchantId, id, decision),
        };
      });
    }
  };
}
