/**
 * Every PIX key that should be at the acquirer but is not yet registered there (PENDING or ACTIVE,
 * no acquirer key id) gets its `pixkey-<id>` workflow started: keys added by the ops CLI (which
 * does not talk to Temporal), keys whose registration hook failed, keys whose retries ran out.
 * Starting a running id is a no-op.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { forEachKeysetPage } from '../../lib/keyset';
import { merchantsStore } from '../../stores/merchants';
import type { PixKeyWorkflows } from '../../temporal/clients/pix-key';

export async function reconcilePixKeyRegistrations(deps: {
  knex: Knex;
  workflows: PixKeyWorkflows;
  logger: Logger;
  batchSize?: number;
}): Promise<number> {
  const store = merchantsStore(deps.knex);
  const started = await forEachKeysetPage(
    {
      batch: deps.batchSize ?? 500,
      fetch: (after: string | null, limit) => store.unregisteredPixKeys(after ?? '', limit),
      keyOf: (r) => r.id,
    },
    (r) => deps.workflows.register({ id: r.id, merchantId: r.merchant_id }),
  );
  if (started > 0) deps.logger.info({ pixKeys: started }, 'PIX key registrations reconciled');
  return started;
}
