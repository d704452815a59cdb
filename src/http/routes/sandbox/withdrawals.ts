/**
 * Sandbox for withdrawals (only mounted while the acquirer is the simulator):
 * POST /v1/sandbox/withdrawals/:id/complete|fail|return → 202, the outcome then arriving through
 * the real callback path.
 */
import { z } from 'zod';
import type { SandboxTransferAction, WithdrawalSandbox } from '../../../services/withdrawals/sandbox';
import { merchantIdOf } from '../../principal';
import { sandboxTransferOutcomeBody } from '../../../contracts/withdrawals';
import type { RouteModule } from '../../types';
import { idParam, validate } from '../../../contracts/validation';
import { parseParams } from '../../validation';

const withdrawalParams = z.object({ id: idParam });
const ACTIONS: SandboxTransferAction[] = ['complete', 'fail', 'return'];

export function withdrawalSandboxRoutes(sandbox: WithdrawalSandbox): RouteModule {
  return (router, guards) => {
    for (const action of ACTIONS) {
      router.post(`/v1/sandbox/withdrawals/:id/${action}`, ...guards.authenticated, async (ctx) => {
        const merchantId = merchantIdOf(ctx);
        const { id } = parseParams(ctx, withdrawalParams);
        const input = validate(sandboxTransferOutcomeBody, ctx.request.body ?? {}, 'Request body');
        const { transferId } = await sandbox.act(merchantId, id, action, input.reason);
        ctx.status = 202;
        ctx.body = { message: `Transfer ${action} sent by the sandbox acquirer`, transferId };
      });
    }
  };
}
