/**
 * Production shape with everything secured (docs/production.md "Connecting to a secured Temporal
 * cluster or Temporal Cloud", "Acquirer mTLS"): the official dev server as its own process behind
 * a TLS endpoint requiring mTLS and an API key, the acquirer simulator over HTTPS requiring a client certificate, and
 * `src/cli/api.ts` and `src/cli/worker.ts` as real processes configured only through the
 * environment (TEMPORAL_TLS_*, TEMPORAL_API_KEY, ACQUIRER_TLS_*). A charge is created (its
 * workflow started by the API's native client), paid at the acquirer, and reaches PAID through the
 * worker, whose activities call the acquirer over mTLS. Certificates are made at test time.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getTestDb } from '../support/db';
import { makeCa, writePem } from '../support/certificates';
import { startStack, waitUntil, type Stack, type ApiProc } from '../../tools/harness/src/stack';
import { call, readyMerchant } from '../../tools/harness/src/client';

const SERVER_NAME = 'temporal.pixflow.test';
const API_KEY = 'e2e-temporal-api-key-0123456789';

describe('production shape over TLS: Temporal mTLS + API key, acquirer mTLS (real processes)', function () {
  this.timeout(300_000);
  let dir: string;
  let stack: Stack;
  let api: ApiProc;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-secured-'));
    const temporalCa = await makeCa('temporal CA');
    const acquirerCa = await makeCa('acquirer CA');
    const temporalServer = await temporalCa.issue({ commonName: SERVER_NAME, dnsNames: [SERVER_NAME] });
    const temporalClient = await temporalCa.issue({ commonName: 'pixflow', usage: 'client' });
    const acquirerServer = await acquirerCa.issue({ commonName: 'localhost', ips: ['127.0.0.1'] });
    const acquirerClient = await acquirerCa.issue({ commonName: 'pixflow', usage: 'client' });
    const f = writePem(dir, {
      'temporal-ca.pem': temporalCa.certPem,
      'temporal-server.pem': temporalServer.certPem,
      'temporal-server-key.pem': temporalServer.keyPem,
      'temporal-client.pem': temporalClient.certPem,
      'temporal-client-key.pem': temporalClient.keyPem,
      'acquirer-ca.pem': acquirerCa.certPem,
      'acquirer-server.pem': acquirerServer.certPem,
      'acquirer-server-key.pem': acquirerServer.keyPem,
      'acquirer-client.pem': acquirerClient.certPem,
      'acquirer-client-key.pem': acquirerClient.keyPem,
    });
    const { url } = await getTestDb();
    stack = await startStack({
      databaseUrl: url,
      temporalSecurity: {
        tls: {
          cert: fs.readFileSync(f['temporal-server.pem']),
          key: fs.readFileSync(f['temporal-server-key.pem']),
          clientCa: fs.readFileSync(f['temporal-ca.pem']),
        },
        apiKey: API_KEY,
      },
      simulator: {
        tls: {
          cert: fs.readFileSync(f['acquirer-server.pem']),
          key: fs.readFileSync(f['acquirer-server-key.pem']),
          clientCa: fs.readFileSync(f['acquirer-ca.pem']),
        },
      },
      env: {
        TEMPORAL_TLS_CA_PATH: f['temporal-ca.pem'],
        TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
        TEMPORAL_TLS_CERT_PATH: f['temporal-client.pem'],
        TEMPORAL_TLS_KEY_PATH: f['temporal-client-key.pem'],
        TEMPORAL_API_KEY: API_KEY,
        ACQUIRER_TLS_CA_PATH: f['acquirer-ca.pem'],
        ACQUIRER_TLS_CERT_PATH: f['acquirer-client.pem'],
        ACQUIRER_TLS_KEY_PATH: f['acquirer-client-key.pem'],
      },
    });
    assert.match(stack.simulator.url, /^https:/);
    api = await stack.startApi();
    await stack.startWorker();
  });

  after(async () => {
    await stack?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates a charge, and the worker takes it to PAID once the acquirer reports the payment', async () => {
    const { knex } = await getTestDb();
    const m = await readyMerchant(api.url);
    const created = await call<{ charge: { id: string } }>(api.url, 'POST', '/v1/charges', {
      token: m.apiKey,
      body: { amount: 2_500, description: 'secured e2e' },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.charge.id;
    const row: { txid: string } = await knex('charges').where({ id }).first('txid');
    // The cob was created at the acquirer, over mTLS, before it can be paid.
    await waitUntil(
      () => stack.simulator.control.calls.some((c) => c.route === 'createCob' && c.status < 300),
      150_000,
      'the cob at the acquirer',
    );
    await stack.simulator.control.payCob(row.txid);
    await waitUntil(
      async () => ((await knex('charges').where({ id }).first('status')) as { status: string }).status === 'PAID',
      150_000,
      'the charge PAID',
    );
  });
});
