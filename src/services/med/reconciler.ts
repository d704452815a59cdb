/**
 * Every infraction whose workflow still has something to do (not closed: open, or accepted and not
 * yet refunded) must have a running `infraction-<id>` workflow (docs/operations.md "MED infractions"). Starting
 * one is idempotent, and a fresh run resumes from the database, decision included. An open
 * infraction whose defense still waits to be sent has its workflow woken too (a signal lost while
 * Temporal was away), by signal-with-start: the workflow reads the defense from the database.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { forEachKeysetPage } from '../../lib/keyset';
import { infractionsStore } from '../../stores/infractions';
import { infractionDefensesStore } from '../../stores/infraction-defenses';
import type { InfractionWorkflows } from '../../temporal/clients/infraction';

export async function reconcileInfractionWorkflows(deps: {
  knex: Knex;
  workflows: InfractionWorkflows;
  logger: Logger;
  batchSize?: number;
}): Promise<number> {
  const store = infractionsStore(deps.knex);
  // Every open infraction, in keyset pages: not only the oldest page.
  const started = await forEachKeysetPage(
    {
      batch: deps.batchSize ?? 500,
      fetch: (after: { at: string; id: string } | null, limit) => store.open(after, limit),
      keyOf: (r) => ({ at: r.at, id: r.id }),
    },
    (r) => deps.workflows.start({ id: r.id, merchantId: r.merchant_id }),
  );
  if (started > 0) deps.logger.info({ infractions: started }, 'infraction workflows reconciled');
  const waiting = await infractionDefensesStore(deps.knex).pendingOnOpenInfractions(deps.batchSize ?? 500);
  for (const r of waiting) await deps.workflows.defenseSubmitted({ id: r.id, merchantId: r.merchant_id });
  return started;
}
