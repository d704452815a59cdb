/**
 * Webhook secrets encrypted at rest (docs/operations.md "Webhook secret encryption"): the plaintext
 * `secret` column becomes `secret_ciphertext` (AES-256-GCM under the first key of
 * WEBHOOK_SECRET_KEYS, the webhook id as associated data), and a rotation's overlap gets
 * `previous_secret_ciphertext` with `previous_secret_expires_at` (docs/api.md "Rotating the secret").
 *
 * The key ring comes from the environment, as the service reads it: in production the migration
 * refuses to run without WEBHOOK_SECRET_KEYS rather than encrypt under the published dev key.
 * It writes the `aesgcm1` format of its time (migrations/support/webhook-secret-crypto.ts);
 * 20261201150000_webhook_secret_slots moves it on.
 */
import type { Knex } from 'knex';
import { decryptAny, encryptAs, ringFromEnv } from './support/webhook-secret-crypto';

const BATCH = 500;

export async function up(knex: Knex): Promise<void> {
  const { ring, firstId } = ringFromEnv();
  await knex.raw(`alter table webhooks
    add column secret_ciphertext text,
    add column previous_secret_ciphertext text,
    add column previous_secret_expires_at timestamptz`);
  let after = '';
  for (;;) {
    const rows = (await knex('webhooks')
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .select('id', 'secret')) as Array<{ id: string; secret: string }>;
    if (rows.length === 0) break;
    for (const r of rows) {
      await knex('webhooks')
        .where({ id: r.id })
        .update({ secret_ciphertext: encryptAs('aesgcm1', ring, firstId, r.secret, 'webhook-current', r.id) });
    }
    after = (rows[rows.length - 1] as { id: string }).id;
  }
  await knex.raw(`alter table webhooks alter column secret_ciphertext set not null, drop column secret`);
  await knex.raw(`alter table webhooks add constraint webhooks_previous_secret_pair
    check ((previous_secret_ciphertext is null) = (previous_secret_expires_at is null))`);
}

/** Back to plaintext (the current secret; a rotation's previous one is dropped). */
export async function down(knex: Knex): Promise<void> {
  const { ring } = ringFromEnv();
  await knex.raw(`alter table webhooks add column secret text`);
  const rows = (await knex('webhooks').select('id', 'secret_ciphertext')) as Array<{
    id: string;
    secret_ciphertext: string;
  }>;
  for (const r of rows) {
    const opened = decryptAny(ring, r.secret_ciphertext, 'webhook-current', r.id);
    if (!opened) throw new Error(`webhook ${r.id}: its secret does not decrypt with WEBHOOK_SECRET_KEYS`);
    await knex('webhooks').where({ id: r.id }).update({ secret: opened.plain });
  }
  await knex.raw(`alter table webhooks alter column secret set not null,
    drop constraint webhooks_previous_secret_pair,
    drop column secret_ciphertext, drop column previous_secret_ciphertext, drop column previous_secret_expires_at`);
}
