/**
 * Every charge that still owes something (awaiting payment, awaiting settlement, an open refund
 * not parked for an operator) must have a running `charge-<id>` workflow (README "Charges: how
 * they work", Reconciliation). Starting one is idempotent, so the reconciler simply starts the
 * workflow of each such charge; for a charge whose workflow runs this is a no-op. It matters when workflows were lost — e.g. `npm start` on the in-memory Temporal
 * server after a restart — and after an outage between the charge's commit and its workflow start.
 * `RECONCILER=off` disables it.
 */
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import type { ChargeWorkflows } from '../temporal/charge-workflow-client';
import { parkedRefundRows } from './charge-lifecycle';

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
  const interrupted = await knex('charges')
    .where({ status: 'PENDING' })
    .whereNull('qr_code')
    .where('created_at', '<', knex.raw(`now() - interval '2 minutes'`))
    .update({ status: 'FAILED', failure_reason: 'creation interrupted', updated_at: knex.fn.now() });
  if (interrupted > 0) logger.warn({ charges: interrupted }, 'charges whose creation was interrupted marked FAILED');
  let after = '';
  let started = 0;
  for (;;) {
    // Keyset pagination on id; the partial indexes of the second migration keep this cheap.
    const rows = (await knex('charges')
      .where('id', '>', after)
      .andWhere((q) =>
        q
          .where((p) => p.where('status', 'PENDING').whereNotNull('qr_code'))
          .orWhere((p) => p.where('status', 'PAID').whereNull('settled_at'))
          .orWhereExists(
            knex('charge_refunds')
              .whereRaw('charge_refunds.charge_id = charges.id')
              .where('status', 'REQUESTED')
              .whereNotExists(parkedRefundRows(knex)),
          ),
      )
      .orderBy('id')
      .limit(batch)
      .select('id', 'merchant_id')) as Array<{ id: string; merchant_id: string }>;
    for (const r of rows) {
      await workflows.start({ id: r.id, merchantId: r.merchant_id });
      started++;
    }
    if (rows.length < batch) break;
    after = (rows[rows.length - 1] as { id: string }).id;
  }
  if (started > 0) logger.info({ charges: started }, 'charge workflows reconciled');
  return started;
}
