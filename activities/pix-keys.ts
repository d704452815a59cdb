/** PIX key activities: thin adapters from the `pixkey-<id>` workflow to src/services/pix-keys/pix-keys.ts. */
import type { PixKeyRegistration, PixKeyRegistrationOutcome } from '../src/services/pix-keys/pix-keys';

export interface PixKeyActivities {
  /** Registers the key at the acquirer (idempotent on our key id). */
  registerPixKey(pixKeyId: string): Promise<PixKeyRegistrationOutcome>;
}

export function createPixKeyActivities(registration: PixKeyRegistration): PixKeyActivities {
  return {
    registerPixKey: (pixKeyId) => registration.register(pixKeyId),
  };
}
