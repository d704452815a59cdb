/**
 * The callback inbox's handlers for MED infractions and PIX key status
 * (docs/operations.md "The callback inbox and reconciliation", "MED infractions", "PIX keys: registration and activation"): the inbox keeps
 * each callback, calls these, and re-drives them until applied or parked.
 *
 * - An infraction handed to its `infraction-<id>` workflow by signal-with-start is applied as far
 *   as the inbox goes: the workflow's history holds it, the decision is stored on the infraction
 *   row too, and the infraction reconciler restarts a lost workflow. An infraction on a payment we
 *   do not know yet waits (its payment's own callback may still be on its way) and is parked for an
 *   operator once the inbox's attempts run out.
 * - A PIX key status change is applied in the database at once; a key we do not know is parked.
 */
import type { CallbackHandlers } from '../inbox/callback-inbox';
import type { InfractionCallbacks } from './callbacks';
import type { PixKeyCallbacks } from '../pix-keys/callbacks';

export function createMedCallbackHandlers(deps: {
  infractions: InfractionCallbacks;
  pixKeys: PixKeyCallbacks;
}): CallbackHandlers {
  return {
    infractions: async (entry) => {
      const outcome = await deps.infractions.receivedStored(entry.payload);
      return outcome.kind === 'handed'
        ? { kind: 'applied', resolution: `handed to infraction-${outcome.infractionId}` }
        : { kind: 'wait', reason: 'the disputed payment is not known (yet)' };
    },
    'pix-keys': async (entry) => {
      const outcome = await deps.pixKeys.statusChangedStored(entry.payload);
      return outcome === 'unknown_key'
        ? { kind: 'park', reason: 'status change of an unknown PIX key' }
        : { kind: 'applied', resolution: String(outcome) };
    },
  };
}
