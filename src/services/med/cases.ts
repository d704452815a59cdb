/**
 * How an operator resolves the cases an infraction opens (docs/operations.md "Operator cases"):
 * - MED_REFUND_REFUSED: `retry` — choose and send a new devolução of the re-blocked money;
 *   `release` — give the re-blocked money back to the merchant and close the infraction;
 * - MED_NOTHING_TO_RETURN and MED_SHORTFALL: `acknowledge` (the remainder is the platform's or the
 *   acquirer's to settle outside the merchant's balance; nothing of it is blocked any more).
 * The decision is written on the infraction (the database is the system of record) and its workflow
 * is woken to apply it; without a Temporal client it applies it on its next hourly check.
 */
import type { Knex } from 'knex';
import { invalid, notFound } from '../../lib/errors';
import { infractionsStore } from '../../stores/infractions';
import type { OperatorCase } from '../../stores/operator-cases';
import type { InfractionWorkflows } from '../../temporal/clients/infraction';
import type { CaseResolvers } from '../platform/operator-cases';
import type { OperatorCaseAction } from '../../contracts/statuses';

export function infractionCaseResolvers(deps: { workflows?: InfractionWorkflows }): CaseResolvers {
  return {
    MED_REFUND_REFUSED: {
      actions: ['retry', 'release'],
      async apply(trx: Knex.Transaction, c: OperatorCase, action: OperatorCaseAction) {
        const store = infractionsStore(trx);
        const inf = await store.find(c.subjectId, { lock: true });
        if (!inf) throw notFound('Infraction not found');
        if (inf.operatorAction !== 'pending') throw invalid(`Infraction ${inf.id} is not waiting for an operator`);
        await store.patch(inf.id, { operatorAction: action === 'release' ? 'release' : 'retry' });
        const wake = deps.workflows;
        return wake ? () => wake.operatorDecided({ id: inf.id, merchantId: inf.merchantId }) : undefined;
      },
    },
  };
}
