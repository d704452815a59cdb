/**
 * The control surface over HTTP, under /_sim, for a simulator in another process (docker compose,
 * manual testing). Same actions as SimulatorControl's methods. Unauthenticated on purpose: the
 * simulator listens on 127.0.0.1 by default and holds no real money.
 *
 * Unknown ids → 404, impossible transitions → 409, bad bodies → 400.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import { z } from 'zod';
import type { SimulatorControl } from './control';
import { SimulatorStateError } from './psp';
import { answerControl, problem } from './problem';
import { ACQUIRER_PIX_KEY_STATUSES, DEVOLUCAO_OUTCOMES } from '../../contracts/statuses';

const party = z.object({ name: z.string().min(1).max(200), document: z.string().regex(/^(\d{11}|[0-9A-Z]{14})$/) });
const payBody = z.object({
  payer: party.optional(),
  amount: z.number().int().min(1).optional(),
  /** A cobv paid on this São Paulo date (YYYY-MM-DD): the amount due that day. */
  paidOn: z.iso.date().optional(),
});
const reasonBody = z.object({ reason: z.string().max(140).optional() });
const refundBody = z.object({
  outcome: z.enum(DEVOLUCAO_OUTCOMES),
  reason: z.string().max(140).optional(),
});
const infractionBody = z.object({
  endToEndId: z.string().min(1),
  reason: z.string().max(140).optional(),
  details: z.string().max(2_000).optional(),
  analysis: z.enum(['AGREED', 'DISAGREED']).optional(),
});
const keyStatusBody = z.object({ status: z.enum(ACQUIRER_PIX_KEY_STATUSES) });
const routeName = z.enum([
  'token',
  'createCob',
  'getCob',
  'removeCob',
  'refund',
  'getRefund',
  'transfer',
  'getTransfer',
  'registerKey',
  'defense',
]);
const faultsBody = z.strictObject({
  errorRate: z.number().min(0).max(1).optional(),
  errorStatus: z.number().int().min(400).max(599).optional(),
  latencyMs: z.number().int().min(0).max(120_000).optional(),
  failNext: z
    .object({ route: routeName, times: z.number().int().min(0), status: z.number().int().min(400).max(599) })
    .optional(),
  duplicateCallbacks: z.boolean().optional(),
  outOfOrderCallbacks: z.boolean().optional(),
  outOfOrderCallbacksMs: z.number().int().min(0).max(60_000).optional(),
});

/** Runs a control action with a validated body; maps simulator state errors to 404/409. */
const act =
  <S extends z.ZodType>(schema: S, fn: (ctx: Koa.Context, body: z.infer<S>) => unknown) =>
  async (ctx: Koa.Context): Promise<void> => {
    const r = schema.safeParse(ctx.request.body ?? {});
    if (!r.success) {
      return problem(
        ctx,
        400,
        'ControleInvalido',
        'Requisição de controle inválida',
        r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
      );
    }
    await answerControl(ctx, () => fn(ctx, r.data));
  };
const none = z.looseObject({});
const param = (ctx: Koa.Context, name: string): string => String((ctx.params as Record<string, string>)[name] ?? '');
const found = <T>(what: string, v: T | undefined): T => {
  if (v === undefined) throw new SimulatorStateError(`unknown ${what}`, 'unknown');
  return v;
};

export function controlRoutes(router: Router, control: SimulatorControl): void {
  cobAndRefundControl(router, control);
  transferAndKeyControl(router, control);
  infractionControl(router, control);
  simulatorSwitches(router, control);
}

function cobAndRefundControl(router: Router, control: SimulatorControl): void {
  router.post(
    '/_sim/cob/:txid/pay',
    act(payBody, (ctx, b) => control.payCob(param(ctx, 'txid'), b)),
  );
  router.post(
    '/_sim/cob/:txid/expire',
    act(none, (ctx) => control.expireCob(param(ctx, 'txid'))),
  );
  router.get(
    '/_sim/cob/:txid',
    act(none, (ctx) => found('cob', control.getCob(param(ctx, 'txid')))),
  );
  router.post(
    '/_sim/refunds/:id/settle',
    act(refundBody, (ctx, b) => control.settleRefund(param(ctx, 'id'), b.outcome, b.reason)),
  );
  router.get(
    '/_sim/refunds/:id',
    act(none, (ctx) => found('refund', control.getRefund(param(ctx, 'id')))),
  );
}

function transferAndKeyControl(router: Router, control: SimulatorControl): void {
  router.post(
    '/_sim/transfers/:id/complete',
    act(none, (ctx) => control.completeTransfer(param(ctx, 'id'))),
  );
  router.post(
    '/_sim/transfers/:id/fail',
    act(reasonBody, (ctx, b) => control.failTransfer(param(ctx, 'id'), b.reason)),
  );
  router.post(
    '/_sim/transfers/:id/return',
    act(reasonBody, (ctx, b) => control.returnTransfer(param(ctx, 'id'), b.reason)),
  );
  router.get(
    '/_sim/transfers/:id',
    act(none, (ctx) => found('transfer', control.getTransfer(param(ctx, 'id')))),
  );
  router.post(
    '/_sim/keys/:id/status',
    act(keyStatusBody, (ctx, b) => control.setKeyStatus(param(ctx, 'id'), b.status)),
  );
}

function infractionControl(router: Router, control: SimulatorControl): void {
  router.post(
    '/_sim/infractions',
    act(infractionBody, (_ctx, b) =>
      control.raiseInfraction(b.endToEndId, b.reason, { details: b.details, analysis: b.analysis }),
    ),
  );
  router.post(
    '/_sim/infractions/:id/accept',
    act(none, (ctx) => control.acceptInfraction(param(ctx, 'id'))),
  );
  router.post(
    '/_sim/infractions/:id/reject',
    act(none, (ctx) => control.rejectInfraction(param(ctx, 'id'))),
  );
  router.post(
    '/_sim/infractions/:id/refund',
    act(none, (ctx) => control.refundInfraction(param(ctx, 'id'))),
  );
}

/** Faults, tokens, and what was called and sent. */
function simulatorSwitches(router: Router, control: SimulatorControl): void {
  router.get(
    '/_sim/faults',
    act(none, () => control.getFaults()),
  );
  router.post(
    '/_sim/faults',
    act(faultsBody, (_ctx, b) => control.setFaults(b)),
  );
  router.post(
    '/_sim/tokens/revoke',
    act(none, () => control.revokeTokens()),
  );
  router.get(
    '/_sim/calls',
    act(none, () => ({ calls: control.calls })),
  );
  router.get(
    '/_sim/callbacks',
    act(none, () => ({
      delivered: control.callbacks.delivered,
      failed: control.callbacks.failed,
      held: control.callbacks.held,
    })),
  );
  router.post(
    '/_sim/callbacks/release',
    act(none, () => control.callbacks.release()),
  );
}
