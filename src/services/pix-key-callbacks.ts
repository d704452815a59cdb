/**
 * `/v1/acquirer/pix-keys` (protocol: src/acquirer/README.md "Callbacks"), after the route has
 * verified the signature and the inbox has kept the body: the key's status follows the acquirer's
 * (src/services/pix-keys.ts decides which changes apply), with `pixkey.updated`.
 */
import type { PixKeyCallback } from '../acquirer/wire';
import type { PixKeyRegistration } from './pix-keys';

export function createPixKeyCallbacks(deps: { registration: PixKeyRegistration }) {
  async function statusChanged(body: PixKeyCallback): Promise<void> {
    await deps.registration.acquirerStatusChanged(body);
  }
  return { statusChanged };
}

export type PixKeyCallbacks = ReturnType<typeof createPixKeyCallbacks>;
