/**
 * How an operator resolves the case a charge opens (docs/operations.md "Operator cases"):
 * - EXPIRY_ACQUIRER_UNREACHABLE (a due charge kept PENDING because the acquirer could not be asked
 *   whether its cob was paid): `acknowledge` — seen; the charge's workflow keeps its own schedule
 *   (it asks again until its maximum wait, then leaves the charge PENDING); `retry` — the workflow
 *   asks the acquirer now: a paid cob is credited, an unpaid one expires, and a question that fails
 *   again opens a new case with a new maximum wait.
 * `retry` wakes the workflow before the case is marked resolved: a workflow that stopped asking has
 * nothing else that would ask, so a retry that cannot reach it (no TEMPORAL_ADDRESS, Temporal down)
 * is refused and the case stays open.
 */
import type { Knex } from 'knex';
import { invalid, notFound } from '../../lib/errors';
import { chargesStore } from '../../stores/charges';
import type { OperatorCase } from '../../stores/operator-cases';
import type { ChargeWorkflows } from '../../temporal/clients/charge';
import type { CaseResolvers } from '../platform/operator-cases';
import type { OperatorCaseAction } from '../../contracts/statuses';

export function chargeCaseResolvers(deps: { workflows?: Pick<ChargeWorkflows, 'askAcquirer'> }): CaseResolvers {
  return {
    EXPIRY_ACQUIRER_UNREACHABLE: {
      actions: ['acknowledge', 'retry'],
      async apply(trx: Knex.Transaction, c: OperatorCase, action: OperatorCaseAction) {
        if (action !== 'retry') return undefined;
        const charge = await chargesStore(trx).find(c.subjectId);
        if (!charge) throw notFound('Charge not found');
        if (charge.status !== 'PENDING')
          throw invalid(`Charge ${charge.id} is ${charge.status}: nothing to ask the acquirer; acknowledge the case`);
        const wake = deps.workflows;
        if (!wake) throw invalid('retry wakes the charge workflow: set TEMPORAL_ADDRESS');
        await wake.askAcquirer({ id: charge.id, merchantId: charge.merchantId });
        return undefined;
      },
    },
  };
}
