/**
 * Sandbox MED (docs/operations.md "MED infractions"; only while the acquirer is the embedded simulator): the
 * merchant has the simulator raise, accept or reject an infraction on one of its own paid charges,
 * and everything else happens through the real path — signed callback, inbox, signal-with-start,
 * the infraction workflow's activities.
 */
import type { Knex } from 'knex';
import { invalid, notFound } from '../../lib/errors';
import { chargesStore } from '../../stores/charges';
import { isSimulatorRefusal, type SandboxControl } from '../../acquirer/sandbox-control';
import { infractionsStore, infractionView, type InfractionView } from '../../stores/infractions';
import type { SandboxRaiseInfractionBody } from '../../contracts/infractions';

export function createInfractionSandbox(deps: { knex: Knex; simulator: SandboxControl }) {
  const { knex, simulator } = deps;

  const simulatorSays = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (isSimulatorRefusal(err)) throw invalid(`The sandbox acquirer cannot do this: ${err.message}`);
      throw err;
    }
  };

  /**
   * Raises an infraction on a paid charge; answers with our infraction (its callback follows).
   * `analysisResult` scripts how the acquirer answers the merchant's defense once it arrives;
   * without it, the acquirer waits to be told (accept/reject).
   */
  async function raise(merchantId: string, input: SandboxRaiseInfractionBody): Promise<InfractionView> {
    const { chargeId, reason } = input;
    const charge = await chargesStore(knex).findOwnModel(merchantId, chargeId);
    if (!charge) throw notFound('Charge not found');
    if (!charge.e2eId) throw invalid('This charge has no payment to dispute');
    const raised = await simulatorSays(() =>
      simulator.raiseInfraction(charge.e2eId as string, reason, {
        details: input.reportDetails,
        analysis: input.analysisResult,
      }),
    );
    const infractionId = raised.infractionId;
    // The same idempotent record the callback makes: whichever comes first creates the row.
    const row = await infractionsStore(knex).recordFromAcquirer({
      acquirerId: infractionId,
      endToEndId: charge.e2eId,
      amount: raised.amount ?? charge.amount,
      reason: raised.reason ?? reason ?? '',
      reportDetails: raised.details ?? input.reportDetails,
      status: 'OPEN',
    });
    if (!row) throw notFound('Charge not found');
    return infractionView(row);
  }

  async function decide(merchantId: string, id: string, decision: 'accept' | 'reject'): Promise<InfractionView> {
    const row = await infractionsStore(knex).findForMerchant(merchantId, id);
    if (!row) throw notFound('Infraction not found');
    await simulatorSays(() => simulator.decideInfraction(row.acquirerInfractionId, decision));
    return infractionView(row);
  }

  return { raise, decide };
}

export type InfractionSandbox = ReturnType<typeof createInfractionSandbox>;
