/**
 * Every PROCESSING withdrawal must have a running `withdrawal-<id>` saga: its money is in transit
 * until the saga resolves it. Starting one is idempotent, so the reconciler starts the saga of each
 * PROCESSING withdrawal; for one whose saga runs this is a no-op. It matters when workflows were
 * lost (the in-memory Temporal server after a restart) and after an outage between the
 * withdrawal's commit and its workflow start. Completed withdrawals need no saga: a later return
 * of the transfer starts one by signal-with-start.
 */
import type { Knex } from 'knex';
import { forEachKeysetPage } from '../../lib/keyset';
import { withdrawalsStore } from '../../stores/withdrawals';
import type { Logger } from '../../lib/logger';
import type { WithdrawalWorkflows } from '../../temporal/clients/withdrawal';

export async function reconcileWithdrawalWorkflows(deps: {
  knex: Knex;
  workflows: WithdrawalWorkflows;
  logger: Logger;
  batchSize?: number;
}): Promise<number> {
  const { knex, workflows, logger } = deps;
  const store = withdrawalsStore(knex);
  const started = await forEachKeysetPage(
    {
      batch: deps.batchSize ?? 500,
      fetch: (after: string | null, limit) => store.processingAfter(after ?? '', limit),
      keyOf: (r) => r.id,
    },
    (r) => workflows.start({ id: r.id, merchantId: r.merchant_id }),
  );
  if (started > 0) logger.info({ withdrawals: started }, 'withdrawal workflows reconciled');
  return started;
}
