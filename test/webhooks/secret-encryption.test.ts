/**
 * Webhook secrets at rest (docs/operations.md "Webhook secret encryption"): the `webhooks` row holds
 * only AES-256-GCM ciphertexts, before and after a rotation, and `npm run ops -- webhooks
 * rotate-encryption-key` moves every one of them under the first key of WEBHOOK_SECRET_KEYS.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { DEV_WEBHOOK_SECRET_KEYS, webhookSecretBox } from '../../src/lib/secret-box';
import { createWebhooksService } from '../../src/services/webhooks/webhooks';
import { createMerchantFixture, createTestDatabase } from '../support/db';
import { runOpsWithEnv } from '../support/ops-cli';
import { WEBHOOKS_TEST_CONFIG, webhookStack, type WebhookStack } from '../support/webhooks';

/** Every form a secret could be stored in clear: the whole string, its base64 body, the key bytes in hex. */
const clearForms = (secret: string): string[] => [
  secret,
  secret.slice(6),
  Buffer.from(secret.slice(6), 'base64').toString('hex'),
];

describe('webhook secrets at rest', function () {
  this.timeout(120_000);
  let s: WebhookStack;

  before(async () => {
    s = await webhookStack();
  });

  it('the webhooks row holds no secret in clear, before and during a rotation', async () => {
    const m = await s.api.createMerchant();
    const hook = await s.createWebhook(m.token, { path: '/at-rest' });
    const rowText = async (): Promise<string> => {
      const { rows } = (await s.knex.raw(`select row_to_json(w)::text as t from webhooks w where id = ?`, [
        hook.id,
      ])) as {
        rows: Array<{ t: string }>;
      };
      return rows[0]?.t ?? '';
    };
    const before = await rowText();
    for (const form of clearForms(hook.secret)) assert.ok(!before.includes(form), 'the secret is in clear in the row');
    const row = (await s.knex('webhooks').where({ id: hook.id }).first()) as Record<string, unknown>;
    assert.equal(row.secret, undefined, 'no plaintext column is left');
    assert.match(String(row.secret_ciphertext), /^aesgcm2:dev:/);
    assert.equal(row.previous_secret_ciphertext, null);

    const rotated = await s.api.request<{ webhook: { secret: string } }>(
      'POST',
      `/v1/webhooks/merchant/${hook.id}/rotate-secret`,
      { token: m.token },
    );
    assert.equal(rotated.status, 200);
    const during = await rowText();
    for (const secret of [hook.secret, rotated.body.webhook.secret])
      for (const form of clearForms(secret)) assert.ok(!during.includes(form), 'a secret is in clear in the row');
    const after = (await s.knex('webhooks').where({ id: hook.id }).first()) as Record<string, unknown>;
    assert.match(String(after.previous_secret_ciphertext), /^aesgcm2:dev:/);
    assert.notEqual(after.secret_ciphertext, row.secret_ciphertext);
  });

  describe('ops webhooks rotate-encryption-key', () => {
    let knex: Knex;
    let url: string;
    let drop: (() => Promise<void>) | undefined;

    // A database of its own: re-encrypting every webhook must not touch the suites sharing the run's database.
    before(async () => {
      const db = await createTestDatabase('whkeys');
      ({ knex, url, drop } = db);
    });
    after(async () => {
      await drop?.();
    });

    it('re-encrypts every current and overlapping secret under the first key; the old key can then go', async () => {
      const merchant = await createMerchantFixture(knex);
      const devService = createWebhooksService({ knex, config: WEBHOOKS_TEST_CONFIG });
      const a = await devService.create(merchant.id, { url: 'http://127.0.0.1:9/a' });
      const b = await devService.create(merchant.id, { url: 'http://127.0.0.1:9/b' });
      const bRotated = await devService.rotateSecret(merchant.id, b.id);

      const newKey = `k2026:${Buffer.alloc(32, 42).toString('base64')}`;
      const ring = `${newKey},${DEV_WEBHOOK_SECRET_KEYS}`;
      const run = await runOpsWithEnv(url, { WEBHOOK_SECRET_KEYS: ring }, 'webhooks', 'rotate-encryption-key');
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { keyId: 'k2026', webhooks: 2, reencrypted: 2 });

      const rows = (await knex('webhooks').orderBy('id')) as Array<{
        id: string;
        secret_ciphertext: string;
        previous_secret_ciphertext: string | null;
      }>;
      const onlyNew = webhookSecretBox(newKey);
      const byId = new Map(rows.map((r) => [r.id, r]));
      assert.equal(onlyNew.decrypt(byId.get(a.id)!.secret_ciphertext, 'webhook-current', a.id), a.secret);
      assert.equal(onlyNew.decrypt(byId.get(b.id)!.secret_ciphertext, 'webhook-current', b.id), bRotated.secret);
      assert.equal(onlyNew.decrypt(byId.get(b.id)!.previous_secret_ciphertext!, 'webhook-previous', b.id), b.secret);
      for (const r of rows)
        for (const form of [...clearForms(a.secret), ...clearForms(b.secret)]) {
          assert.ok(!JSON.stringify(r).includes(form));
        }

      // With the new key alone the service reads them all (the list masks what it decrypts).
      const newService = createWebhooksService({
        knex,
        config: { ...WEBHOOKS_TEST_CONFIG, WEBHOOK_SECRET_KEYS: newKey },
      });
      const listed = await newService.list(merchant.id);
      assert.deepEqual(
        listed.map((w) => w.secret).sort(),
        [a.secret, bRotated.secret].map((x) => `whsec_****${x.slice(-4)}`).sort(),
      );
      // The dev key alone no longer does, and says which key is missing.
      await assert.rejects(devService.list(merchant.id), (err: { code?: string; message: string }) => {
        assert.equal(err.code, 'webhook_secret_unavailable');
        assert.match(err.message, /needs key "k2026", which this server's WEBHOOK_SECRET_KEYS does not hold/);
        return true;
      });

      const again = await runOpsWithEnv(url, { WEBHOOK_SECRET_KEYS: ring }, 'webhooks', 'rotate-encryption-key');
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(JSON.parse(again.stdout), { keyId: 'k2026', webhooks: 2, reencrypted: 0 });
      const audited = (await knex('audit_log')
        .where({ action: 'webhooks.rotate_encryption_key' })
        .count({ n: '*' })) as [{ n: string | number }];
      assert.equal(Number(audited[0].n), 2);
    });
  });
});
