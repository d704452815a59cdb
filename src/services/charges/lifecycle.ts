/**
 * Charges, workflow side: everything that happens to a charge after creation, each step
 * idempotent (locked rows, guarded updates, ledger references, event references) so the charge
 * workflow's activities can be retried freely. The steps are module functions taking the
 * context first (CONTRIBUTING.md "Layout"): payments in ./lifecycle-payments.ts, refunds in
 * ./lifecycle-refunds.ts, what both share in ./lifecycle-shared.ts.
 */
import { bindContext } from '../../lib/bind-context';
import { loadSnapshot, type ChargeLifecycleCtx } from './lifecycle-shared';
import {
  closeExpiryCase,
  expire,
  openExpiryCase,
  parkPayment,
  paymentsAtAcquirer,
  recordPayment,
  removeCob,
  settle,
} from './lifecycle-payments';
import { checkRefund, parkRefund, sendRefund, settleRefund } from './lifecycle-refunds';

export { DataIntegrityError, NotFoundError } from './lifecycle-shared';
export { parkedRefundRows } from '../../stores/charges';

export function createChargeLifecycle(deps: ChargeLifecycleCtx) {
  return bindContext(deps, {
    openExpiryCase,
    closeExpiryCase,
    loadSnapshot,
    recordPayment,
    parkPayment,
    paymentsAtAcquirer,
    expire,
    removeCob,
    settle,
    sendRefund,
    checkRefund,
    settleRefund,
    parkRefund,
  });
}

export type ChargeLifecycle = ReturnType<typeof createChargeLifecycle>;
