/** HMAC-SHA256 callback signatures: what the simulator signs, the service verifies. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { signCallback, verifyCallback } from '../../src/acquirer/callback-signature';

describe('acquirer callback signature', () => {
  const secret = 'sig-test-secret';
  const body = '{"pix":[{"endToEndId":"E1","valor":"1.00"}]}';

  it('is lowercase hex HMAC-SHA256 of the raw body', () => {
    const expected = crypto.createHmac('sha256', secret).update(body).digest('hex');
    assert.equal(signCallback(secret, body), expected);
    assert.match(signCallback(secret, body), /^[0-9a-f]{64}$/);
    assert.equal(signCallback(secret, Buffer.from(body)), expected);
  });

  it('verifies the right signature and refuses anything else', () => {
    const sig = signCallback(secret, body);
    assert.equal(verifyCallback(secret, body, sig), true);
    assert.equal(verifyCallback(secret, Buffer.from(body), sig), true);
    assert.equal(verifyCallback('other-secret', body, sig), false);
    assert.equal(verifyCallback(secret, `${body} `, sig), false, 'any change to the bytes');
    assert.equal(verifyCallback(secret, body.replace('1.00', '9.00'), sig), false);
    assert.equal(verifyCallback(secret, body, sig.toUpperCase()), false, 'uppercase hex is not the format');
    assert.equal(verifyCallback(secret, body, sig.slice(0, 62)), false, 'truncated');
    assert.equal(verifyCallback(secret, body, `${sig}00`), false, 'too long');
    for (const junk of [undefined, '', 'zz', 42, null, [sig]]) assert.equal(verifyCallback(secret, body, junk), false);
  });
});
