/**
 * Webhook secrets move from `aesgcm1` (associated data: the webhook id) to `aesgcm2` (associated
 * data: the slot, the key id and the webhook id; docs/operations.md "Webhook secret encryption"),
 * so the current and the previous secret of a webhook can no longer be swapped in the database.
 * Each value is re-encrypted under the key it was under, so a key rotation in progress is unchanged.
 *
 * Re-encrypted rather than read in both formats: a service that still read `aesgcm1` would still
 * accept a swapped pair. A value this ring cannot read (its key was already dropped) is left as it
 * is and named on stderr; the service then reports it unavailable, naming its key.
 */
import type { Knex } from 'knex';
import { decryptAny, encryptAs, ringFromEnv, type Ring, type Slot } from './support/webhook-secret-crypto';

const BATCH = 500;

interface SecretsRow {
  id: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
}

/** Every webhook's values, re-encrypted in `to` where `convert` can; the ids it could not convert. */
async function convertAll(knex: Knex, ring: Ring, to: 'aesgcm1' | 'aesgcm2'): Promise<string[]> {
  const skipped: string[] = [];
  const convert = (stored: string, slot: Slot, id: string): string => {
    if (stored.startsWith(`${to}:`)) return stored;
    const opened = decryptAny(ring, stored, slot, id);
    if (!opened) {
      skipped.push(`${id} (${slot}, key "${stored.split(':')[1] ?? '?'}")`);
      return stored;
    }
    return encryptAs(to, ring, opened.keyId, opened.plain, slot, id);
  };
  let after = '';
  for (;;) {
    const rows = (await knex('webhooks')
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .select('id', 'secret_ciphertext', 'previous_secret_ciphertext')) as SecretsRow[];
    for (const r of rows) {
      await knex('webhooks')
        .where({ id: r.id })
        .update({
          secret_ciphertext: convert(r.secret_ciphertext, 'webhook-current', r.id),
          previous_secret_ciphertext:
            r.previous_secret_ciphertext === null
              ? null
              : convert(r.previous_secret_ciphertext, 'webhook-previous', r.id),
        });
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < BATCH) return skipped;
    after = last.id;
  }
}

function report(skipped: string[], to: string): void {
  if (skipped.length === 0) return;
  process.stderr.write(
    `webhook secrets left unconverted to ${to} (their key is not in WEBHOOK_SECRET_KEYS): ${skipped.join(', ')}\n`,
  );
}

export async function up(knex: Knex): Promise<void> {
  report(await convertAll(knex, ringFromEnv().ring, 'aesgcm2'), 'aesgcm2');
}

export async function down(knex: Knex): Promise<void> {
  report(await convertAll(knex, ringFromEnv().ring, 'aesgcm1'), 'aesgcm1');
}
