/**
 * Re-encryption of every stored webhook secret under the newest key of WEBHOOK_SECRET_KEYS
 * (docs/operations.md "Webhook secret encryption"), for `npm run ops -- webhooks
 * rotate-encryption-key`: after it, the older keys decrypt nothing and can leave the ring. Pages of
 * webhooks are locked and rewritten one transaction each, so deliveries and rotations carry on.
 */
import type { Knex } from 'knex';
import { webhookSecretBox } from '../../lib/secret-box';
import { webhooksStore } from '../../stores/webhooks';
import { recordAudit, type Actor } from '../platform/audit';

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
        const again = (stored: string): string => box.encrypt(box.decrypt(stored, r.id), r.id);
        await store.setSecrets({
          id: r.id,
          secret_ciphertext: again(r.secret_ciphertext),
          previous_secret_ciphertext:
            r.previous_secret_ciphertext === null ? null : again(r.previous_secret_ciphertext),
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
