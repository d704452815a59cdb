import assert from 'node:assert/strict';
import {
  createSecretBox,
  DEV_WEBHOOK_SECRET_KEYS,
  parseSecretKeys,
  SecretUnavailableError,
  webhookSecretBox,
} from '../../src/lib/secret-box';

describe('secret box (webhook secrets at rest)', () => {
  const k1 = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
  const k2 = `k2:${Buffer.alloc(32, 2).toString('base64')}`;
  const CURRENT = 'webhook-current';
  const PREVIOUS = 'webhook-previous';

  /** Asserts that `read` refuses with a SecretUnavailableError naming `keyId`. */
  const refuses = (read: () => unknown, keyId: string | null, message?: RegExp): void =>
    assert.throws(read, (err: unknown) => {
      assert.ok(err instanceof SecretUnavailableError, String(err));
      assert.equal(err.keyId, keyId);
      if (message) assert.match(err.message, message);
      return true;
    });

  it('AES-256-GCM under the first key; any listed key decrypts; the plaintext appears nowhere', () => {
    const old = webhookSecretBox(k1);
    const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
    const stored = old.encrypt(secret, CURRENT, 'wh_1');
    assert.match(stored, /^aesgcm2:k1:[\w-]{16}:[\w-]+:[\w-]{22}$/);
    assert.ok(!stored.includes(secret.slice(6)));
    assert.notEqual(old.encrypt(secret, CURRENT, 'wh_1'), stored, 'a fresh IV each time');
    const ring = webhookSecretBox(`${k2},${k1}`);
    assert.equal(ring.currentKeyId, 'k2');
    assert.equal(ring.decrypt(stored, CURRENT, 'wh_1'), secret);
    assert.equal(ring.keyIdOf(ring.encrypt(secret, CURRENT, 'wh_1')), 'k2');
  });

  it('refuses another row id (associated data), a tampered ciphertext and a key no longer listed', () => {
    const box = webhookSecretBox(k1);
    const stored = box.encrypt('whsec_x', CURRENT, 'wh_1');
    refuses(() => box.decrypt(stored, CURRENT, 'wh_2'), 'k1', /does not authenticate under key "k1"/);
    const parts = stored.split(':');
    parts[3] = Buffer.from('tampered').toString('base64url');
    refuses(() => box.decrypt(parts.join(':'), CURRENT, 'wh_1'), 'k1');
    refuses(
      () => webhookSecretBox(k2).decrypt(stored, CURRENT, 'wh_1'),
      'k1',
      /key "k1", which WEBHOOK_SECRET_KEYS does not list/,
    );
    refuses(() => box.decrypt('whsec_plaintext', CURRENT, 'wh_1'), null, /not an encrypted secret/);
    assert.equal(box.keyIdOf('whsec_plaintext'), null);
  });

  it('refuses a truncated or padded authentication tag: only the full 16 bytes pass', () => {
    const box = webhookSecretBox(k1);
    const stored = box.encrypt('whsec_x', CURRENT, 'wh_1');
    const parts = stored.split(':');
    const tag = Buffer.from(parts[4] as string, 'base64url');
    assert.equal(tag.length, 16);
    for (const other of [tag.subarray(0, 12), tag.subarray(0, 4), Buffer.concat([tag, Buffer.from([0])])]) {
      const forged = [...parts.slice(0, 4), other.toString('base64url')].join(':');
      refuses(() => box.decrypt(forged, CURRENT, 'wh_1'), 'k1', /malformed IV or tag/);
    }
  });

  it('binds the slot: the current and previous ciphertexts of one webhook cannot be swapped', () => {
    const box = webhookSecretBox(k1);
    const current = box.encrypt('whsec_new', CURRENT, 'wh_1');
    const previous = box.encrypt('whsec_old', PREVIOUS, 'wh_1');
    assert.equal(box.decrypt(current, CURRENT, 'wh_1'), 'whsec_new');
    assert.equal(box.decrypt(previous, PREVIOUS, 'wh_1'), 'whsec_old');
    refuses(() => box.decrypt(previous, CURRENT, 'wh_1'), 'k1', /does not authenticate/);
    refuses(() => box.decrypt(current, PREVIOUS, 'wh_1'), 'k1', /does not authenticate/);
  });

  it('binds the key id: a value relabelled with another listed key id does not decrypt', () => {
    // Two ids for one key: only the key id in the associated data tells them apart.
    const same = Buffer.alloc(32, 1).toString('base64');
    const ring = webhookSecretBox(`a:${same},b:${same}`);
    const stored = ring.encrypt('whsec_x', CURRENT, 'wh_1');
    assert.equal(ring.keyIdOf(stored), 'a');
    refuses(() => ring.decrypt(stored.replace(/^aesgcm2:a:/, 'aesgcm2:b:'), CURRENT, 'wh_1'), 'b');
  });

  it('names the key of a value still in the unmigrated aesgcm1 format', () => {
    const box = webhookSecretBox(k1);
    const legacy = box.encrypt('whsec_x', CURRENT, 'wh_1').replace(/^aesgcm2:/, 'aesgcm1:');
    refuses(() => box.decrypt(legacy, CURRENT, 'wh_1'), 'k1', /aesgcm1 under key "k1"/);
    assert.equal(box.keyIdOf(legacy), 'k1');
  });

  it('parses <id>:<base64 32 bytes> lists; the embedded dev ring by default', () => {
    assert.deepEqual(
      parseSecretKeys(`${k2}, ${k1}`).map((k) => k.id),
      ['k2', 'k1'],
    );
    assert.throws(() => parseSecretKeys(''), /at least one/);
    assert.throws(() => parseSecretKeys('k1:c2hvcnQ='), /32 bytes/);
    assert.equal(createSecretBox(parseSecretKeys(DEV_WEBHOOK_SECRET_KEYS)).currentKeyId, 'dev');
    assert.equal(webhookSecretBox(undefined).currentKeyId, 'dev');
  });
});
