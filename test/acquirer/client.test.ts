/**
 * The acquirer HTTP client against the real simulator over HTTP: OAuth2 token caching, cob,
 * devolução, transfer idempotency, typed retryable/non-retryable errors, signed callbacks — and
 * everything exchanged checked against the Banco Central's API Pix schemas.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { AcquirerError } from '../../src/acquirer/errors';
import { centsToWire, wireToCents } from '../../src/acquirer/money-wire';
import { CALLBACK_SIGNATURE_HEADER, verifyCallback } from '../../src/acquirer/callback-signature';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import { newTxid } from '../../src/pix';
import { bcbViolations } from '../support/bcb-schema';

const SECRET = 'client-test-callback-secret';
const CLIENT = { clientId: 'c1', clientSecret: 's1' };

describe('acquirer client and simulator', () => {
  let sim: RunningSimulator;
  let receiver: http.Server;
  const received: Array<{ path: string; raw: string; signature: string | undefined }> = [];
  let client: HttpAcquirer;

  before(async () => {
    receiver = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        received.push({ path: req.url ?? '', raw, signature: req.headers[CALLBACK_SIGNATURE_HEADER] as string | undefined });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const { port } = receiver.address() as AddressInfo;
    sim = await startAcquirerSimulator({
      callbackSecret: SECRET,
      callbackBaseUrl: `http://127.0.0.1:${port}`,
      ...CLIENT,
      autoComplete: false,
    });
    client = new HttpAcquirer({ baseUrl: sim.url, ...CLIENT, timeoutMs: 1_000 });
  });

  after(async () => {
    await sim.close();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  const lastCall = (route: string) => [...sim.control.calls].reverse().find((c) => c.route === route);

  it('converts money on the wire exactly, never through floats', () => {
    assert.equal(centsToWire(1), '0.01');
    assert.equal(centsToWire(123_456_789), '1234567.89');
    assert.equal(wireToCents('0.10'), 10);
    assert.equal(wireToCents('1234567.89'), 123_456_789);
    assert.equal(wireToCents('1.5'), null);
    assert.equal(wireToCents(12.5), null);
  });

  it('fetches one OAuth2 token and reuses it across calls', async () => {
    const before = sim.control.calls.filter((c) => c.route === 'token').length;
    const fresh = new HttpAcquirer({ baseUrl: sim.url, ...CLIENT, timeoutMs: 1_000 });
    await Promise.all([1, 2, 3].map(() => fresh.createCob({ txid: newTxid(), amount: 100, expiresIn: 3600, key: 'k@x.com' })));
    await fresh.createCob({ txid: newTxid(), amount: 100, expiresIn: 3600, key: 'k@x.com' });
    assert.equal(sim.control.calls.filter((c) => c.route === 'token').length - before, 1);
  });

  it('creates, reads and removes a cob; request and response follow the BCB schemas', async () => {
    const txid = newTxid();
    const cob = await client.createCob({ txid, amount: 2_550, expiresIn: 600, key: 'loja@x.com', description: 'Pedido', debtor: { name: 'Ana', document: '12345678909' } });
    assert.equal(cob.status, 'ATIVA');
    assert.equal(cob.amount, 2_550);
    const call = lastCall('createCob');
    assert.deepEqual(bcbViolations('CobSolicitada', call?.request), []);
    assert.deepEqual(bcbViolations('CobGerada', call?.response), []);
    assert.equal((await client.getCob(txid)).txid, txid);
    assert.equal((await client.removeCob(txid)).status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    assert.equal((await client.removeCob(txid)).status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR'); // idempotent
  });

  it('delivers a signed pix callback that follows the BCB Pix schema', async () => {
    const txid = newTxid();
    await client.createCob({ txid, amount: 1_000, expiresIn: 600, key: 'loja@x.com' });
    const { endToEndId } = await sim.control.payCob(txid, { payer: { name: 'Pagador', document: '11222333000181' } });
    await sim.control.callbacks.idle();
    const cb = received.find((r) => r.raw.includes(endToEndId));
    assert.ok(cb);
    assert.equal(cb.path, '/v1/acquirer/pix');
    assert.equal(verifyCallback(SECRET, cb.raw, cb.signature), true);
    assert.equal(verifyCallback('other', cb.raw, cb.signature), false);
    const body = JSON.parse(cb.raw) as { pix: unknown[] };
    for (const p of body.pix) assert.deepEqual(bcbViolations('Pix', p), []);
  });

  it('requests a devolução idempotently, following the BCB schemas', async () => {
    const txid = newTxid();
    await client.createCob({ txid, amount: 1_000, expiresIn: 600, key: 'loja@x.com' });
    sim.control.setAutoSettleRefunds(false);
    const { endToEndId } = await sim.control.payCob(txid);
    const a = await client.requestRefund(endToEndId, 'rfA1', 400, 'defeito');
    const b = await client.requestRefund(endToEndId, 'rfA1', 400, 'defeito');
    assert.equal(a.rtrId, b.rtrId);
    assert.equal(a.status, 'EM_PROCESSAMENTO');
    const call = lastCall('refund');
    assert.deepEqual(bcbViolations('DevolucaoSolicitada', call?.request), []);
    assert.deepEqual(bcbViolations('Devolucao', call?.response), []);
    sim.control.settleRefund('rfA1', 'DEVOLVIDO');
    assert.equal((await client.getRefund(endToEndId, 'rfA1')).status, 'DEVOLVIDO');
    await assert.rejects(client.requestRefund(endToEndId, 'rfA2', 700), (e: unknown) => e instanceof AcquirerError && !e.retryable);
    sim.control.setAutoSettleRefunds(true);
  });

  it('sends one transfer per idempotency key', async () => {
    const req = { amount: 5_000, pixKeyType: 'EMAIL' as const, pixKey: 'dest@x.com' };
    const a = await client.sendTransfer('wd_1', req);
    const b = await client.sendTransfer('wd_1', req);
    assert.equal(a.transferId, b.transferId);
    assert.equal(a.status, 'PROCESSING');
    sim.control.completeTransfer(a.transferId);
    assert.equal((await client.getTransfer(a.transferId)).status, 'COMPLETED');
  });

  it('types failures: 5xx and timeouts are retryable, 4xx is not', async () => {
    sim.control.setFaults({ failNext: { route: 'getCob', times: 1, status: 500 } });
    await assert.rejects(client.getCob('x'.repeat(30)), (e: unknown) => e instanceof AcquirerError && e.retryable && e.status === 500);
    sim.control.setFaults({});
    await assert.rejects(client.getCob('x'.repeat(30)), (e: unknown) => e instanceof AcquirerError && !e.retryable && e.status === 404);
    await assert.rejects(
      client.createCob({ txid: 'short', amount: 100, expiresIn: 60, key: 'k' }),
      (e: unknown) => e instanceof AcquirerError && !e.retryable && e.name === 'AcquirerRejectedError',
    );
    sim.control.setFaults({ latencyMs: 1_500 });
    await assert.rejects(client.getCob('x'.repeat(30)), (e: unknown) => e instanceof AcquirerError && e.retryable && /timed out/.test(e.message));
    sim.control.setFaults({});
  });

  it('refuses bad credentials with a non-retryable error', async () => {
    const bad = new HttpAcquirer({ baseUrl: sim.url, clientId: 'c1', clientSecret: 'wrong', timeoutMs: 1_000 });
    await assert.rejects(bad.getCob('x'.repeat(30)), (e: unknown) => e instanceof AcquirerError && e.status === 401 && !e.retryable);
  });

  it('registers a PIX key idempotently and announces status changes and infractions by signed callbacks', async () => {
    const a = await client.registerPixKey('pxk_1', 'EMAIL', 'loja@x.com');
    const b = await client.registerPixKey('pxk_1', 'EMAIL', 'loja@x.com');
    assert.equal(a.id, b.id);
    assert.equal(a.status, 'PENDENTE');
    sim.control.setKeyStatus(a.id, 'ATIVA');
    const txid = newTxid();
    await client.createCob({ txid, amount: 1_000, expiresIn: 600, key: 'loja@x.com' });
    const { endToEndId } = await sim.control.payCob(txid);
    const { infractionId } = sim.control.raiseInfraction(endToEndId, 'golpe');
    sim.control.updateInfraction(infractionId, 'ACCEPTED');
    await sim.control.callbacks.idle();
    const keyCb = received.find((r) => r.path === '/v1/acquirer/pix-keys' && r.raw.includes(a.id));
    assert.ok(keyCb && verifyCallback(SECRET, keyCb.raw, keyCb.signature));
    const infCbs = received.filter((r) => r.path === '/v1/acquirer/infractions' && r.raw.includes(infractionId));
    assert.equal(infCbs.length, 2);
    for (const cb of infCbs) assert.equal(verifyCallback(SECRET, cb.raw, cb.signature), true);
  });
});
