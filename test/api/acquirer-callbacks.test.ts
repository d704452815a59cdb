/**
 * /v1/acquirer/* over real HTTP: every route wants the HMAC of the exact bytes (401 otherwise,
 * before the body is looked at), bodies follow the protocol's schemas (400 otherwise), and each
 * callback is kept once per body id in the `acquirer_callbacks` inbox however often it arrives.
 * Payments and refund outcomes reaching the workflow are in test/workflow/charge-flow.test.ts.
 */
import assert from 'node:assert/strict';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import { CALLBACK_SECRET, chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';
import { assertLedgerInvariant } from '../support/ledger-invariant';

describe('acquirer callbacks', function () {
  this.timeout(60_000);
  let s: ChargesStack;

  before(async () => {
    s = await chargesStack();
  });

  const post = (path: string, body: string, signature?: string) =>
    fetch(`${s.api.baseUrl}/v1/acquirer/${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(signature === undefined ? {} : { [CALLBACK_SIGNATURE_HEADER]: signature }),
      },
      body,
    });
  const signed = (path: string, payload: unknown) => {
    const body = JSON.stringify(payload);
    return post(path, body, signCallback(CALLBACK_SECRET, body));
  };
  const inbox = (kind: string, externalId: string) =>
    s.api.knex('acquirer_callbacks').where({ kind, external_id: externalId });

  const now = new Date().toISOString();
  const unique = () => `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const transferBody = (id: string, status: string) => ({
    transfer: {
      id,
      batchId: `b${id}`,
      idempotencyKey: `wd_${id}`,
      valor: '10.00',
      chave: 'maria@example.com',
      tipoChave: 'EMAIL',
      status,
      horario: { criacao: now },
    },
  });
  const infractionBody = (id: string, status: string) => ({
    infraction: {
      id,
      endToEndId: `E99999999${'0'.repeat(23)}`,
      valor: '10.00',
      motivo: 'fraude',
      status,
      horario: now,
    },
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

    await Promise.all([
      signed('infractions', infractionBody(id, 'OPEN')),
      signed('infractions', infractionBody(id, 'OPEN')),
    ]);
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

  describe('raw bytes and strict schemas', () => {
    afterEach(async () => {
      await assertLedgerInvariant(s.api.knex);
    });

    const e2eOf = (seed: string) => `E${seed}`.padEnd(32, '7').slice(0, 32);
    async function pendingCharge() {
      const m = await readyMerchant(s.api);
      const res = await s.api.request<{ charge: { id: string; txid: string } }>('POST', '/v1/charges', {
        token: m.token,
        body: { amount: 10_000, description: 'Pedido' },
      });
      assert.equal(res.status, 201);
      return { m, charge: res.body.charge };
    }

    it('verifies the exact bytes even when they differ from re-serialised JSON (whitespace, key order, escapes): the payment is applied', async () => {
      const { charge } = await pendingCharge();
      const e2e = e2eOf(unique());
      const raw = `{\n  "pix" : [ {\t"valor":"100.00" ,\r\n "horario": "${now}",\n "pagador": {"nome": "Jo\\u00e3o Pagador", "cpf": "12345678909"},\n "txid":"${charge.txid}", "endToEndId" : "${e2e}" } ]\n}\n`;
      assert.notEqual(JSON.stringify(JSON.parse(raw)), raw);
      const res = await post('pix', raw, signCallback(CALLBACK_SECRET, raw));
      assert.equal(res.status, 200, await res.clone().text());
      const row = await eventually(async () => {
        const r = await s.api.knex('charges').where({ id: charge.id }).first();
        return r?.status === 'PAID' ? r : undefined;
      }, 'the payment to be applied');
      assert.equal(row.e2e_id, e2e);
      assert.equal(row.payer_name, 'João Pagador');
      // Signed bytes that are not UTF-8 are refused as malformed, never decoded loosely.
      const bad = Buffer.concat([Buffer.from('{"pix":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
      const res2 = await fetch(`${s.api.baseUrl}/v1/acquirer/pix`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [CALLBACK_SIGNATURE_HEADER]: signCallback(CALLBACK_SECRET, bad),
        },
        body: bad,
      });
      assert.equal(res2.status, 400);
    });

    it('valor "0.00" or a bad horario is a 400 that changes nothing', async () => {
      const { m, charge } = await pendingCharge();
      const cases: Array<[string, Record<string, unknown>]> = [];
      const payment = (over: Record<string, unknown>) => {
        const e2e = e2eOf(unique());
        return { e2e, body: { pix: [{ endToEndId: e2e, txid: charge.txid, valor: '100.00', horario: now, ...over }] } };
      };
      const e2es: string[] = [];
      for (const over of [
        { valor: '0.00' },
        { horario: '2026-02-30T10:00:00Z' },
        { horario: 'ontem' },
        { horario: '2026-11-23T10:00:00' },
        { horario: '2026-11-23' },
        { horario: '2026-13-01T10:00:00Z' },
      ]) {
        const { e2e, body } = payment(over);
        e2es.push(e2e);
        cases.push(['pix', body]);
      }
      // A refund outcome of zero, and the other kinds with a zero amount or a bad date.
      const e2e = e2eOf(unique());
      e2es.push(e2e);
      cases.push([
        'pix',
        {
          pix: [
            {
              endToEndId: e2e,
              txid: charge.txid,
              valor: '100.00',
              horario: now,
              devolucoes: [
                { id: 'rf01', rtrId: e2eOf('D1'), valor: '0.00', horario: { solicitacao: now }, status: 'DEVOLVIDO' },
              ],
            },
          ],
        },
      ]);
      const id = unique();
      cases.push(['transfers', { transfer: { ...transferBody(id, 'COMPLETED').transfer, valor: '0.00' } }]);
      cases.push([
        'transfers',
        { transfer: { ...transferBody(id, 'COMPLETED').transfer, horario: { criacao: 'yesterday' } } },
      ]);
      cases.push(['infractions', { infraction: { ...infractionBody(id, 'OPEN').infraction, valor: '0.00' } }]);
      cases.push([
        'infractions',
        { infraction: { ...infractionBody(id, 'OPEN').infraction, horario: '2026-11-23 10:00' } },
      ]);
      cases.push(['pix-keys', { pixKey: { ...pixKeyBody(id, 'ATIVA').pixKey, horario: '' } }]);
      for (const [path, body] of cases) {
        const res = await signed(path, body);
        assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
        const answer = (await res.json()) as { message: string };
        assert.match(answer.message, /valor|horario|criacao|greater than 0|date-time/, answer.message);
      }
      for (const e of e2es) assert.equal((await inbox('pix', e)).length, 0);
      assert.equal((await s.api.knex('acquirer_callbacks').whereLike('external_id', `${id}:%`)).length, 0);
      assert.equal((await s.api.knex('charges').where({ id: charge.id }).first()).status, 'PENDING');
      assert.equal((await s.api.knex('ledger_transactions').where({ merchant_id: m.merchantId })).length, 0);
    });
  });
});
