/**
 * `/v1/acquirer/pix-keys` (protocol: src/acquirer/README.md "Callbacks"), after the route has
 * verified the signature and the inbox has kept the body: the key's status follows the acquirer's
 * (src/services/pix-keys/pix-keys.ts decides which changes apply), with `pixkey.updated`.
 */
import { pixKeyCallback, type PixKeyCallback } from '../../acquirer/wire';
import type { PixKeyCallbackOutcome, PixKeyRegistration } from './pix-keys';

export function createPixKeyCallbacks(deps: { registration: PixKeyRegistration }) {
  const statusChanged = (body: PixKeyCallback): Promise<PixKeyCallbackOutcome> =>
    deps.registration.acquirerStatusChanged(body);
  /** The same, from a body an inbox stored (the whole callback body, as received). */
  const statusChangedStored = (payload: unknown): Promise<PixKeyCallbackOutcome> =>
    statusChanged(pixKeyCallback.parse(payload));
  return { statusChanged, statusChangedStored };
}

export type PixKeyCallbacks = ReturnType<typeof createPixKeyCallbacks>;
