/**
 * What the acquirer tells us (protocol: src/acquirer/README.md "Callbacks"), after the route has
 * verified the HMAC over the raw bytes and parsed the body with the strict callback schemas
 * (src/acquirer/wire.ts).
 *
 * Every callback goes through the inbox (src/services/inbox/callback-inbox.ts;
 * docs/operations.md "The callback inbox and reconciliation"): kept once per (kind, body id), then handed on by the handler of its
 * kind; whatever cannot be handed on now is re-driven by the reconciler until it is applied or
 * parked with an operator alert. Payments and refund outcomes are the charges' handlers here;
 * transfers, infractions and PIX key changes take the handler of their feature (`handlers`,
 * wired in src/runtime/composition.ts); a kind without a handler stays RECEIVED, untouched.
 */
import type { Knex } from 'knex';
import { z } from 'zod';
import type { Logger } from '../../lib/logger';
import { chargePaymentsStore } from '../../stores/charge-payments';
import type { ChargeRefund } from '../../stores/charges';
import { openOperatorCase } from '../platform/operator-cases';
import type { AcquirerCallback } from '../../models/acquirer-callback';
import type { Acquirer } from '../../acquirer/types';
import { AcquirerError } from '../../acquirer/errors';
import { wireToCents } from '../../acquirer/money-wire';
import {
  devolucao as devolucaoSchema,
  internalRefundId,
  noticeOf,
  pix as pixSchema,
  type InfractionCallback,
  type PixCallback,
  type PixKeyCallback,
  type PixWire,
  type TransferCallback,
} from '../../acquirer/wire';
import type { ChargeWorkflows } from '../../temporal/clients/charge';
import {
  createCallbackInbox,
  markCallbackApplied,
  parkCallback,
  PermanentCallbackError,
  type CallbackHandlers,
  type CallbackKind,
  type HandlerOutcome,
  type InboxOptions,
} from './callback-inbox';

export type { CallbackKind };

/** What `parkRefund` (charges/lifecycle.ts) stores for a refund its workflow could not carry. */
const parkedRefund = z.object({ refundId: z.string().min(1) });

/** The devolução id of a payment that matched no charge: `U` + its end-to-end id (33 ≤ 35 chars). */
export const unmatchedReturnId = (e2eId: string): string => `U${e2eId}`;

export interface AcquirerCallbacksDeps {
  knex: Knex;
  workflows: ChargeWorkflows;
  logger: Logger;
  acquirer: Acquirer;
  /** Handlers of other features (transfers, infractions, pix-keys); the charges' are built in. */
  handlers?: CallbackHandlers;
  inbox?: InboxOptions;
  /**
   * How long a payment whose txid matches no charge waits for one before it is returned to the
   * payer. Default 15 minutes.
   */
  unmatchedGraceMs?: number;
}

/** The stored pix item; one that does not parse can never be applied. */
function storedPix(entry: AcquirerCallback): PixWire {
  const parsed = pixSchema.safeParse(entry.payload);
  if (!parsed.success)
    throw new PermanentCallbackError(`stored ${entry.kind} callback is not a pix item: ${parsed.error.message}`);
  return parsed.data;
}

/** What the charges' handlers need. */
interface ChargeHandlersCtx {
  knex: Knex;
  workflows: ChargeWorkflows;
  logger: Logger;
  acquirer: Acquirer;
  unmatchedGraceMs: number;
}

const waitedLongerThan = (entry: AcquirerCallback, ms: number): boolean =>
  Date.now() - new Date(entry.receivedAt).getTime() >= ms;

export function createAcquirerCallbacks(deps: AcquirerCallbacksDeps) {
  const ctx: ChargeHandlersCtx = { ...deps, unmatchedGraceMs: deps.unmatchedGraceMs ?? 15 * 60_000 };
  const inbox = createCallbackInbox({
    knex: deps.knex,
    logger: deps.logger,
    options: deps.inbox,
    handlers: {
      pix: (entry) => handlePayment(ctx, entry),
      refund: (entry) => handleRefundOutcome(ctx, entry),
      ...deps.handlers,
    },
  });
  // Kept once per (id, status) and handed to the handler their feature registers.
  const transfer = (b: TransferCallback) => inbox.receive('transfers', `${b.transfer.id}:${b.transfer.status}`, b);
  const infraction = (b: InfractionCallback) =>
    inbox.receive('infractions', `${b.infraction.id}:${b.infraction.status}`, b);
  const pixKey = (b: PixKeyCallback) => inbox.receive('pix-keys', `${b.pixKey.id}:${b.pixKey.status}`, b);
  return { pix: (body: PixCallback) => receivePix(inbox, body), transfer, infraction, pixKey, inbox };
}

