/**
 * What the charge lifecycle's payment and refund steps share (./lifecycle.ts binds them): the
 * context they take first, the charge lock, the snapshot the charge workflow reads, and the errors
 * its activities' retry policy tells apart.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { chargePaymentsStore } from '../../stores/charge-payments';
import { chargesStore, type Charge } from '../../stores/charges';
import type { Acquirer } from '../../acquirer/types';
import type { ChargeSnapshot } from '../../../workflows/charge-types';
import type { WebhookDeliveryWorkflows } from '../../../workflows/webhook-delivery-types';
import { errorMessage } from '../../lib/error-message';

/** The lifecycle's dependencies, built once in the composition root. */
export type ChargeLifecycleCtx = {
  knex: Knex;
  acquirer: Acquirer;
  logger: Logger;
  /**
   * Given (the worker), a payment's `charge.paid` deliveries are started right after its commit,
   * without NOTIFY; absent, the dispatcher starts them (docs/performance.md "Payment to webhook:
   * the timeline"). The one place that choice is made.
   */
  webhookDeliveries?: WebhookDeliveryWorkflows;
};

export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/**
 * The database refused the data itself (a constraint or a data exception, SQLSTATE classes 22 and
 * 23): retrying the same statement cannot succeed, so the workflow parks what it was applying
 * instead of retrying for a day (docs/operations.md "The callback inbox and reconciliation").
 */
export class DataIntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataIntegrityError';
  }
}

export function asDataIntegrity(err: unknown): unknown {
  // pg puts the SQLSTATE on `code`; objection wraps it and keeps pg's error as `nativeError`.
  const e = err as { code?: unknown; nativeError?: { code?: unknown } } | null;
  const code = typeof e?.code === 'string' ? e.code : e?.nativeError?.code;
  if (typeof code === 'string' && /^2[23]/.test(code)) {
    return new DataIntegrityError(`database refused the change (${code}): ${errorMessage(err)}`);
  }
  return err;
}

/** The charge as its workflow sees it; the times left are counted from now. */
export function snapshotOf(
  charge: Pick<Charge, 'id' | 'merchantId' | 'status' | 'txid' | 'amount' | 'expiresAt' | 'settleAt' | 'settledAt'>,
  openRefundIds: string[],
): ChargeSnapshot {
  return {
    id: charge.id,
    merchantId: charge.merchantId,
    status: charge.status,
    txid: charge.txid,
    amount: charge.amount,
    expiresInMs: charge.expiresAt.getTime() - Date.now(),
    settlesInMs: charge.settleAt ? charge.settleAt.getTime() - Date.now() : null,
    settled: charge.settledAt !== null,
    openRefundIds,
  };
}

/** The charge, unlocked; a missing one is final for the activity's retry policy. */
export async function findCharge(db: Knex, chargeId: string): Promise<Charge> {
  const charge = await chargesStore(db).find(chargeId);
  if (!charge) throw new NotFoundError(`charge ${chargeId} not found`);
  return charge;
}

export async function lockCharge(trx: Knex.Transaction, chargeId: string): Promise<Charge> {
  const charge = await chargesStore(trx).find(chargeId, { lock: true });
  if (!charge) throw new NotFoundError(`charge ${chargeId} not found`);
  return charge;
}

export async function loadSnapshot(ctx: ChargeLifecycleCtx, chargeId: string): Promise<ChargeSnapshot> {
  const charge = await findCharge(ctx.knex, chargeId);
  // Refunds parked for an operator are not taken up again until they are re-driven.
  return snapshotOf(charge, await chargePaymentsStore(ctx.knex).openRefundIds(chargeId));
}
