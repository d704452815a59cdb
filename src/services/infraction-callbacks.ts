/**
 * `/v1/acquirer/infractions` (protocol: src/acquirer/README.md "Callbacks"), after the route has
 * verified the signature and the inbox has kept the body: the infraction row is created on first
 * sight (or found), the acquirer's status advanced on it, and the `infraction-<id>` workflow told
 * by signal-with-start — for a duplicate too, so a delivery that was stored but could not signal
 * (Temporal down) still gets through on the acquirer's retry.
 */
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import { wireToCents } from '../acquirer/money-wire';
import type { InfractionCallback } from '../acquirer/wire';
import type { InfractionWorkflows } from '../temporal/infraction-workflow-client';
import { recordAcquirerInfraction } from './infraction-store';

export function createInfractionCallbacks(deps: { knex: Knex; workflows: InfractionWorkflows; logger: Logger }) {
  const { knex, workflows, logger } = deps;

  async function received(body: InfractionCallback): Promise<void> {
    const i = body.infraction;
    const row = await recordAcquirerInfraction(knex, {
      acquirerId: i.id,
      endToEndId: i.endToEndId,
      // The schema admitted only `\d{1,10}\.\d{2}`, which always converts.
      amount: wireToCents(i.valor) ?? 0,
      reason: i.motivo,
      status: i.status,
    });
    if (!row) {
      logger.warn({ acquirerInfractionId: i.id, e2eId: i.endToEndId }, 'infraction on a payment that is not ours: kept in the inbox');
      return;
    }
    await workflows.acquirerUpdate({ id: row.id, merchantId: row.merchantId }, { status: i.status });
  }

  return { received };
}

export type InfractionCallbacks = ReturnType<typeof createInfractionCallbacks>;
