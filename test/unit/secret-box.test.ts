import assert from 'node:assert/strict';
import {
  createSecretBox,
  DEV_WEBHOOK_SECRET_KEYS,
  parseSecretKeys,
  webhookSecretBox,
  webhookSecretBoxFromEnv,
} from '../../src/lib/secret-box';

describe('secret box (webhook secrets at rest)', () => {
  const k1 = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
  const k2 = `k2:${Buffer.alloc(32, 2).toString('base64')}`;

  it('AES-256-GCM under the first key; any listed key decrypts; the plaintext appears nowhere', () => {
    const old = webhookSecretBox(k1);
    const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
    const stored = old.encrypt(secret, 'wh_1');
    assert.match(stored, /^aesgcm1:k1:[\w-]{16}:[\w-]+:[\w-]{22}$/);
    assert.ok(!stored.includes(secret.slice(6)));
    assert.notEqual(old.encrypt(secret, 'wh_1'), stored, 'a fresh IV each time');
    const ring = webhookSecretBox(`${k2},${k1}`);
    assert.equal(ring.currentKeyId, 'k2');
    assert.equal(ring.decrypt(stored, 'wh_1'), secret);
    assert.equal(ring.keyIdOf(ring.encrypt(secret, 'wh_1')), 'k2');
  });

  it('refuses another row id (associated data), a tampered ciphertext and a key no longer listed', () => {
    const box = webhookSecretBox(k1);
    const stored = box.encrypt('whsec_x', 'wh_1');
    assert.throws(() => box.decrypt(stored, 'wh_2'));
    const parts = stored.split(':');
    parts[3] = Buffer.from('tampered').toString('base64url');
    assert.throws(() => box.decrypt(parts.join(':'), 'wh_1'));
    assert.throws(
      () => webhookSecretBox(k2).decrypt(stored, 'wh_1'),
      /key "k1", which WEBHOOK_SECRET_KEYS does not list/,
    );
    assert.throws(() => box.decrypt('whsec_plaintext', 'wh_1'), /not an encrypted secret/);
  });

  it('parses <id>:<base64 32 bytes> lists; the embedded dev ring outside production only', () => {
    assert.deepEqual(
      parseSecretKeys(`${k2}, ${k1}`).map((k) => k.id),
      ['k2', 'k1'],
    );
    assert.throws(() => parseSecretKeys(''), /at least one/);
    assert.throws(() => parseSecretKeys('k1:c2hvcnQ='), /32 bytes/);
    assert.equal(createSecretBox(parseSecretKeys(DEV_WEBHOOK_SECRET_KEYS)).currentKeyId, 'dev');
    assert.equal(webhookSecretBoxFromEnv({ NODE_ENV: 'test' }).currentKeyId, 'dev');
    assert.throws(() => webhookSecretBoxFromEnv({ NODE_ENV: 'production' }), /WEBHOOK_SECRET_KEYS: required/);
    assert.equal(webhookSecretBoxFromEnv({ NODE_ENV: 'production', WEBHOOK_SECRET_KEYS: k1 }).currentKeyId, 'k1');
  });
});