export type AcquirerCallbacks = ReturnType<typeof createAcquirerCallbacks>;

/** `/v1/acquirer/pix`: an item without `devolucoes` is a payment, with them a refund outcome. */
async function receivePix(inbox: AcquirerCallbacks['inbox'], body: PixCallback): Promise<void> {
  for (const p of body.pix) {
    if (p.devolucoes?.length) {
      for (const d of p.devolucoes) {
        // EM_PROCESSAMENTO is not an outcome: the workflow waits (or polls) for the final one.
        if (d.status !== 'DEVOLVIDO' && d.status !== 'NAO_REALIZADO') continue;
        await inbox.receive('refund', `${d.id}:${d.status}`, { ...p, devolucoes: [d] });
      }
      continue;
    }
    await inbox.receive('pix', p.endToEndId, p);
  }
}

/** A stored payment (kind `pix`): hand it to its charge's workflow, which applies it once per e2e id. */
async function handlePayment(ctx: ChargeHandlersCtx, entry: AcquirerCallback): Promise<HandlerOutcome> {
  const p = storedPix(entry);
  const found = p.txid ? await chargePaymentsStore(ctx.knex).findForPayment(p.txid, p.endToEndId) : undefined;
  const charge = found?.charge;
  if (!charge?.txid) {
    if (!waitedLongerThan(entry, ctx.unmatchedGraceMs)) {
      return { kind: 'wait', reason: `no charge with txid ${p.txid ?? '(none)'} yet` };
    }
    return returnUnmatched(ctx, p.endToEndId, wireToCents(p.valor) ?? 0);
  }
  // Already applied by an earlier delivery (paid, or taken as unpayable and returned).
  if (charge.e2eId === p.endToEndId) return { kind: 'applied', resolution: 'paid' };
  if (found?.takenAsUnpayable) return { kind: 'applied', resolution: 'returned_to_payer' };
  await ctx.workflows.paymentReceived({ id: charge.id, merchantId: charge.merchantId }, noticeOf(p, charge.txid));
  return { kind: 'handed' };
}

/**
 * A payment that belongs to no charge: nobody's money, so it never enters a merchant's ledger;
 * it is held at the acquirer (this inbox row is its record) and returned to the payer by a
 * devolução idempotent on its id. The row is applied once the acquirer says DEVOLVIDO.
 */
async function returnUnmatched(ctx: ChargeHandlersCtx, e2eId: string, amount: number): Promise<HandlerOutcome> {
  try {
    const r = await ctx.acquirer.requestRefund(
      e2eId,
      unmatchedReturnId(e2eId),
      amount,
      'Pagamento sem cobranca correspondente',
    );
    if (r.status === 'DEVOLVIDO') return { kind: 'applied', resolution: 'returned_to_payer' };
    if (r.status === 'NAO_REALIZADO')
      return { kind: 'park', reason: `return to the payer failed: ${r.reason ?? 'no reason given'}` };
    return { kind: 'wait', reason: 'unmatched payment: returning it to the payer' };
  } catch (err) {
    if (err instanceof AcquirerError && !err.retryable) {
      throw new PermanentCallbackError(`the acquirer refused to return an unmatched payment: ${err.message}`);
    }
    throw err;
  }
}

