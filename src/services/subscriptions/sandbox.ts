/**
 * Sandbox Pix Automático (docs/api.md "Sandbox"; only while the acquirer is the embedded simulator):
 * the merchant has the simulated payer approve, refuse or cancel one of its own subscriptions, or
 * fail its next debits. Everything after takes the real path: the signed rec or cobr callback, the
 * subscription workflow, which reads the outcome from the acquirer.
 */
import type { Knex } from 'knex';
import { invalid, notFound } from '../../lib/errors';
import { isSimulatorRefusal, type SandboxControl } from '../../acquirer/sandbox-control';
import { subscriptionsStore } from '../../stores/subscriptions';
import { subscriptionView } from './subscriptions';
import type {
  SandboxSubscriptionAction,
  SandboxSubscriptionBody,
  SubscriptionView,
} from '../../contracts/subscriptions';

export type SubscriptionSandbox = ReturnType<typeof createSubscriptionSandbox>;

export function createSubscriptionSandbox(deps: { knex: Knex; simulator: SandboxControl }) {
  return {
    /** The subscription as it stands; the callback that follows changes it. */
    async act(
      merchantId: string,
      id: string,
      action: SandboxSubscriptionAction,
      body: SandboxSubscriptionBody,
    ): Promise<SubscriptionView> {
      const s = await subscriptionsStore(deps.knex).find(id, merchantId);
      if (!s) throw notFound('Subscription not found');
      if (!s.id_rec) throw invalid('This subscription has no recorrência at the acquirer yet');
      try {
        await deps.simulator.recurrence(action, s.id_rec, { reason: body.reason, times: body.times });
      } catch (err) {
        if (isSimulatorRefusal(err)) throw invalid(`The sandbox acquirer cannot do this: ${err.message}`);
        throw err;
      }
      return subscriptionView(s);
    },
  };
}
