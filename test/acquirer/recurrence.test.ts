/**
 * Pix Automático between the acquirer client and the simulator over HTTP: locrec, rec, solicrec,
 * cobr and retentativa, the payer's approval, refusal, cancellation and failed debits, and the
 * signed rec/cobr callbacks. Every request, answer and callback is validated against the BCB
 * document's own schemas.
 */
import assert from 'node:assert/strict';
import { CALLBACK_SIGNATURE_HEADER, verifyCallback } from '../../src/acquirer/callback-signature';
import { AcquirerError } from '../../src/acquirer/errors';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import type { RecRequest } from '../../src/acquirer/types';
import { cobRCallback, infractionCallback, pixCallback, recCallback } from '../../src/acquirer/wire';
import { decodeFields } from '../../src/pix/brcode';
import { newTxid } from '../../src/pix/brcode';
import { needing } from '../support/external-artefacts';
import {
  BCB_DOCUMENT,
  bcbExample,
  bcbViolations,
  bcbViolationsBeyondExample,
  itConformsToTheBcbDocument,
} from '../support/bcb-schema';
import { startReceiver, type Received, type Receiver } from './receiver';

const SECRET = 'recurrence-test-callback-secret';
const CLIENT = { clientId: 'c1', clientSecret: 's1' };
const DAY_MS = 86_400_000;
const inDays = (n: number): string => new Date(Date.now() + n * DAY_MS).toISOString().slice(0, 10);

/** Each Pix Automático schema used, with the document's own example of it (see `bcbViolationsBeyondExample`). */
const EXAMPLE_OF: Record<string, string> = {
  RecSolicitada: 'recBody1',
  RecGerada: 'recResponse1',
  RecCompleta: 'recResponse3',
  RecRevisada: 'recBody3',
  SolicRecSolicitada: 'solicRecBody1',
  SolicRecCompleta: 'solicRecResponse1',
  PayloadLocationRecGerada: 'payloadLocationRecResponse2',
  RecNotification: 'recWebhookNotification1/recs/0',
  CobRSolicitada: 'cobRBody1',
  CobRGerada: 'cobRResponse2',
  CobRCompleta: 'cobRResponse3',
  CobRNotification: 'cobRWebhookNotification1/cobsr/0',
};
/**
 * Checks no value can pass, and no example exercises (both shown below): PixAutomatico declares
 * `valor` a string and requires it to be one of five objects; `encerramento` is a oneOf of two
 * branches that require nothing, so every object matches both.
 */
const UNSATISFIABLE = [
  /^\/pix\/\d+\/valor must (be object|match a schema in anyOf)$/,
  /^\/encerramento must match exactly one schema in oneOf$/,
];
const bcb = (schema: string, body: unknown): string[] => {
  const example = EXAMPLE_OF[schema];
  const found = example ? bcbViolationsBeyondExample(schema, body, example) : bcbViolations(schema, body);
  return found.filter((v) => !UNSATISFIABLE.some((u) => u.test(v)));
};

