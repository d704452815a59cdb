/**
 * A body whose Content-Encoding does not match its bytes is the client's mistake: 400 `{message}`,
 * never a 500 (the fuzz suite found the 500). A body that really is compressed still works.
 */
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startApi, TEST_ADMIN, type TestApi } from '../support/api';
import { assertErrorBody } from '../support/errors';

describe('compressed request bodies', () => {
  let api: TestApi;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  for (const encoding of ['gzip', 'deflate', 'br']) {
    it(`${encoding} that is not ${encoding}: 400 {message}`, async () => {
      const res = await fetch(`${api.baseUrl}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body: '{"email":"a@b.test","password":"x"}',
      });
      assert.equal(res.status, 400);
      assert.equal(
        assertErrorBody(await res.json(), '', { code: 'malformed_body' }).message,
        'Malformed body: it does not match its Content-Encoding',
      );
    });
  }

  it('a gzip body that is gzip is parsed', async () => {
    const res = await fetch(`${api.baseUrl}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: zlib.gzipSync(JSON.stringify(TEST_ADMIN)),
    });
    assert.equal(res.status, 200);
    assert.equal(typeof ((await res.json()) as { token: unknown }).token, 'string');
  });
});
