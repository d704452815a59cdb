/**
 * OWASP API8 (security misconfiguration) at the transport: what a client can do with paths and
 * encodings never yields a 500. The router matches paths case-insensitively, so `/V1/ACQUIRER/pix`
 * is the callback route and must verify its signature like `/v1/acquirer/pix` (it used to find its
 * body already consumed: 500); a compressed body that does not decompress is 400 (it used to be
 * 500), an unknown encoding 415, and the size limit counts decompressed bytes (a gzip bomb is 413).
 */
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import { CALLBACK_SECRET, chargesStack, type ChargesStack } from '../support/charges';
import type { MerchantFixture } from '../support/api';
import { assertErrorBody } from '../support/errors';

describe('security: paths and encodings', function () {
  this.timeout(60_000);
  let s: ChargesStack;
  let m: MerchantFixture;

  before(async () => {
    s = await chargesStack();
    m = await s.api.createMerchant();
  });

  const send = async (path: string, body: string | Buffer, headers: Record<string, string>) => {
    const res = await fetch(s.api.baseUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('a callback path in another letter case is the callback route: signature checked, never a 500', async () => {
    const e2e = `E${Date.now()}`.padEnd(32, '3');
    const body = JSON.stringify({
      pix: [{ endToEndId: e2e, txid: 'caseprobe'.padEnd(30, '0'), valor: '1.00', horario: new Date().toISOString() }],
    });
    for (const path of ['/V1/ACQUIRER/pix', '/v1/Acquirer/Pix']) {
      const unsigned = await send(path, body, {});
      assert.equal(unsigned.status, 401, `${path}: ${JSON.stringify(unsigned.body)}`);
      const forged = await send(path, body, { [CALLBACK_SIGNATURE_HEADER]: signCallback('not-the-acquirer', body) });
      assert.equal(forged.status, 401, path);
      const signed = await send(path, body, { [CALLBACK_SIGNATURE_HEADER]: signCallback(CALLBACK_SECRET, body) });
      assert.equal(signed.status, 200, `${path}: ${JSON.stringify(signed.body)}`);
    }
    assert.equal((await s.api.knex('acquirer_callbacks').where({ kind: 'pix', external_id: e2e })).length, 1);
  });

  it('a body that does not decompress is 400, an unknown encoding 415, and nothing is created', async () => {
    const auth = { authorization: `Bearer ${m.token}` };
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await send('/v1/api-keys', '{"name":"not compressed"}', { ...auth, 'content-encoding': encoding });
      assert.equal(res.status, 400, `${encoding}: ${JSON.stringify(res.body)}`);
      assert.equal(
        assertErrorBody(res.body, '', { code: 'malformed_body' }).message,
        'Malformed body: it does not match its Content-Encoding',
      );
    }
    const unknown = await send('/v1/api-keys', '{"name":"x"}', { ...auth, 'content-encoding': 'x-compress-9000' });
    assert.equal(unknown.status, 415);
    assertErrorBody(unknown.body);
    assert.equal((await s.api.knex('api_keys').where({ merchant_id: m.merchantId })).length, 0);
    // A real compressed body is still accepted.
    const ok = await send('/v1/api-keys', zlib.gzipSync('{"name":"gzipped"}'), { ...auth, 'content-encoding': 'gzip' });
    assert.equal(ok.status, 201);
  });

  it('the body limit counts decompressed bytes: a 20 MB gzip bomb of a few KB is 413', async () => {
    const bomb = zlib.gzipSync(JSON.stringify({ name: 'bomb', description: ' '.repeat(20_000_000) }));
    assert.ok(bomb.length < s.api.config.BODY_LIMIT_BYTES);
    const res = await send('/v1/api-keys', bomb, { authorization: `Bearer ${m.token}`, 'content-encoding': 'gzip' });
    assert.equal(res.status, 413);
    assertErrorBody(res.body);
  });
});
