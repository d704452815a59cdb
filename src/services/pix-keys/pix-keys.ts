/**
 * PIX keys at the acquirer (docs/architecture.md "PIX keys: registration and activation"): a key the operator adds
 * is registered at the acquirer by the `pixkey-<id>` workflow (idempotent on our key id), and the
 * acquirer announces its status by callback (`/v1/acquirer/pix-keys`). Every status change — from
 * the acquirer or from an operator — records `pixkey.updated` in the same transaction.
 *
 * Which side wins: the acquirer activates a PENDING key (PENDENTE → ATIVA) and may deactivate any
 * key (→ INATIVA); it never re-activates a key an operator made INACTIVE, because callbacks can
 * arrive late and out of order and an operator's INACTIVE is a decision of ours.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import { newId } from '../../lib/ids';
import { merchantsStore, type PixKey } from '../../stores/merchants';
import type { Acquirer, PixKeyStatusAtAcquirer } from '../../acquirer/types';
import { AcquirerError } from '../../acquirer/errors';
import type { PixKeyCallback } from '../../acquirer/wire';
import { recordEvent } from '../platform/events';

export type PixKeyStatus = PixKey['status'];

/** `pixkey.updated` speaks the acquirer's (BCB's) words for statuses (docs/api.md "Events"). */
export const PIX_KEY_EVENT_STATUS: Record<PixKeyStatus, PixKeyStatusAtAcquirer> = {
  PENDING: 'PENDENTE',
  ACTIVE: 'ATIVA',
  INACTIVE: 'INATIVA',
};

const FROM_ACQUIRER: Record<PixKeyStatusAtAcquirer, PixKeyStatus> = {
  PENDENTE: 'PENDING',
  ATIVA: 'ACTIVE',
  INATIVA: 'INACTIVE',
};

/** Records `pixkey.updated` for a status change being committed in `trx`. */
export async function recordPixKeyUpdated(
  trx: Knex.Transaction,
  key: Pick<PixKey, 'id' | 'merchantId' | 'key' | 'type'>,
  status: PixKeyStatus,
): Promise<void> {
  await recordEvent(trx, {
    merchantId: key.merchantId,
    type: 'pixkey.updated',
    // Each change is its own event: the guarded UPDATE that precedes this is what makes it happen once.
    reference: `pixkey.updated:${key.id}:${newId('chg')}`,
    data: { keyId: key.id, key: key.key, type: key.type, status: PIX_KEY_EVENT_STATUS[status] },
  });
}

/**
 * Moves a key `from` one of the given statuses `to` another, with the event, in `trx`. Returns false
 * (and changes nothing) when the key is not in one of `from` — the guard that makes duplicates and
 * stale callbacks no-ops.
 */
export async function changePixKeyStatus(
  trx: Knex.Transaction,
  key: PixKey,
  from: readonly PixKeyStatus[],
  to: PixKeyStatus,
): Promise<boolean> {
  if (key.status === to || !from.includes(key.status)) return false;
  if (!(await merchantsStore(trx).movePixKeyStatus(key.id, from, to))) return false;
  await recordPixKeyUpdated(trx, key, to);
  return true;
}

/** What became of one registration attempt. */
export type PixKeyRegistrationOutcome =
  /** The acquirer has the key (now or before); its activation comes by callback. */
  | 'registered'
  /** The acquirer refused the key for good: it is INACTIVE (with `pixkey.updated`). */
  | 'refused'
  /** The key no longer exists, or an operator made it INACTIVE: nothing to register. */
  | 'skipped';

/** What a key status callback did: `unchanged` covers duplicates and stale or overridden statuses. */
export type PixKeyCallbackOutcome = 'applied' | 'unchanged' | 'unknown_key';

export function createPixKeyRegistration(deps: { knex: Knex; acquirer: Acquirer; logger: Logger }) {
  const { knex, acquirer, logger } = deps;

  /** Registers the key at the acquirer once (idempotent on our key id there too). */
  async function register(keyId: string): Promise<PixKeyRegistrationOutcome> {
    const key = await merchantsStore(knex).findPixKeyById(keyId);
    if (!key || key.status === 'INACTIVE') return 'skipped';
    if (key.acquirerKeyId) return 'registered';
    let registered;
    try {
      registered = await acquirer.registerPixKey(key.id, key.type, key.key);
    } catch (err) {
      // A 4xx other than credentials: the acquirer will never take this key (e.g. owned by someone
      // else at the DICT). Retrying cannot help; the operator sees the key INACTIVE.
      if (err instanceof AcquirerError && err.code === 'REJECTED') {
        logger.warn({ pixKeyId: key.id, err: err.message }, 'PIX key refused by the acquirer');
        await knex.transaction(async (trx) => {
          const locked = await merchantsStore(trx).findPixKeyById(key.id, { lock: true });
          if (locked) await changePixKeyStatus(trx, locked, ['PENDING'], 'INACTIVE');
        });
        return 'refused';
      }
      throw err;
    }
    await knex.transaction(async (trx) => {
      const store = merchantsStore(trx);
      const locked = await store.findPixKeyById(key.id, { lock: true });
      if (!locked) return;
      if (!locked.acquirerKeyId) await store.setAcquirerKeyId(key.id, registered.id, { touch: true });
      // A replay after the acquirer activated the key answers with its current status: apply it,
      // in case that callback was lost.
      await applyStatus(trx, locked, registered.status);
    });
    return 'registered';
  }

  async function applyStatus(trx: Knex.Transaction, key: PixKey, status: PixKeyStatusAtAcquirer): Promise<boolean> {
    const to = FROM_ACQUIRER[status];
    if (to === 'ACTIVE') return changePixKeyStatus(trx, key, ['PENDING'], 'ACTIVE');
    if (to === 'INACTIVE') return changePixKeyStatus(trx, key, ['PENDING', 'ACTIVE'], 'INACTIVE');
    return false;
  }

  /**
   * `/v1/acquirer/pix-keys`: the acquirer's status for a key. Found by the acquirer's key id, or —
   * when the callback beats the registration's own commit — by (type, key), which are unique.
   */
  async function acquirerStatusChanged(body: PixKeyCallback): Promise<PixKeyCallbackOutcome> {
    const k = body.pixKey;
    return knex.transaction(async (trx) => {
      const store = merchantsStore(trx);
      const key = await store.lockPixKeyFromAcquirer(k.id, k.tipoChave, k.chave);
      if (!key) {
        logger.warn({ acquirerKeyId: k.id }, 'status of an unknown PIX key: kept in the inbox');
        return 'unknown_key';
      }
      if (key.acquirerKeyId && key.acquirerKeyId !== k.id) {
        logger.warn(
          { pixKeyId: key.id, acquirerKeyId: k.id },
          'status of another registration of this PIX key: ignored',
        );
        return 'unchanged';
      }
      if (!key.acquirerKeyId) await store.setAcquirerKeyId(key.id, k.id);
      return (await applyStatus(trx, key, k.status)) ? 'applied' : 'unchanged';
    });
  }

  return { register, acquirerStatusChanged };
}

export type PixKeyRegistration = ReturnType<typeof createPixKeyRegistration>;