describe('acquirer Pix Automático (rec, solicrec, cobr)', () => {
  let receiver: Receiver;
  let sim: RunningSimulator;
  let client: HttpAcquirer;

  before(async () => {
    receiver = await startReceiver();
    sim = await startAcquirerSimulator({
      callbackSecret: SECRET,
      callbackBaseUrl: receiver.url,
      ...CLIENT,
      callbackRetryBaseMs: 20,
      recurrence: { autoDebit: false },
    });
    client = new HttpAcquirer({ baseUrl: sim.url, ...CLIENT, timeoutMs: 2_000 });
  });
  after(async () => {
    await client.close();
    await sim.close();
    await receiver.close();
  });

  const lastCall = (route: string) => [...sim.control.calls].reverse().find((c) => c.route === route);
  const json = <T>(r: Received): T => JSON.parse(r.raw) as T;
  let contractSeq = 0;
  const recReq = (over: Partial<RecRequest> = {}): RecRequest => ({
    contract: `sub${Date.now()}${contractSeq++}`,
    object: 'Academia Plano Mensal',
    debtor: { name: 'Ana Pagadora', document: '12345678909' },
    firstDate: inDays(2),
    periodicity: 'MENSAL',
    amount: 9_990,
    retryPolicy: 'PERMITE_3R_7D',
    ...over,
  });
  const receiverAccount = { account: 'acct42', accountType: 'PAGAMENTO' as const };
  const approvedRec = async (over: Partial<RecRequest> = {}) => {
    const loc = await client.createRecLocation();
    const rec = await client.createRec(recReq({ locationId: loc.id, ...over }));
    sim.control.recurrences.approveRec(rec.idRec);
    return rec;
  };
  const callbacksFor = (path: string, id: string, count = 1) =>
    receiver.waitFor((r) => r.path === path && r.raw.includes(id), count);

  // Reads the document's own examples: pending with its reason when the document is absent.
  it(
    needing(BCB_DOCUMENT, 'where the document contradicts itself, its own examples fail the same checks'),
    BCB_DOCUMENT.path
      ? () => {
          const quirks = (schema: string, example: string) => bcbViolations(schema, bcbExample(example));
          assert.ok(quirks('RecSolicitada', 'recBody1').includes(" must have required property 'retentativa'"));
          assert.ok(quirks('SolicRecSolicitada', 'solicRecBody1').includes(" must have required property 'pagador'"));
          assert.ok(
            quirks('RecNotification', 'recWebhookNotification1/recs/0').includes(
              ` must have required property 'atualizacao"'`,
            ),
          );
          assert.ok(
            quirks('PayloadLocationRecGerada', 'payloadLocationRecResponse2').includes(
              '/location must match format "uri"',
            ),
          );
          const pix = {
            endToEndId: 'E12345678202406201221abcdef12345',
            txid: 'a'.repeat(30),
            horario: '2024-06-20T10:00:00Z',
          };
          assert.notDeepEqual(
            bcbViolations('PixAutomatico', { ...pix, valor: '10.00' }),
            [],
            'a string fails the anyOf',
          );
          assert.notDeepEqual(bcbViolations('PixAutomatico', { ...pix, valor: { original: { valor: '10.00' } } }), []);
          const refused = { encerramento: { rejeicao: { codigo: 'AP13', descricao: 'Recusada' } } };
          assert.ok(bcbViolations('RecEncerramento', refused).some((v) => UNSATISFIABLE[1]?.test(v)));
        }
      : undefined,
  );

  it('locrec, rec and its authorisation QR (JORNADA_2), all as the BCB schemas say', async () => {
    const loc = await client.createRecLocation();
    assert.deepEqual(bcb('PayloadLocationRecGerada', lastCall('createRecLocation')?.response), []);
    const rec = await client.createRec(recReq({ locationId: loc.id }));
    assert.match(rec.idRec, /^RR99999999\d{8}[a-zA-Z0-9]{11}$/);
    assert.equal(rec.status, 'CRIADA');
    assert.equal(rec.amount, 9_990);
    assert.deepEqual(bcb('RecSolicitada', lastCall('createRec')?.request), []);
    assert.deepEqual(bcb('RecGerada', lastCall('createRec')?.response), []);

    const read = await client.getRec(rec.idRec);
    assert.deepEqual(bcb('RecCompleta', lastCall('getRec')?.response), []);
    assert.ok(read.pixCopiaECola, 'the QR while CRIADA');
    const field80 = decodeFields(read.pixCopiaECola).find((f) => f.id === '80');
    assert.ok(field80?.value.includes(loc.location), 'field 80 carries the rec location');
    assert.equal(read.location, loc.location);

    const noFixed = await client.createRec(recReq({ amount: undefined, retryPolicy: 'NAO_PERMITE' }));
    assert.match(noFixed.idRec, /^RN/);
    assert.equal(noFixed.amount, undefined);
  });

  it('a replayed POST /rec (same contrato, same body) is the same rec; another body under it is 400', async () => {
    const req = recReq();
    const a = await client.createRec(req);
    const b = await client.createRec(req);
    assert.equal(b.idRec, a.idRec);
    await assert.rejects(client.createRec({ ...req, amount: 1 }), (e: AcquirerError) => e.code === 'REJECTED');
    assert.deepEqual(bcbViolations('Problema', lastCall('createRec')?.response), []);
  });

  it('solicrec asks the payer PSP to confirm (JORNADA_1)', async () => {
    const rec = await client.createRec(recReq());
    const s = await client.createSolicRec({
      idRec: rec.idRec,
      expiresAt: new Date(Date.now() + DAY_MS).toISOString(),
      destination: { ispb: '12345678', account: '550689', branch: '2569', document: '12345678909' },
    });
    assert.match(s.id, /^SC[a-zA-Z0-9]{27}$/);
    assert.equal(s.status, 'CRIADA');
    assert.deepEqual(bcb('SolicRecSolicitada', lastCall('createSolicRec')?.request), []);
    assert.deepEqual(bcb('SolicRecCompleta', lastCall('createSolicRec')?.response), []);
    sim.control.recurrences.approveRec(rec.idRec);
    assert.equal((await client.getRec(rec.idRec)).journey, 'JORNADA_1');
  });

  it('approval, refusal and the payer cancelling arrive as signed RecNotification callbacks', async () => {
    const approved = await approvedRec();
    const [a] = await callbacksFor('/v1/acquirer/rec', approved.idRec);
    assert.ok(a && verifyCallback(SECRET, a.raw, a.headers[CALLBACK_SIGNATURE_HEADER]));
    const body = json<{ recs: unknown[] }>(a);
    assert.equal(recCallback.safeParse(body).success, true);
    for (const r of body.recs) assert.deepEqual(bcb('RecNotification', r), []);
    assert.equal((await client.getRec(approved.idRec)).status, 'APROVADA');

    const refused = await client.createRec(recReq());
    sim.control.recurrences.refuseRec(refused.idRec);
    const [r] = await callbacksFor('/v1/acquirer/rec', refused.idRec);
    assert.ok(r);
    for (const n of json<{ recs: unknown[] }>(r).recs) assert.deepEqual(bcb('RecNotification', n), []);
    const refusedNow = await client.getRec(refused.idRec);
    assert.deepEqual(
      [refusedNow.status, refusedNow.ending?.kind, refusedNow.ending?.code],
      ['REJEITADA', 'REFUSED', 'AP13'],
    );

    sim.control.recurrences.cancelRecByPayer(approved.idRec);
    await callbacksFor('/v1/acquirer/rec', approved.idRec, 2);
    const canceled = await client.getRec(approved.idRec);
    assert.deepEqual(
      [canceled.status, canceled.ending?.requestedBy, canceled.pixCopiaECola],
      ['CANCELADA', 'USUARIO_PAGADOR', undefined],
    );
    assert.deepEqual(bcb('RecCompleta', lastCall('getRec')?.response), []);
  });

  it('a cobr is created 2 to 10 days ahead, debited, and reported by a CobRNotification', async () => {
    const rec = await approvedRec();
    const txid = newTxid();
    const req = { txid, idRec: rec.idRec, dueDate: inDays(5), amount: 9_990, receiver: receiverAccount };
    const cobr = await client.createCobR({ ...req, description: 'Mensalidade 1/12' });
    assert.deepEqual([cobr.status, cobr.attempts.map((a) => [a.type, a.status])], ['ATIVA', [['AGND', 'AGENDADA']]]);
    assert.deepEqual(bcb('CobRSolicitada', lastCall('createCobR')?.request), []);
    assert.deepEqual(bcb('CobRGerada', lastCall('createCobR')?.response), []);
    assert.equal((await client.createCobR({ ...req, description: 'Mensalidade 1/12' })).txid, txid, 'a replay');

    for (const [dueDate, amount] of [
      [inDays(1), 9_990],
      [inDays(11), 9_990],
      [inDays(5), 1_000],
    ] as const)
      await assert.rejects(
        client.createCobR({ ...req, txid: newTxid(), dueDate, amount }),
        (e: AcquirerError) => e.code === 'REJECTED' && e.status === 400,
      );

    sim.control.recurrences.settleCobR(txid, 'PAGA');
    const [cb] = await receiver.waitFor((r) => r.path === '/v1/acquirer/cobr' && r.raw.includes('CONCLUIDA'));
    assert.ok(cb && verifyCallback(SECRET, cb.raw, cb.headers[CALLBACK_SIGNATURE_HEADER]));
    const body = json<{ cobsr: unknown[] }>(cb);
    assert.equal(cobRCallback.safeParse(body).success, true);
    for (const n of body.cobsr) assert.deepEqual(bcb('CobRNotification', n), []);
    const paid = await client.getCobR(txid);
    assert.deepEqual(bcb('CobRCompleta', lastCall('getCobR')?.response), []);
    assert.equal(paid.status, 'CONCLUIDA');
    assert.deepEqual(
      paid.pix.map((p) => [p.amount, p.endToEndId]),
      [[9_990, paid.attempts[0]?.endToEndId]],
    );
    await assert.rejects(client.cancelCobR(txid), (e: AcquirerError) => e.code === 'REJECTED');
  });

  it("a paid cobr's debit is disputed and returned as a cob's payment is, within what was debited", async () => {
    const rec = await approvedRec();
    const txid = newTxid();
    await client.createCobR({ txid, idRec: rec.idRec, dueDate: inDays(4), amount: 9_990, receiver: receiverAccount });
    sim.control.recurrences.settleCobR(txid, 'PAGA');
    const e2e = (await client.getCobR(txid)).pix[0]?.endToEndId ?? '';
    const { infractionId } = sim.control.raiseInfraction(e2e, 'golpe');
    assert.deepEqual(
      [sim.control.getInfraction(infractionId)?.txid, sim.control.getInfraction(infractionId)?.amount],
      [txid, 9_990],
    );
    sim.control.acceptInfraction(infractionId);
    const rejected = (e: AcquirerError) => e.code === 'REJECTED' && e.status === 400;
    await assert.rejects(client.requestRefund(e2e, 'medOver', 9_991), rejected, 'more than was debited');
    const asked = await client.requestRefund(e2e, 'medCobr1', 9_990, 'MED');
    assert.deepEqual([asked.status, asked.amount], ['EM_PROCESSAMENTO', 9_990]);
    assert.deepEqual(bcb('DevolucaoSolicitada', lastCall('refund')?.request), []);
    assert.deepEqual(bcb('Devolucao', lastCall('refund')?.response), []);

    // Auto-settled: the pix callback carries the devolução, and the infraction is REFUNDED with it.
    const [settled] = await receiver.waitFor((r) => r.path === '/v1/acquirer/pix' && r.raw.includes(e2e));
    const pix = json<{ pix: Array<{ txid?: string }> }>(settled as Received).pix;
    assert.deepEqual([pixCallback.safeParse({ pix }).success, pix[0]?.txid], [true, txid]);
    for (const p of pix) assert.deepEqual(bcb('Pix', p), []);
    const [refunded] = await receiver.waitFor(
      (r) => r.path === '/v1/acquirer/infractions' && r.raw.includes(infractionId) && r.raw.includes('REFUNDED'),
    );
    const inf = infractionCallback.parse(json(refunded as Received)).infraction;
    assert.deepEqual([inf.id, inf.txid, inf.devolucao?.valor], [infractionId, txid, '99.90']);
    assert.deepEqual(bcb('Devolucao', inf.devolucao), []);
    assert.equal((await client.getRefund(e2e, 'medCobr1')).status, 'DEVOLVIDO');
    assert.deepEqual(bcb('Devolucao', lastCall('getRefund')?.response), []);
    await assert.rejects(client.requestRefund(e2e, 'medCobr2', 1), rejected, 'nothing left to return');
  });

  it('a rejected debit is retried by policy (up to 3 in 7 days); NAO_PERMITE rejects the cobr', async () => {
    const rec = await approvedRec();
    const txid = newTxid();
    const due = inDays(3);
    await client.createCobR({ txid, idRec: rec.idRec, dueDate: due, amount: 9_990, receiver: receiverAccount });
    sim.control.recurrences.settleCobR(txid, 'REJEITADA');
    const failed = await client.getCobR(txid);
    assert.deepEqual(
      [failed.status, failed.attempts[0]?.status, failed.attempts[0]?.rejection?.code],
      ['ATIVA', 'REJEITADA', 'AM02'],
    );
    const d = (n: number) => new Date(Date.parse(`${due}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
    await assert.rejects(client.retryCobR(txid, d(8)), (e: AcquirerError) => e.code === 'REJECTED', 'beyond 7 days');
    const retried = await client.retryCobR(txid, d(1));
    assert.deepEqual(bcb('CobRCompleta', lastCall('retryCobR')?.response), []);
    assert.deepEqual(
      retried.attempts.map((a) => [a.type, a.status]),
      [
        ['AGND', 'REJEITADA'],
        ['NTAG', 'AGENDADA'],
      ],
    );
    sim.control.recurrences.settleCobR(txid, 'PAGA');
    assert.equal((await client.getCobR(txid)).status, 'CONCLUIDA');

    const strict = await approvedRec({ retryPolicy: 'NAO_PERMITE' });
    const t2 = newTxid();
    await client.createCobR({ txid: t2, idRec: strict.idRec, dueDate: due, amount: 9_990, receiver: receiverAccount });
    sim.control.recurrences.settleCobR(t2, 'REJEITADA');
    assert.equal((await client.getCobR(t2)).status, 'REJEITADA');
    await assert.rejects(client.retryCobR(t2, d(1)), (e: AcquirerError) => e.code === 'REJECTED');
    assert.deepEqual(bcbViolations('Problema', lastCall('retryCobR')?.response), []);
  });

  it('cancelling the rec (ours) cancels its open cobr; both answers follow the schemas', async () => {
    const rec = await approvedRec();
    const txid = newTxid();
    await client.createCobR({ txid, idRec: rec.idRec, dueDate: inDays(4), amount: 9_990, receiver: receiverAccount });
    const canceled = await client.cancelRec(rec.idRec);
    assert.deepEqual(bcb('RecRevisada', lastCall('cancelRec')?.request), []);
    assert.deepEqual(bcb('RecGerada', lastCall('cancelRec')?.response), []);
    assert.deepEqual([canceled.status, canceled.ending?.requestedBy], ['CANCELADA', 'USUARIO_RECEBEDOR']);
    assert.equal((await client.cancelRec(rec.idRec)).status, 'CANCELADA', 'idempotent');
    assert.equal((await client.getCobR(txid)).status, 'CANCELADA');
    assert.equal((await client.cancelCobR(txid)).status, 'CANCELADA', 'idempotent');
    assert.deepEqual(bcb('CobRRevisada', lastCall('cancelCobR')?.request), []);
  });

  it('plays debits by itself after debitDelayMs, failing as many as told', async () => {
    const auto = await startAcquirerSimulator({
      callbackSecret: SECRET,
      callbackBaseUrl: receiver.url,
      ...CLIENT,
      recurrence: { debitDelayMs: 5 },
    });
    const c = new HttpAcquirer({ baseUrl: auto.url, ...CLIENT, timeoutMs: 2_000 });
    try {
      const rec = await c.createRec(recReq());
      auto.control.recurrences.approveRec(rec.idRec);
      auto.control.recurrences.failNextDebits(rec.idRec, 1);
      const txid = newTxid();
      await c.createCobR({ txid, idRec: rec.idRec, dueDate: inDays(3), amount: 9_990, receiver: receiverAccount });
      await receiver.waitFor(
        (r) => r.path === '/v1/acquirer/cobr' && r.raw.includes(txid) && r.raw.includes('REJEITADA'),
      );
      await c.retryCobR(txid, inDays(4));
      await receiver.waitFor(
        (r) => r.path === '/v1/acquirer/cobr' && r.raw.includes(txid) && r.raw.includes('CONCLUIDA'),
      );
      assert.equal((await c.getCobR(txid)).status, 'CONCLUIDA');
    } finally {
      await c.close();
      await auto.close();
    }
  });

  it('the /_sim control routes play the payer side over HTTP', async () => {
    const rec = await client.createRec(recReq());
    const post = (path: string, body: unknown = {}) =>
      fetch(`${sim.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await post(`/_sim/rec/${rec.idRec}/approve`)).status, 202);
    assert.equal((await post(`/_sim/rec/${rec.idRec}/approve`)).status, 409, 'no longer CRIADA');
    assert.equal((await post(`/_sim/rec/${rec.idRec}/fail-debits`, { times: 2 })).status, 202);
    assert.equal((await post(`/_sim/rec/RR999999992024010100000000000/approve`)).status, 404);
    assert.equal((await post(`/_sim/rec/${rec.idRec}/cancel`, { reason: 'mudou de ideia' })).status, 202);
    assert.equal((await client.getRec(rec.idRec)).status, 'CANCELADA');
  });

  itConformsToTheBcbDocument();
});
