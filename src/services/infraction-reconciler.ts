/**
 * Every infraction whose workflow still has something to do (not closed: open, or accepted and not
 * yet refunded) must have a running `infraction-<id>` workflow (README "MED infractions"). Starting
 * one is idempotent, and a fresh run resumes from the database, decision included.
 */
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import { infractionsStore } from '../stores/infractions';
import type { InfractionWorkflows } from '../temporal/infraction-workflow-client';

export async function reconcileInfractionWorkflows(deps: { knex: Knex; workflows: InfractionWorkflows; logger: Logger }): Promise<number> {
  const rows = await infractionsStore(deps.knex).open();
  for (const r of rows) await deps.workflows.start({ id: r.id, merchantId: r.merchant_id });
  if (rows.length > 0) deps.logger.info({ infractions: rows.length }, 'infraction workflows reconciled');
  return rows.length;
}