/** A stored refund outcome (kind `refund`, a pix with one settled devolução). */
async function handleRefundOutcome(ctx: ChargeHandlersCtx, entry: AcquirerCallback): Promise<HandlerOutcome> {
  const parked = parkedRefund.safeParse(entry.payload);
  if (parked.success) return redriveParkedRefund(ctx, parked.data.refundId);
  // Rows kept before the inbox stored the whole pix item hold the devolução alone.
  const legacy = devolucaoSchema.safeParse(entry.payload);
  const p = legacy.success ? undefined : storedPix(entry);
  const d = legacy.success ? legacy.data : p?.devolucoes?.[0];
  if (!d) throw new PermanentCallbackError('refund outcome without a devolução');
  if (p && d.id === unmatchedReturnId(p.endToEndId)) return settleUnmatchedReturn(ctx, p, d);
  const refund = await chargePaymentsStore(ctx.knex).findRefund(internalRefundId(d.id));
  if (!refund) {
    if (!waitedLongerThan(entry, ctx.unmatchedGraceMs)) return { kind: 'wait', reason: `unknown devolução ${d.id}` };
    return { kind: 'park', reason: `outcome of an unknown devolução ${d.id}` };
  }
  if (refund.status === 'FAILED' && d.status === 'DEVOLVIDO') return refundContradiction(ctx, refund, d.id);
  if (refund.status !== 'REQUESTED') return { kind: 'applied', resolution: `refund already ${refund.status}` };
  // A MED devolução is its infraction workflow's alone: it asks the acquirer for the outcome
  // itself, woken by the infraction's own callback (docs/operations.md "MED infractions").
  if (refund.kind === 'INFRACTION')
    return { kind: 'applied', resolution: 'MED devolução: its infraction workflow takes the outcome' };
  await ctx.workflows.refundSettled(
    { id: refund.chargeId, merchantId: refund.merchantId },
    { refundId: refund.id, outcome: d.status === 'DEVOLVIDO' ? 'CONFIRMED' : 'FAILED', reason: d.motivo },
  );
  return { kind: 'handed' };
}

/** A refund the workflow parked, re-driven by an operator: its workflow takes it up again. */
async function redriveParkedRefund(ctx: ChargeHandlersCtx, refundId: string): Promise<HandlerOutcome> {
  const refund = await chargePaymentsStore(ctx.knex).findRefund(refundId);
  if (!refund) throw new PermanentCallbackError(`refund ${refundId} not found`);
  if (refund.status !== 'REQUESTED') return { kind: 'applied', resolution: `refund already ${refund.status}` };
  await ctx.workflows.refundRequested({ id: refund.chargeId, merchantId: refund.merchantId }, refund.id);
  return { kind: 'applied', resolution: 'refund handed to its workflow again' };
}

/** The outcome of returning an unmatched payment settles that payment's row. */
async function settleUnmatchedReturn(
  { knex, logger }: ChargeHandlersCtx,
  p: PixWire,
  d: NonNullable<PixWire['devolucoes']>[number],
): Promise<HandlerOutcome> {
  const { devolucoes: _settled, ...payment } = p;
  if (d.status === 'DEVOLVIDO') {
    await markCallbackApplied(knex, {
      kind: 'pix',
      externalId: p.endToEndId,
      payload: payment,
      resolution: 'returned_to_payer',
    });
  } else {
    await parkCallback(knex, logger, {
      kind: 'pix',
      externalId: p.endToEndId,
      payload: payment,
      reason: `return of an unmatched payment to the payer failed: ${d.motivo ?? 'no reason given'}`,
    });
  }
  return { kind: 'applied', resolution: 'unmatched_payment_return' };
}

/**
 * The acquirer settled a devolução whose refund our books already FAILED (its money went back to
 * the merchant, or was re-blocked): the payer has it too. Nothing moves — moving it again could
 * pay twice — and an operator settles it from a REFUND_CONTRADICTION case (acknowledge only).
 */
async function refundContradiction(
  { knex, logger }: ChargeHandlersCtx,
  refund: ChargeRefund,
  devolucaoId: string,
): Promise<HandlerOutcome> {
  const opened = await knex.transaction((trx) =>
    openOperatorCase(trx, logger, {
      reference: `refund:${refund.id}:contradiction:DEVOLVIDO`,
      kind: 'REFUND_CONTRADICTION',
      merchantId: refund.merchantId,
      subjectType: 'charge',
      subjectId: refund.chargeId,
      reason: `devolução ${devolucaoId} of ${refund.amount} cents settled at the acquirer after refund ${refund.id} was FAILED: the books keep FAILED; settle it with the merchant and the acquirer`,
      details: { refundId: refund.id, kind: refund.kind, amount: refund.amount, devolucaoId },
    }),
  );
  return {
    kind: 'applied',
    resolution: `DEVOLVIDO after FAILED: nothing moved, operator case REFUND_CONTRADICTION ${opened ? 'opened' : 'already open'}`,
  };
}
