/**
 * Sandbox (docs/api.md "Sandbox"; only mounted while the acquirer is the simulator): the merchant
 * drives the simulator, which then calls us back through the real callback path.
 */
import { z } from 'zod';
import type { ChargeSandbox } from '../../../services/charges/sandbox';
import { merchantIdOf } from '../../principal';
import { sandboxPayBody } from '../../../contracts/charges';
import type { RouteModule } from '../../types';
import { idParam, validate } from '../../../contracts/validation';
import { parseParams } from '../../validation';

const chargeParams = z.object({ id: idParam });

export function sandboxRoutes(sandbox: ChargeSandbox): RouteModule {
  return (router, guards) => {
    router.post('/v1/sandbox/charges/:id/pay', ...guards.authenticated, async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const { id } = parseParams(ctx, chargeParams);
      const input = validate(sandboxPayBody, ctx.request.body ?? {}, 'Request body');
      const { endToEndId } = await sandbox.pay(merchantId, id, input.payer, input.paidOn);
      ctx.status = 202;
      ctx.body = { message: 'Payment sent by the sandbox acquirer', endToEndId };
    });
  };
}
