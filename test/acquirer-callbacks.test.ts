/**
 * /v1/acquirer/* over real HTTP: every route wants the HMAC of the exact bytes (401 otherwise,
 * before the body is looked at), bodies follow the protocol's schemas (400 otherwise), and each
 * callback is kept once per body id in the `acquirer_callbacks` inbox however often it arrives.
 * Payments and refund outcomes reaching the workflow are in test/workflow/charge-flow.test.ts.
 */
import assert from 'node:assert/strict';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../src/acquirer/callback-signature';
import { CALLBACK_SECRET, chargesStack, type ChargesStack } from './support/charges';

describe('acquirer callbacks', function () {
  this.timeout(60_000);
  let s: ChargesStack;

  before(async () => {
    s = await chargesStack();
  });

  const post = (path: string, body: string, signature?: string) =>
    fetch(`${s.api.baseUrl}/v1/acquirer/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { [CALLBACK_SIGNATURE_HEADER]: signature }) },
      body,
    });
  const signed = (path: string, payload: unknown) => {
    const body = JSON.stringify(payload);
    return post(path, body, signCallback(CALLBACK_SECRET, body));
  };
  const inbox = (kind: string, externalId: string) => s.api.knex('acquirer_callbacks').where({ kind, external_id: externalId });

  const now = new Date().toISOString();
  const unique = () => `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const transferBody = (id: string, status: string) => ({
    transfer: {
      id, batchId: `b${id}`, idempotencyKey: `wd_${id}`, valor: '10.00', chave: 'maria@example.com', tipoChave: 'EMAIL',
      status, horario: { criacao: now },
    },
  });
  const infractionBody = (id: string, status: string) => ({
    infraction: { id, endToEndId: `E99999999${'0'.repeat(23)}`, valor: '10.00', motivo: 'fraude', status, horario: now },
  });
  const pixKeyBody = (id: string, status: string) => ({
    pixKey: { id, chave: 'maria@example.com', tipoChave: 'EMAIL', status, horario: now },
  });

  for (const [path, body] of [
    ['pix', { pix: [{ endToEndId: `E${'1'.repeat(31)}`, txid: 'x'.repeat(30), valor: '1.00', horario: now }] }],
    ['transfers', transferBody('t1', 'COMPLETED')],
    ['infractions', infractionBody('i1', 'OPEN')],
    ['pix-keys', pixKeyBody('k1', 'ATIVA')],
  ] as const) {
    it(`answers 401 to an unsigned, badly signed or tampered ${path} callback`, async () => {
      const raw = JSON.stringify(body);
      assert.equal((await post(path, raw)).status, 401);
      assert.equal((await post(path, raw, signCallback('another-secret', raw))).status, 401);
      assert.equal((await post(path, raw, 'not-hex')).status, 401);
      assert.equal((await post(path, `${raw} `, signCallback(CALLBACK_SECRET, raw))).status, 401);
      // Re-serialised JSON is not the signed bytes.
      const spaced = JSON.stringify(body, null, 2);
      assert.equal((await post(path, spaced, signCallback(CALLBACK_SECRET, raw))).status, 401);
    });
  }

  it('answers 400 to a signed body that is not the protocol', async () => {
    for (const [path, body] of [
      ['pix', { pix: [] }],
      ['pix', { pix: [{ endToEndId: 'short', valor: '1.00', horario: now }] }],
      ['pix', { pix: [{ endToEndId: `E${'2'.repeat(31)}`, valor: '1.5', horario: now }] }],
      ['transfers', { transfer: { id: 'x' } }],
      ['infractions', infractionBody('i2', 'SOMETHING')],
      ['pix-keys', {}],
    ] as const) {
      const res = await signed(path, body);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
      const answer = (await res.json()) as { message: string };
      assert.equal(typeof answer.message, 'string');
    }
  });

  it('keeps transfer, infraction and key callbacks once per (id, status) and answers 202', async () => {
    const id = unique();
    for (let i = 0; i < 3; i++) assert.equal((await signed('transfers', transferBody(id, 'COMPLETED'))).status, 202);
    assert.equal((await signed('transfers', transferBody(id, 'RETURNED'))).status, 202);
    assert.equal((await inbox('transfers', `${id}:COMPLETED`)).length, 1);
    assert.equal((await inbox('transfers', `${id}:RETURNED`)).length, 1);

    await Promise.all([signed('infractions', infractionBody(id, 'OPEN')), signed('infractions', infractionBody(id, 'OPEN'))]);
    assert.equal((await inbox('infractions', `${id}:OPEN`)).length, 1);

    assert.equal((await signed('pix-keys', pixKeyBody(id, 'ATIVA'))).status, 202);
    assert.equal((await signed('pix-keys', pixKeyBody(id, 'ATIVA'))).status, 202);
    const [row] = await inbox('pix-keys', `${id}:ATIVA`);
    assert.equal(row.payload.pixKey.status, 'ATIVA');
  });

  it('keeps a payment for an unknown txid in the inbox once, and answers 200', async () => {
    const e2e = `E${unique()}`.padEnd(32, '0');
    const body = { pix: [{ endToEndId: e2e, txid: 'unknowntxid'.padEnd(30, '0'), valor: '12.34', horario: now }] };
    assert.equal((await signed('pix', body)).status, 200);
    assert.equal((await signed('pix', body)).status, 200);
    const rows = await inbox('pix', e2e);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].payload.valor, '12.34');
  });
});
