/**
 * The acquirer HTTP client against the real simulator over HTTP on 127.0.0.1: OAuth2 token caching
 * and refresh, cob, devolução, transfer and key idempotency, typed retryable / non-retryable
 * errors — with what client and simulator exchange checked against the BCB API Pix schemas.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpAcquirer } from '../../src/acquirer/http-client';
import { AcquirerError, type AcquirerErrorCode } from '../../src/acquirer/errors';
import { startAcquirerSimulator, type RunningSimulator, type SimRoute } from '../../src/acquirer/simulator/server';
import { newTxid } from '../../src/pix/brcode';
import { bcbViolations, itConformsToTheBcbDocument } from '../support/bcb-schema';
import { startReceiver, type Receiver } from './receiver';

/** Polls `check` until it holds (bounded), for conditions the simulator does not announce. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const CLIENT = { clientId: 'c1', clientSecret: 's1' };
const SECRET = 'client-test-callback-secret';

/** assert.rejects predicate: an AcquirerError with this code (and so this retryability). */
const fails =
  (code: AcquirerErrorCode, retryable: boolean, status?: number) =>
  (e: unknown): boolean => {
    assert.ok(e instanceof AcquirerError, `expected AcquirerError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.equal(e.retryable, retryable);
    assert.equal(e.name, retryable ? 'AcquirerUnavailableError' : 'AcquirerRejectedError');
    if (status !== undefined) assert.equal(e.status, status);
    return true;
  };

describe('acquirer client against the simulator', () => {
  let sim: RunningSimulator;
  let receiver: Receiver;
  let client: HttpAcquirer;

  before(async () => {
    receiver = await startReceiver();
    sim = await startAcquirerSimulator({
      callbackSecret: SECRET,
      callbackBaseUrl: receiver.url,
      ...CLIENT,
      autoComplete: false,
    });
    sim.control.setAutoSettleRefunds(false);
    client = new HttpAcquirer({ baseUrl: sim.url, ...CLIENT, timeoutMs: 2_000 });
  });
  after(async () => {
    await sim.close();
    await receiver.close();
  });
  afterEach(() => sim.control.setFaults({}));

  const count = (route: SimRoute, status?: number): number =>
    sim.control.calls.filter((c) => c.route === route && (status === undefined || c.status === status)).length;
  const lastCall = (route: SimRoute) => [...sim.control.calls].reverse().find((c) => c.route === route);
  const cobReq = (over: Partial<Parameters<HttpAcquirer['createCob']>[0]> = {}) => ({
    txid: newTxid(),
    amount: 1_000,
    expiresIn: 600,
    key: 'loja@example.com',
    ...over,
  });

  describe('OAuth2 client credentials', () => {
    it('fetches one token for concurrent first calls and reuses it', async () => {
      const before = count('token');
      const fresh = new HttpAcquirer({ baseUrl: sim.url, ...CLIENT, timeoutMs: 2_000 });
      await Promise.all(Array.from({ length: 5 }, () => fresh.createCob(cobReq())));
      await fresh.createCob(cobReq());
      assert.equal(count('token') - before, 1);
    });

    it('fetches a new token shortly before the old one expires', async () => {
      const shortLived = await startAcquirerSimulator({ callbackSecret: SECRET, ...CLIENT, tokenTtlSeconds: 2 });
      try {
        const c = new HttpAcquirer({ baseUrl: shortLived.url, ...CLIENT, timeoutMs: 2_000 });
        await c.createCob(cobReq());
        await c.createCob(cobReq());
        const tokens = (): string[] =>
          shortLived.control.calls.filter((x) => x.route === 'token').map((x) => x.at ?? '');
        assert.equal(tokens().length, 1);
        // A 2 s token is refreshed at half its life, never sent expired. Calls go on until the second
        // token is fetched (a condition, not a sleep); it must have been fetched while the first was
        // still valid on the simulator's own clock (an order of two recorded events), and no call
        // may have met a 401 on the way.
        await until(async () => {
          await c.createCob(cobReq());
          return tokens().length === 2;
        }, 'a second token');
        const [first, second] = tokens().map((at) => Date.parse(at)) as [number, number];
        assert.ok(
          second < first + 2_000,
          `refreshed ${second - first} ms after the first token, not before it expired`,
        );
        assert.equal(shortLived.control.calls.filter((x) => x.status === 401).length, 0);
      } finally {
        await shortLived.close();
      }
    });

    it('on a 401 (token revoked early) fetches a new token once and resends', async () => {
      await client.getCob((await client.createCob(cobReq())).txid); // a cached token
      const tokens = count('token');
      sim.control.revokeTokens();
      const cob = await client.createCob(cobReq());
      assert.equal(cob.status, 'ATIVA');
      assert.equal(count('token') - tokens, 1);
      assert.equal(lastCall('createCob')?.status, 201);
    });

    it('bad credentials are UNAUTHORIZED, not retryable', async () => {
      const bad = new HttpAcquirer({ baseUrl: sim.url, clientId: 'c1', clientSecret: 'wrong', timeoutMs: 2_000 });
      await assert.rejects(bad.getCob('x'.repeat(30)), fails('UNAUTHORIZED', false, 401));
    });
  });

  describe('cob', () => {
    it('creates, reads and removes a cob; every exchange follows the BCB schemas', async () => {
      const txid = newTxid();
      const cob = await client.createCob(
        cobReq({ txid, amount: 2_550, description: 'Pedido 42', debtor: { name: 'Ana', document: '12345678909' } }),
      );
      assert.equal(cob.status, 'ATIVA');
      assert.equal(cob.amount, 2_550);
      assert.equal(cob.revision, 0);
      assert.match(cob.pixCopiaECola, new RegExp(`05${String(txid.length).padStart(2, '0')}${txid}`));
      const created = lastCall('createCob');
      assert.deepEqual(bcbViolations('CobSolicitada', created?.request), []);
      assert.deepEqual(bcbViolations('CobGerada', created?.response), []);
      assert.equal((created?.request as { valor: { original: string } }).valor.original, '25.50');

      const read = await client.getCob(txid);
      assert.equal(read.txid, txid);
      assert.deepEqual(read.pix, []);
      assert.deepEqual(bcbViolations('CobCompleta', lastCall('getCob')?.response), []);

      const removed = await client.removeCob(txid);
      assert.equal(removed.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
      assert.equal(removed.revision, 1);
      assert.deepEqual(bcbViolations('CobRevisada', lastCall('removeCob')?.request), []);
      assert.deepEqual(bcbViolations('CobGerada', lastCall('removeCob')?.response), []);
      assert.equal((await client.removeCob(txid)).status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'removal is idempotent');
      assert.equal(sim.control.getCob(txid)?.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'removed at the simulator');
    });

    it('a replayed PUT returns the same cob; the same txid with other data is rejected', async () => {
      const req = cobReq();
      const a = await client.createCob(req);
      const b = await client.createCob(req);
      assert.deepEqual(b, a);
      await assert.rejects(client.createCob({ ...req, amount: 999 }), fails('REJECTED', false, 400));
    });

    it('a paid cob shows its pix (CobCompleta) and cannot be removed', async () => {
      const { txid } = await client.createCob(cobReq({ amount: 1_234 }));
      const { endToEndId } = await sim.control.payCob(txid, {
        payer: { name: 'Empresa X', document: '11222333000181' },
      });
      const cob = await client.getCob(txid);
      assert.equal(cob.status, 'CONCLUIDA');
      assert.deepEqual(cob.pix, [
        {
          endToEndId,
          amount: 1_234,
          paidAt: cob.pix[0]?.paidAt,
          payer: { name: 'Empresa X', document: '11222333000181' },
        },
      ]);
      assert.deepEqual(bcbViolations('CobCompleta', lastCall('getCob')?.response), []);
      await assert.rejects(client.removeCob(txid), fails('REJECTED', false, 400));
    });

    it('a cob the PSP removed reads as REMOVIDA_PELO_PSP and removing it again is success', async () => {
      const { txid } = await client.createCob(cobReq());
      sim.control.expireCob(txid);
      assert.equal((await client.getCob(txid)).status, 'REMOVIDA_PELO_PSP');
      assert.equal((await client.removeCob(txid)).status, 'REMOVIDA_PELO_PSP');
    });
  });

  describe('devolução', () => {
    it('is idempotent on its id, follows the BCB schemas, and settles', async () => {
      const { txid } = await client.createCob(cobReq({ amount: 1_000 }));
      const { endToEndId } = await sim.control.payCob(txid);
      const a = await client.requestRefund(endToEndId, 'rfA1', 400, 'defeito');
      const b = await client.requestRefund(endToEndId, 'rfA1', 400, 'defeito');
      assert.equal(a.rtrId, b.rtrId);
      assert.equal(a.status, 'EM_PROCESSAMENTO');
      assert.equal(a.amount, 400);
      assert.equal(sim.control.calls.filter((c) => c.route === 'refund' && c.status === 201).length >= 2, true);
      const call = lastCall('refund');
      assert.deepEqual(bcbViolations('DevolucaoSolicitada', call?.request), []);
      assert.deepEqual(bcbViolations('Devolucao', call?.response), []);

      sim.control.settleRefund('rfA1', 'DEVOLVIDO');
      const settled = await client.getRefund(endToEndId, 'rfA1');
      assert.equal(settled.status, 'DEVOLVIDO');
      assert.deepEqual(bcbViolations('Devolucao', lastCall('getRefund')?.response), []);

      // 400 + 700 > 1000: refused, not retryable. The same id with another amount: refused.
      await assert.rejects(client.requestRefund(endToEndId, 'rfA2', 700), fails('REJECTED', false, 400));
      await assert.rejects(client.requestRefund(endToEndId, 'rfA1', 500), fails('REJECTED', false, 400));
      assert.equal((await client.requestRefund(endToEndId, 'rfA3', 600)).amount, 600, 'the rest is refundable');
      await assert.rejects(client.getRefund(endToEndId, 'nope'), fails('NOT_FOUND', false, 404));
    });
  });

  describe('transfers', () => {
    const req = { amount: 5_000, pixKeyType: 'EMAIL' as const, pixKey: 'dest@example.com', description: 'Saque' };

    it('one transfer per idempotency key, also under concurrent replays', async () => {
      const a = await client.sendTransfer('wd_1', req);
      const b = await client.sendTransfer('wd_1', req);
      assert.equal(b.transferId, a.transferId);
      assert.equal(a.idempotencyKey, 'wd_1');
      assert.equal(a.status, 'PROCESSING');
      const many = await Promise.all(Array.from({ length: 10 }, () => client.sendTransfer('wd_2', req)));
      assert.equal(new Set(many.map((t) => t.transferId)).size, 1);
      const atSim = [...sim.control.calls].filter((c) => c.route === 'transfer' && c.status === 201);
      assert.equal(
        atSim.filter((c) => (c.response as { idempotencyKey?: string }).idempotencyKey === 'wd_2').length,
        1,
      );

      sim.control.completeTransfer(a.transferId);
      assert.equal((await client.getTransfer(a.transferId)).status, 'COMPLETED');
      await assert.rejects(client.getTransfer('trnope'), fails('NOT_FOUND', false, 404));
    });

    it('the same key with a different transfer is rejected', async () => {
      await client.sendTransfer('wd_3', req);
      await assert.rejects(client.sendTransfer('wd_3', { ...req, amount: 5_001 }), fails('REJECTED', false, 422));
    });

    it('a malformed destination key is rejected by the acquirer', async () => {
      await assert.rejects(
        client.sendTransfer('wd_4', { ...req, pixKeyType: 'CPF', pixKey: '12345678900' }),
        fails('REJECTED', false, 400),
      );
    });
  });

  describe('PIX keys', () => {
    it('registers a key idempotently', async () => {
      const a = await client.registerPixKey('pxk_1', 'EMAIL', 'loja@example.com');
      const b = await client.registerPixKey('pxk_1', 'EMAIL', 'loja@example.com');
      assert.equal(a.id, b.id);
      assert.equal(a.status, 'PENDENTE');
      await assert.rejects(client.registerPixKey('pxk_1', 'EMAIL', 'other@example.com'), fails('REJECTED', false, 422));
    });
  });

  describe('failures are typed', () => {
    it('500 and 503 are UNAVAILABLE and retryable', async () => {
      for (const status of [500, 503]) {
        sim.control.setFaults({ failNext: { route: 'getCob', times: 1, status } });
        await assert.rejects(client.getCob('x'.repeat(30)), fails('UNAVAILABLE', true, status));
      }
    });

    it('429 is RATE_LIMITED and retryable', async () => {
      sim.control.setFaults({ failNext: { route: 'createCob', times: 1, status: 429 } });
      await assert.rejects(client.createCob(cobReq()), fails('RATE_LIMITED', true, 429));
    });

    it('400 is REJECTED and not retryable, with the problem details kept', async () => {
      sim.control.setFaults({ failNext: { route: 'createCob', times: 1, status: 400 } });
      await assert.rejects(client.createCob(cobReq()), (e: unknown) => {
        fails('REJECTED', false, 400)(e);
        assert.match((e as AcquirerError).problem?.type ?? '', /^https:\/\/pix\.bcb\.gov\.br\/api\/v2\/error\//);
        return true;
      });
      await assert.rejects(client.getCob('x'.repeat(30)), fails('NOT_FOUND', false, 404));
    });

    it('an answer slower than the client timeout is TIMEOUT and retryable', async () => {
      const quick = new HttpAcquirer({ baseUrl: sim.url, ...CLIENT, timeoutMs: 200 });
      await quick.getCob((await quick.createCob(cobReq())).txid);
      sim.control.setFaults({ latencyMs: 600 });
      // The simulator records a call once it has answered it: the client gave up at its own
      // timeout if, when it rejects, that answer has not been produced yet (an order, not a clock).
      const txid = 't'.repeat(30);
      const answered = (): number =>
        sim.control.calls.filter((c) => c.route === 'getCob' && (c.path ?? '').endsWith(txid)).length;
      await assert.rejects(quick.getCob(txid), fails('TIMEOUT', true));
      assert.equal(answered(), 0, 'gave up at the timeout, not when the answer came');
      await until(async () => answered() === 1, 'the late answer to be produced');
    });

    it('a refused connection is NETWORK and retryable', async () => {
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((r) => closed.close(() => r()));
      const nowhere = new HttpAcquirer({ baseUrl: `http://127.0.0.1:${port}`, ...CLIENT, timeoutMs: 2_000 });
      await assert.rejects(nowhere.getCob('x'.repeat(30)), fails('NETWORK', true));
    });

    it('our own invalid input is INVALID_REQUEST, not retryable, and never sent', async () => {
      const before = sim.control.calls.length;
      await assert.rejects(client.createCob(cobReq({ txid: 'short' })), fails('INVALID_REQUEST', false));
      await assert.rejects(client.createCob(cobReq({ amount: 0 })), fails('INVALID_REQUEST', false));
      await assert.rejects(client.createCob(cobReq({ amount: 12.5 })), fails('INVALID_REQUEST', false));
      await assert.rejects(client.createCob(cobReq({ expiresIn: 0 })), fails('INVALID_REQUEST', false));
      await assert.rejects(client.createCob(cobReq({ key: 'k'.repeat(78) })), fails('INVALID_REQUEST', false));
      await assert.rejects(client.requestRefund('E123', 'rf1', 100), fails('INVALID_REQUEST', false));
      await assert.rejects(client.requestRefund('E'.repeat(32), 'rf_1', 100), fails('INVALID_REQUEST', false));
      await assert.rejects(client.getCob('../oauth/token'), fails('INVALID_REQUEST', false));
      await assert.rejects(
        client.sendTransfer('', { amount: 100, pixKeyType: 'EMAIL', pixKey: 'a@b.co' }),
        fails('INVALID_REQUEST', false),
      );
      assert.equal(sim.control.calls.length, before);
    });

    it('an answer off the protocol is INVALID_RESPONSE, not retryable', async () => {
      const liar = http.createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (req.url === '/oauth/token')
          res.end(JSON.stringify({ access_token: 't', token_type: 'Bearer', expires_in: 60 }));
        else if (req.url?.startsWith('/cob/'))
          res.end(JSON.stringify({ txid: 'x', status: 'ATIVA', valor: { original: 12.34 } }));
        else res.end('not json');
      });
      await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
      try {
        const c = new HttpAcquirer({
          baseUrl: `http://127.0.0.1:${(liar.address() as AddressInfo).port}`,
          ...CLIENT,
          timeoutMs: 2_000,
        });
        await assert.rejects(c.getCob('x'.repeat(30)), fails('INVALID_RESPONSE', false, 200));
        await assert.rejects(c.getTransfer('tr1'), fails('INVALID_RESPONSE', false, 200));
      } finally {
        liar.closeAllConnections();
        await new Promise<void>((r) => liar.close(() => r()));
      }
    });
  });

  itConformsToTheBcbDocument();
});
