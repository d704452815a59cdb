/**
 * Sandbox PIX keys (docs/architecture.md "PIX keys: registration and activation"; only mounted while the acquirer
 * is the simulator): POST /v1/sandbox/pix-keys/:id/activate|deactivate → 202, the status then
 * arriving through the acquirer's signed callback.
 */
import { z } from 'zod';
import type { PixKeySandbox, SandboxPixKeyAction } from '../../../services/pix-keys/sandbox';
import { merchantIdOf } from '../../principal';
import type { RouteModule } from '../../types';
import { idParam } from '../../../contracts/validation';
import { parseParams } from '../../validation';

const pixKeyParams = z.object({ id: idParam });
const ACTIONS: SandboxPixKeyAction[] = ['activate', 'deactivate'];

export function pixKeySandboxRoutes(sandbox: PixKeySandbox): RouteModule {
  return (router, guards) => {
    for (const action of ACTIONS) {
      router.post(`/v1/sandbox/pix-keys/:id/${action}`, ...guards.authenticated, async (ctx) => {
        const merchantId = merchantIdOf(ctx);
        const { id } = parseParams(ctx, pixKeyParams);
        const pixKey = await sandbox.act(merchantId, id, action);
        ctx.status = 202;
        ctx.body = {
          message: `Key ${action === 'activate' ? 'activation' : 'deactivation'} sent by the sandbox acquirer`,
          pixKey,
        };
      });
    }
  };
}
