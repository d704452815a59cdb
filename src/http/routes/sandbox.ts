/**
 * Sandbox (DECISIONS "Sandbox"; only mounted while the acquirer is the simulator): the merchant
 * drives the simulator, which then calls us back through the real callback path.
 */
import { z } from 'zod';
import type { ChargesService } from '../../services/charges';
import type { SimulatorControl } from '../../acquirer/simulator/server';
import { invalid } from '../../lib/errors';
import { merchantIdOf } from '../principal';
import { sandboxPayBody } from '../schemas/charges';
import type { RouteModule } from '../types';
import { idParam, parseParams, validate } from '../validation';

const chargeParams = z.object({ id: idParam });

export function sandboxRoutes(charges: ChargesService, simulator: SimulatorControl): RouteModule {
  return (router, guards) => {
    router.post('/v1/sandbox/charges/:id/pay', ...guards.authenticated, async (ctx) => {
      const { id } = parseParams(ctx, chargeParams);
      const input = validate(sandboxPayBody, ctx.request.body ?? {}, 'Request body');
      const charge = await charges.get(merchantIdOf(ctx), id);
      if (!charge.txid) throw invalid('This charge has no cob at the acquirer (it FAILED at creation)');
      const { endToEndId } = await simulator.payCob(charge.txid, { payer: input.payer });
      ctx.status = 202;
      ctx.body = { message: 'Payment sent by the sandbox acquirer', endToEndId };
    });
  };
}
