/**
 * Sandbox PIX keys (docs/architecture.md "PIX keys: registration and activation"; only while the acquirer is the
 * embedded simulator): the merchant has the simulator activate or deactivate one of its own keys,
 * and the change comes back through the real path — the simulator's signed callback, the inbox,
 * the PIX key callback handler (ACTIVE / INACTIVE with `pixkey.updated`). So a new key can be
 * activated while the simulator's automatic completion is off.
 */
import type { Knex } from 'knex';
import { invalid, notFound } from '../../lib/errors';
import { isSimulatorRefusal, type SandboxControl } from '../../acquirer/sandbox-control';
import { merchantsStore, type PixKey } from '../../stores/merchants';
import type { PixKeyView } from '../accounts/merchants';

export type SandboxPixKeyAction = 'activate' | 'deactivate';

/** How long to wait for the key's registration at the acquirer (its workflow starts right after the key is added). */
const REGISTERED_WAIT_MS = 5_000;

export function createPixKeySandbox(deps: { knex: Knex; simulator: SandboxControl }) {
  const { knex, simulator } = deps;

  /** The caller's key; another merchant's is 404, like an unknown id. */
  async function ownKey(merchantId: string, keyId: string): Promise<PixKey> {
    const key = await merchantsStore(knex).findPixKeyById(keyId);
    if (!key || key.merchantId !== merchantId) throw notFound('PIX key not found');
    return key;
  }

  async function registeredId(merchantId: string, keyId: string): Promise<string> {
    const deadline = Date.now() + REGISTERED_WAIT_MS;
    for (;;) {
      const key = await ownKey(merchantId, keyId);
      if (key.acquirerKeyId) return key.acquirerKeyId;
      if (Date.now() > deadline)
        throw invalid('This PIX key has not been registered at the acquirer yet; try again shortly');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Tells the simulator; answers the key as it is now (the callback's change follows). */
  async function act(merchantId: string, keyId: string, action: SandboxPixKeyAction): Promise<PixKeyView> {
    const key = await ownKey(merchantId, keyId);
    // The acquirer never re-activates an INACTIVE key
    // (docs/architecture.md "PIX keys: registration and activation"): saying so beats a 202 that changes nothing.
    if (action === 'activate' && key.status === 'INACTIVE') {
      throw invalid('An INACTIVE PIX key is not re-activated by the acquirer; an operator sets it ACTIVE');
    }
    const acquirerKeyId = await registeredId(merchantId, keyId);
    try {
      await simulator.setKeyStatus(acquirerKeyId, action === 'activate' ? 'ATIVA' : 'INATIVA');
    } catch (err) {
      if (isSimulatorRefusal(err)) throw invalid(`The sandbox acquirer cannot ${action} this key: ${err.message}`);
      throw err;
    }
    const now = await ownKey(merchantId, keyId);
    return { id: now.id, type: now.type, key: now.key, status: now.status };
  }

  return { act };
}

export type PixKeySandbox = ReturnType<typeof createPixKeySandbox>;
