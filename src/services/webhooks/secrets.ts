/**
 * Reading a webhook's stored secrets, and re-encryption of every stored webhook secret under the newest key of WEBHOOK_SECRET_KEYS
 * (docs/operations.md "Webhook secret encryption"), for `npm run ops -- webhooks
 * rotate-encryption-key`: after it, the older keys decrypt nothing and can leave the ring. Pages of
 * webhooks are locked and rewritten one transaction each, so deliveries and rotations carry on.
 */
import type { Knex } from 'knex';
import { type AppError, unavailable } from '../../lib/errors';
import { SecretUnavailableError, webhookSecretBox, type SecretBox } from '../../lib/secret-box';
import { webhooksStore, type StoredSecrets } from '../../stores/webhooks';
import { recordAudit, type Actor } from '../platform/audit';

/** A webhook's ciphertexts as its row holds them (the previous one only during an overlap). */
export type StoredWebhookSecrets = Pick<StoredSecrets, 'id' | 'secret_ciphertext' | 'previous_secret_ciphertext'>;

/** The current secret in clear, then the previous one while it overlaps; throws SecretUnavailableError. */
export function openWebhookSecrets(box: SecretBox, w: StoredWebhookSecrets): { current: string; previous: string[] } {
  const current = box.decrypt(w.secret_ciphertext, 'webhook-current', w.id);
  const previous =
    w.previous_secret_ciphertext === null ? [] : [box.decrypt(w.previous_secret_ciphertext, 'webhook-previous', w.id)];
  return { current, previous };
}

/** What a client is told when a webhook's secret cannot be read: a 503 naming the key (docs/api.md "Errors"). */
export function secretUnavailableAnswer(webhookId: string, err: SecretUnavailableError): AppError {
  const key = err.keyId === null ? 'an unknown key' : `key "${err.keyId}"`;
  return unavailable(
    `The signing secret of webhook ${webhookId} cannot be read: it needs ${key}, which this server's WEBHOOK_SECRET_KEYS does not hold; an operator must restore it`,
    'webhook_secret_unavailable',
  );
}

/** Runs `read`, turning an unreadable secret into the client's 503; other errors pass. */
export function readingSecretOf<T>(webhookId: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof SecretUnavailableError) throw secretUnavailableAnswer(webhookId, err);
    throw err;
  }
}

export interface ReencryptionReport {
  keyId: string;
  /** Webhooks looked at. */
  webhooks: number;
  /** Webhooks whose ciphertexts were rewritten under `keyId`. */
  reencrypted: number;
}

export async function reencryptWebhookSecrets(deps: {
  knex: Knex;
  secretKeys: string | undefined;
  actor: Actor;
  batchSize?: number;
}): Promise<ReencryptionReport> {
  const box = webhookSecretBox(deps.secretKeys);
  const batch = deps.batchSize ?? 200;
  const report: ReencryptionReport = { keyId: box.currentKeyId, webhooks: 0, reencrypted: 0 };
  let after = '';
  for (;;) {
    const page = await deps.knex.transaction(async (trx) => {
      const store = webhooksStore(trx);
      const rows = await store.lockSecretsAfter(after, batch);
      for (const r of rows) {
        const stale =
          box.keyIdOf(r.secret_ciphertext) !== box.currentKeyId ||
          (r.previous_secret_ciphertext !== null && box.keyIdOf(r.previous_secret_ciphertext) !== box.currentKeyId);
        if (!stale) continue;
        const { current, previous } = openWebhookSecrets(box, r);
        await store.setSecrets({
          id: r.id,
          secret_ciphertext: box.encrypt(current, 'webhook-current', r.id),
          previous_secret_ciphertext:
            previous[0] === undefined ? null : box.encrypt(previous[0], 'webhook-previous', r.id),
          previous_secret_expires_at: r.previous_secret_expires_at,
        });
        report.reencrypted += 1;
      }
      return rows;
    });
    report.webhooks += page.length;
    const last = page[page.length - 1];
    if (last === undefined || page.length < batch) break;
    after = last.id;
  }
  await recordAudit(deps.knex, deps.actor, {
    action: 'webhooks.rotate_encryption_key',
    targetType: 'webhook_secrets',
    targetId: box.currentKeyId,
    details: { webhooks: report.webhooks, reencrypted: report.reencrypted },
  });
  return report;
}
