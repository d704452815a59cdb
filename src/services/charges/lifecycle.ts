/**
 * Charges, workflow side: everything that happens to a charge after creation, each step
 * idempotent (locked rows, guarded updates, ledger references, event references) so the charge
 * workflow's activities can be retried freely. The steps are module functions taking the
 * context first (CONTRIBUTING.md "Layout"): payments in ./lifecycle-payments.ts, refunds in
 * ./lifecycle-refunds.ts, what both share in ./lifecycle-shared.ts.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import type { Acquirer } from '../../acquirer/types';
import { bindContext } from '../../lib/bind-context';
import { loadSnapshot } from './lifecycle-shared';
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

export function createChargeLifecycle(deps: { knex: Knex; acquirer: Acquirer; logger: Logger }) {
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
