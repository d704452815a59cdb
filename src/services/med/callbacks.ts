/**
 * `/v1/acquirer/infractions` (protocol: src/acquirer/README.md "Callbacks"), after the route has
 * verified the signature and the inbox has kept the body: the infraction row is created on first
 * sight (or found), the acquirer's status advanced on it, and the `infraction-<id>` workflow told
 * by signal-with-start — for a duplicate too, so a delivery that was stored but could not signal
 * (Temporal down) still gets through on the acquirer's retry.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { wireToCents } from '../../acquirer/money-wire';
import { infractionCallback, type InfractionCallback } from '../../acquirer/wire';
import type { InfractionWorkflows } from '../../temporal/clients/infraction';
import { infractionsStore } from '../../stores/infractions';

/**
 * `handed`: the workflow has it. `unknown_payment`: the end-to-end id is none of our charges' — yet:
 * the payment's own callback may still be on its way (callbacks come in any order), so an inbox
 * that re-drives should try again later before giving it to an operator.
 */
export type InfractionCallbackOutcome = { kind: 'handed'; infractionId: string } | { kind: 'unknown_payment' };

export function createInfractionCallbacks(deps: { knex: Knex; workflows: InfractionWorkflows; logger: Logger }) {
  const { knex, workflows, logger } = deps;

  async function received(body: InfractionCallback): Promise<InfractionCallbackOutcome> {
    const i = body.infraction;
    const row = await infractionsStore(knex).recordFromAcquirer({
      acquirerId: i.id,
      endToEndId: i.endToEndId,
      // The schema admitted only `\d{1,10}\.\d{2}`, which always converts.
      amount: wireToCents(i.valor) ?? 0,
      reason: i.motivo,
      reportDetails: i.detalhes,
      status: i.status,
    });
    if (!row) {
      logger.warn(
        { acquirerInfractionId: i.id, e2eId: i.endToEndId },
        'infraction on a payment that is not ours: kept in the inbox',
      );
      return { kind: 'unknown_payment' };
    }
    await workflows.acquirerUpdate({ id: row.id, merchantId: row.merchantId }, { status: i.status });
    return { kind: 'handed', infractionId: row.id };
  }

  /** The same, from a body an inbox stored (the whole callback body, as received). */
  const receivedStored = (payload: unknown): Promise<InfractionCallbackOutcome> =>
    received(infractionCallback.parse(payload));

  return { received, receivedStored };
}

export type InfractionCallbacks = ReturnType<typeof createInfractionCallbacks>;
