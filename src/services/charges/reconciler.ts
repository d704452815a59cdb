/**
 * Every charge that still owes something (awaiting payment, awaiting settlement, an open refund
 * not parked for an operator) must have a running `charge-<id>` workflow
 * (docs/architecture.md "Charges: how they work", Reconciliation). Starting one is idempotent, so the reconciler simply starts the
 * workflow of each such charge; for a charge whose workflow runs this is a no-op. It matters when workflows were lost — e.g. `npm start` on the in-memory Temporal
 * server after a restart — and after an outage between the charge's commit and its workflow start.
 * `RECONCILER=off` disables it.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import type { ChargeWorkflows } from '../../temporal/clients/charge';
import { chargesStore } from '../../stores/charges';
import { forEachKeysetPage } from '../../lib/keyset';

export async function reconcileChargeWorkflows(deps: {
  knex: Knex;
  workflows: ChargeWorkflows;
  logger: Logger;
  batchSize?: number;
}): Promise<number> {
  const { knex, workflows, logger } = deps;
  const batch = deps.batchSize ?? 500;
  // A creation interrupted between the insert and the acquirer's answer (a crash) left a PENDING
  // charge without a BR Code: nobody was given one to pay, so it is FAILED, and its idempotency key
  // replays that. Its txid stays: should the cob exist at the acquirer after all and be paid, the
  // payment finds this charge and goes back to the payer.
  const charges = chargesStore(knex);
  const interrupted = await charges.failInterruptedCreations();
  if (interrupted > 0) logger.warn({ charges: interrupted }, 'charges whose creation was interrupted marked FAILED');
  // Keyset pagination on id; the partial indexes of the second migration keep this cheap.
  const started = await forEachKeysetPage(
    { batch, fetch: (after: string | null, limit) => charges.owingWorkflows(after ?? '', limit), keyOf: (r) => r.id },
    (r) => workflows.start({ id: r.id, merchantId: r.merchant_id }),
  );
  if (started > 0) logger.info({ charges: started }, 'charge workflows reconciled');
  return started;
}
